import type { AnswerFacts, AnswerShaper, RefusalGroup } from "../core/answer-shaper.js";
import { SandboxError } from "../core/errors.js";
import type { SandboxResponse } from "../core/http-types.js";
import { asRefusal, problemResponse } from "../core/problem.js";
import type { SecretView } from "../core/secret-index.js";

/**
 * The answers to refusals, made once per shape and kept: a client repeating a mistake (an unknown
 * path, an expired token, a 404 a load test hits on purpose) gets the bytes made the first time,
 * instead of a new problem+json body serialised per request. An answer is the same for the same
 * refusal (status, code, OAuth error, challenge, scope, description), path (`instance`) and
 * response profile (its shaper renders templates of those values alone), so that is the key.
 * Refusals that carry headers of their own (Allow, Retry-After) or meet route headers (the
 * deprecated login's) are made every time, as before, and so are those of a profile whose answers
 * differ per request (a request id, the time).
 *
 * The key is the refusal as thrown, before its description is redacted, and answers are kept and
 * taken only under the current secrets view, the one they were made with: a view is replaced
 * whenever a secret comes or goes, so while it is current the redaction of the same text is the
 * same, and a hit scans nothing. A request holding an older view (it waited for its body while a
 * secret came) gets its answer made anew, redacted as it always was.
 *
 * Bounded: at most MAX_KEPT answers per response profile in use (each a key and a body of about
 * 1 KB: some 0.5 MB for one profile), the oldest dropped first. Each caller gets its own response and headers objects, so nothing a
 * caller does to an answer reaches the next one.
 */
export class RefusalAnswers {
  static readonly MAX_KEPT = 256;
  /** Without a profile's shaper (the default oauth answers). */
  private readonly unshaped = new Map<string, KeptAnswer>();
  /** Per shaper, held no longer than its scenario (a session's) holds it. */
  private readonly shaped = new WeakMap<AnswerShaper, Map<string, KeptAnswer>>();

  /** `currentSecrets`: the secrets view of this moment (the merchants' index). */
  constructor(private readonly currentSecrets: () => SecretView) {}

  /**
   * The answer to `thrown` at `path`: the shaper's when it shapes refusals, else problem+json, its
   * description as it is shown (echoes redacted against `secrets`). A kept answer is taken only
   * under the current view, the very one it was redacted with.
   */
  answer(
    thrown: unknown,
    path: string,
    shaper: AnswerShaper | undefined,
    routeHeaders: Record<string, string> | undefined,
    secrets: SecretView,
    facts: AnswerFacts,
    group: RefusalGroup | undefined,
  ): SandboxResponse {
    const make = (refusal: unknown, headers: Record<string, string> | undefined) =>
      shaper?.refusal(refusal, path, secrets, headers, facts, group) ?? problemResponse(refusal, path, secrets, headers);
    if (routeHeaders !== undefined || !(thrown instanceof SandboxError) || hasOwnHeaders(thrown) || shaper?.perRequest)
      return make(thrown, routeHeaders);
    if (secrets !== this.currentSecrets()) return make(thrown, undefined);
    const key = `${thrown.status}\0${thrown.code}\0${thrown.error ?? ""}\0${thrown.challenge ?? ""}\0${thrown.scope ?? ""}\0${group ?? ""}\0${path}\0${thrown.said}`;
    let answers = shaper === undefined ? this.unshaped : this.shaped.get(shaper);
    if (!answers) {
      answers = new Map();
      this.shaped.set(shaper!, answers);
    }
    let kept = answers.get(key);
    if (kept?.secrets.deref() !== secrets) {
      kept = { secrets: new WeakRef(secrets), response: make(asRefusal(thrown, secrets), undefined) };
      answers.delete(key);
      if (answers.size >= RefusalAnswers.MAX_KEPT) answers.delete(answers.keys().next().value!);
      answers.set(key, kept);
    }
    const made = kept.response;
    return { status: made.status, headers: { ...made.headers }, body: made.body };
  }
}

/**
 * An answer and the secrets view its description was redacted against, held weakly: a view that
 * is no longer current must not keep the secrets of ended sessions (their automata) in memory.
 */
interface KeptAnswer {
  secrets: WeakRef<SecretView>;
  response: SandboxResponse;
}

function hasOwnHeaders(err: SandboxError): boolean {
  for (const _ in err.headers) return true;
  return false;
}
