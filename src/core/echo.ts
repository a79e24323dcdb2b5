import { printable } from "./printable.js";
import { redactValue } from "./redact.js";
import type { SecretView } from "./secret-index.js";

/**
 * Text a request sent, quoted back in a refusal ("There is no file '…'", "Origin '…' is not the
 * sandbox's own"). A refusal is made where the mistake is found, often without the secrets at hand
 * (the core, a schema explainer), and a value shortened there could no longer be recognised as a
 * secret (a cut secret is not found). So the value goes into the description whole, between marks,
 * and is shown in one place, where every refusal is answered (problem.ts `asRefusal`, which needs
 * the secrets to be called at all): redacted (redact.ts `redactValue`), then made printable and
 * shortened. The rest of the description is redacted too, as one text, for a value quoted without
 * `echo`: a JWT or a secret anywhere in it is hidden all the same (only a short secret, under
 * MIN_ANYWHERE_LENGTH, needs the marks: alone it is found only as a whole value).
 */

const OPEN = "\uE000";
const CUT = "\uE001";
const CLOSE = "\uE002";
/** The marks are Unicode private-use characters: no request text keeps them (see `echo`). */
const MARKS = /[\uE000-\uE002]/g;

/** `value` marked for showing: the description shows at most `max` printable characters of its redaction. */
export function echo(value: string, max = 64): string {
  return `${OPEN}${max}${CUT}${value.replace(MARKS, "?")}${CLOSE}`;
}

/** A description as an answer shows it: each echoed value redacted then shortened, and the whole redacted. */
export function shownText(text: string, secrets: SecretView): string {
  return redactValue(
    rendered(text, (value) => redactValue(value, secrets)),
    secrets,
  );
}

/**
 * A description or message shown outside any answer (the CLI's own problems with a file it read):
 * echoed values shortened, with nothing to redact against.
 */
export function plainText(text: string): string {
  return rendered(text, (value) => value);
}

/** One pass over the text: each marked value as `reveal` makes it, printable and shortened. */
function rendered(text: string, reveal: (value: string) => string): string {
  if (!text.includes(OPEN)) return text.includes(CLOSE) || text.includes(CUT) ? text.replace(MARKS, "?") : text;
  let out = "";
  let at = 0;
  for (let open = text.indexOf(OPEN); open >= 0; open = text.indexOf(OPEN, at)) {
    const cut = text.indexOf(CUT, open);
    const close = cut < 0 ? -1 : text.indexOf(CLOSE, cut);
    if (close < 0) break;
    const max = Number(text.slice(open + 1, cut));
    out += text.slice(at, open) + printable(reveal(text.slice(cut + 1, close)), Number.isInteger(max) && max > 0 ? max : 64);
    at = close + 1;
  }
  return (out + text.slice(at)).replace(MARKS, "?");
}
