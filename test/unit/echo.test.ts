import { describe, expect, it } from "vitest";
import { echo, plainText, shownText } from "../../src/core/echo.js";
import { NotFound } from "../../src/core/errors.js";
import { problemResponse } from "../../src/core/problem.js";
import { redact } from "../../src/core/redact.js";
import { SecretIndex } from "../../src/core/secret-index.js";

// What a refusal quotes of the request is redacted where the refusal is answered, before it is
// shortened (core/echo.ts): the pure part of issue 23 §8; test/control/echoed-secrets.test.ts
// plants secrets in every echo point over HTTP.
const LONG = "ss_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"; // 67 chars
const SHORT = "pw1";

function secretsOf(...values: string[]) {
  const index = new SecretIndex();
  for (const v of values) index.add(v);
  return index.view();
}

describe("echo", () => {
  const secrets = secretsOf(LONG, SHORT);

  it("redacted echo: a secret longer than the cut is redacted whole, never shortened into clear", () => {
    // Cut first (as before), the first 40 characters of the secret would have been shown.
    expect(shownText(`no file '${echo(LONG, 40)}'`, secrets)).toBe(`no file '${redact(LONG)}'`);
    expect(shownText(`no file '${echo(`${LONG}.css`, 40)}'`, secrets)).toBe(`no file '${`${redact(LONG)}.css`.slice(0, 40)}'`);
  });

  it("redacted echo: a short secret is hidden where it is the whole echoed value, and only there", () => {
    expect(shownText(`variant '${echo(SHORT)}' is not known`, secrets)).toBe(`variant '${redact(SHORT)}' is not known`);
    expect(shownText(`variant '${echo("pw12")}' is not known`, secrets)).toBe("variant 'pw12' is not known");
  });

  it("redacted echo: a secret or a JWT quoted without echo is hidden all the same (the net over the whole text)", () => {
    const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl";
    expect(shownText(`got '${LONG}' and ${jwt}.`, secrets)).toBe(`got '${redact(LONG)}' and ${redact(jwt)}.`);
  });

  it("echoed text is printable and at most its length; a request cannot forge the marks", () => {
    expect(plainText(`a '${echo("x\r\ny\u00e9", 64)}' b`)).toBe("a 'x??y?' b");
    expect(plainText(`'${echo("abcdef", 3)}'`)).toBe("'abc'");
    // Marks sent by the request are not marks: they show as '?' and open nothing.
    const forged = `\uE0002\uE001${LONG}\uE002`;
    expect(plainText(`'${echo(forged, 64)}'`)).toBe(`'${`?2?${LONG}?`.slice(0, 64)}'`);
    expect(shownText(`'${echo(forged, 80)}'`, secrets)).not.toContain(LONG);
  });

  it("a refusal's description reads plain without the secrets; its answer shows it redacted", () => {
    const err = new NotFound(`No merchant with api_key or id '${echo(LONG, 64)}'.`);
    expect(err.description).toBe(`No merchant with api_key or id '${LONG.slice(0, 64)}'.`);
    const body = JSON.parse(problemResponse(err, "/__sandbox/tokens", secrets).body as string);
    expect(body.detail).toBe(`No merchant with api_key or id '${redact(LONG)}'.`);
    expect(body.error_description).toBe(body.detail);
  });

  it("linear scan: 10,000 echoes in one text are each shown once", () => {
    const text = Array.from({ length: 10_000 }, () => `'${echo(SHORT)}'`).join(",");
    const shown = shownText(text, secrets);
    expect(shown.split(redact(SHORT)).length - 1).toBe(10_000);
    expect(shown).not.toMatch(/[\uE000-\uE002]/);
  });
});
