/**
 * The base of every refusal (errors.ts has the cases): a stable `code` from the catalogue, the
 * HTTP status, the OAuth `error` member where one applies, and a description that tells the caller
 * how to fix the request, with what it quotes of the request marked for redaction (echo.ts).
 */

import { plainText } from "./echo.js";
import type { ErrorCode, OAuthError } from "./error-catalogue.js";

export interface SandboxErrorInit {
  /** Extra response headers (`Allow`, `Retry-After` …). `WWW-Authenticate` is built by the mapper. */
  headers?: Record<string, string>;
  /**
   * Which challenge to send with a 401/403: bearer (RFC 6750), bearer without the error code and
   * description (a request that carried no token at all, RFC 6750 §3.1), or the api-key scheme.
   */
  challenge?: "bearer" | "bare-bearer" | "api-key";
  /** For `insufficient_scope`: the scope that was needed. */
  scope?: string;
}

/**
 * The prototype of every refusal: `Error.prototype` in its chain, so a refusal is `instanceof
 * Error` and prints as one, but built without running Error's constructor, which is what captures
 * a stack trace. A refusal is an expected answer, not a bug, and capturing a stack for it was the
 * largest single cost of answering a refused request. Lowering the global `Error.stackTraceLimit`
 * around `super()` did the same but changed state every module in the process shares (and lost
 * the stack of any error built while it was 0); skipping the constructor touches nothing global.
 */
function Refusal(): void {}
Refusal.prototype = Object.create(Error.prototype, {
  constructor: { value: Refusal, writable: true, configurable: true },
});
const StacklessError = Refusal as unknown as new () => Error;

export abstract class SandboxError extends StacklessError {
  /** The stable code, from the catalogue (error-catalogue.ts): a code that is not there does not compile. */
  abstract readonly code: ErrorCode;
  abstract readonly status: number;
  /** The OAuth error code, or undefined when RFC 6750 says to send none (no credentials at all). */
  abstract readonly error: OAuthError | undefined;
  readonly headers: Record<string, string>;
  readonly challenge: SandboxErrorInit["challenge"];
  readonly scope: string | undefined;

  /**
   * The description as written, with what it quotes of the request marked (`echo`, echo.ts): the
   * problem mapper shows it redacted (problem.ts `asRefusal`).
   */
  readonly said: string;

  constructor(description: string, init: SandboxErrorInit = {}) {
    super();
    this.said = description;
    this.headers = init.headers ?? {};
    this.challenge = init.challenge;
    this.scope = init.scope;
  }

  /**
   * The description for a reader without the secrets at hand (a test, a log of a thrown value):
   * the request's echoes shortened but not redacted. An answer shows `asRefusal`'s, never this.
   */
  get description(): string {
    return plainText(this.said);
  }

  /**
   * The same refusal saying `said` instead (the description an answer shows, echo.ts): a copy with
   * every own field, of the same class, so the mapper reads it as it would the original.
   */
  withDescription(said: string): this {
    return Object.create(Object.getPrototypeOf(this), {
      ...Object.getOwnPropertyDescriptors(this),
      said: { value: said, enumerable: true },
    }) as this;
  }

  /** The class name, read from the prototype: nothing to store per refusal. */
  override get name(): string {
    return this.constructor.name;
  }

  /** The description, as `Error#message` for anything that reads a thrown value that way. */
  override get message(): string {
    return this.description;
  }
}
