import type { SandboxResponse } from "./http-types.js";
import type { TokenFormat } from "./token-format.js";
import type { SecretView } from "./secret-index.js";

/**
 * What a response profile (src/profiles/) makes of the merchant API's answers: the same facts in
 * the provider's wire shape. An endpoint hands the facts of its answer to the shaper of the
 * merchant's scenario and falls back to its own answer when there is no shaper (the `oauth`
 * profile, the default) or the profile leaves that answer alone (undefined). Nothing here changes
 * what is decided: statuses, codes in the journal and report, rules and findings stay the sandbox's.
 */

/** The token just issued by the token exchange or the login. */
export interface IssuedToken {
  accessToken: string;
  /** Lifetime in seconds. */
  expiresIn: number;
  /** When the token says it was issued (seconds, on the scenario clock). */
  issuedAt: number;
  /** Space-separated scopes ("" for the login's token). */
  scope: string;
}

/**
 * What every answer of one request may print besides its own facts: the method and path, the
 * scenario clock's now, and one request id (made on first use, then the same in every header and
 * body of the answer). Made by the pipeline for each request; nothing is computed unless a
 * profile's template asks for it.
 */
export interface AnswerFacts {
  readonly method: string;
  /** The path as routed and shown (redacted, under a session's base URL). */
  readonly path: string;
  /** The scenario clock at the answer, in milliseconds (read once). */
  nowMs(): number;
  /** This request's id in the profile's shape; the same on every call. */
  requestId(make: (nowMs: number) => string): string;
}

export function answerFacts(method: string, path: string, clock: { now(): number }): AnswerFacts {
  return new RequestFacts(method, path, clock);
}

/**
 * One object per request, its methods on the prototype: the pipeline makes one for every request,
 * shaped by a profile or not, so it holds no closures of its own.
 */
class RequestFacts implements AnswerFacts {
  private now: number | undefined;
  private id: string | undefined;

  constructor(
    readonly method: string,
    readonly path: string,
    private readonly clock: { now(): number },
  ) {}

  nowMs(): number {
    this.now ??= this.clock.now();
    return this.now;
  }

  requestId(make: (nowMs: number) => string): string {
    this.id ??= make(this.nowMs());
    return this.id;
  }
}

/** The endpoint groups a profile's refusals may differ by. */
export type RefusalGroup = "token" | "protected" | "paymentInit" | "login";

/** The group of a route, by its name (an EndpointName: typed as text so this file imports nothing of context.ts, which imports it); undefined for paths of no group. */
export function refusalGroupOf(endpoint: string): RefusalGroup | undefined {
  switch (endpoint) {
    case "token":
      return "token";
    case "payment":
    case "cashout":
      return "protected";
    case "payment-init":
      return "paymentInit";
    case "login":
      return "login";
    default:
      return undefined;
  }
}

/** A JSON Schema, as the OpenAPI document writes it. */
export type JsonSchema = Record<string, unknown>;

/** A body a profile sends: its media type and the schema of what its template renders. */
export interface ShapedContent {
  contentType: string;
  schema: JsonSchema;
}

/** A success answer as a profile sends it (the OpenAPI document's response for it). */
export interface ShapedAnswer {
  status: number;
  /** Undefined: no body at all (no bytes, no Content-Type). */
  content: ShapedContent | undefined;
  /** Every header the profile's answer sends, by name as written, with the schema of its value. */
  headers: Record<string, JsonSchema>;
}

/** One refusal as a profile sends it, for one code on one endpoint group. */
export interface ShapedRefusal {
  status: number;
  content: ShapedContent | undefined;
  /** The challenge: `keep` (the sandbox's RFC 6750 one), none, or the schema of the profile's template. */
  challenge: "keep" | "omit" | JsonSchema;
  /** Its other headers (refusal, group and code layers, X-Sandbox-Explanation), by name as written. */
  headers: Record<string, JsonSchema>;
}

/**
 * What a profile sends, as JSON Schemas, for the OpenAPI document: per-request values as formats
 * and patterns (a request id by its shape's pattern, a time by its format), never as constants.
 */
export interface ShapedSchemas {
  /** The profile-wide headers, on every answer of the merchant API but the JWKS's. */
  headers: Record<string, JsonSchema>;
  token?: ShapedAnswer;
  login?: ShapedAnswer;
  paymentInit?: ShapedAnswer;
  protected?: ShapedAnswer;
  /**
   * The refusal of `code` at `status` (its catalogue status, or one of them), carrying one of the
   * OAuth `errors` its catalogue entry lists (or none), on a route of `group`; undefined when the
   * profile leaves it to the sandbox (problem+json).
   */
  refusal(group: RefusalGroup | undefined, code: string, status: number, errors: readonly string[]): ShapedRefusal | undefined;
}

export interface AnswerShaper {
  /** The profile's name (`lexik`, a file's `name`). */
  readonly profile: string;
  /**
   * Whether its answers differ per request (a request id, now, the method): a refusal is then
   * rendered every time instead of kept and reused (app/refusal-answers.ts).
   */
  readonly perRequest: boolean;
  token(issued: IssuedToken, headers: Record<string, string>, facts: AnswerFacts): SandboxResponse | undefined;
  login(issued: IssuedToken, headers: Record<string, string>, facts: AnswerFacts): SandboxResponse | undefined;
  /** `body`: today's payment/init body, member by member. */
  paymentInit(body: Record<string, unknown>, headers: Record<string, string>, facts: AnswerFacts): SandboxResponse | undefined;
  /** `body`: today's placeholder body of a protected call. */
  protectedCall(body: Record<string, unknown>, operation: string, facts: AnswerFacts): SandboxResponse | undefined;
  /**
   * Any thrown value, as the problem mapper takes it (core/problem.ts), with the secrets its echoes
   * are redacted against, refused on a route of `group` (undefined: a path of no group, the 404).
   * Carries `X-Sandbox-Explanation`.
   */
  refusal(
    thrown: unknown,
    instance: string,
    secrets: SecretView,
    extraHeaders: Record<string, string> | undefined,
    facts: AnswerFacts,
    group: RefusalGroup | undefined,
  ): SandboxResponse | undefined;
  /** The profile-wide headers, onto every answer of the merchant API (shaped or not). */
  finish(response: SandboxResponse, facts: AnswerFacts): SandboxResponse;
  schemas(): ShapedSchemas;
}

/** A profile as a scenario carries it: its renderer, and what its jwt section sets for the scenario. */
export interface ChosenProfile {
  readonly name: string;
  readonly shaper: AnswerShaper | undefined;
  /** The jwt section's ttl, alg, leeway, issuer and audience, under the scenario file's own settings. */
  readonly settings: { tokenTtl?: string | number; algorithm?: string; leeway?: string | number; issuer?: string; audience?: string };
  /** How the scenario's tokens are written (header, claims); undefined: the sandbox's default. */
  readonly tokenFormat?: TokenFormat;
}

/** Picks a scenario's profile: the session's choice, else the file's settings.profile, else the sandbox's. */
export type ProfileChooser = (
  scenario: { name: string; settings?: { profile?: string | undefined } },
  source: string,
  requested?: string,
) => ChosenProfile | Promise<ChosenProfile>;
