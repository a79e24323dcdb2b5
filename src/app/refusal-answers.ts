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
 * Bounded: at most MAX_KEPT answers per response profile in use (each a key and a body of about
 * 1 KB: some 0.5 MB for one profile), the oldest dropped first. Each caller gets its own response and headers objects, so nothing a
 * caller does to an answer reaches the next one.
 */
export class RefusalAnswers {
  static readonly MAX_KEPT = 256;
  /** Without a profile's shaper (the default oauth answers). */
  private readonly unshaped = new Map<string, SandboxResponse>();
  /** Per shaper, held no longer than its scenario (a session's) holds it. */
  private readonly shaped = new WeakMap<AnswerShaper, Map<string, SandboxResponse>>();

  /**
   * The answer to `thrown` at `path`: the shaper's when it shapes refusals, else problem+json. Its
   * description is made as it is shown (echoes redacted against `secrets`) before it is looked up,
   * so a kept answer never holds what another moment's secrets would hide.
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
    const err = asRefusal(thrown, secrets);
    const key = `${err.status}\0${err.code}\0${err.error ?? ""}\0${err.challenge ?? ""}\0${err.scope ?? ""}\0${group ?? ""}\0${path}\0${err.description}`;
    let answers = shaper === undefined ? this.unshaped : this.shaped.get(shaper);
    if (!answers) {
      answers = new Map();
      this.shaped.set(shaper!, answers);
    }
    let made = answers.get(key);
    if (!made) {
      made = make(err, undefined);
      if (answers.size >= RefusalAnswers.MAX_KEPT) answers.delete(answers.keys().next().value!);
      answers.set(key, made);
    }
    return { status: made.status, headers: { ...made.headers }, body: made.body };
  }
}

function hasOwnHeaders(err: SandboxError): boolean {
  for (const _ in err.headers) return true;
  return false;
}
