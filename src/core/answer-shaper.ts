import type { SandboxResponse } from "./http-types.js";
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

/** JSON Schemas of the shaped answers, for the OpenAPI document (absent: today's shape). */
export interface ShapedSchemas {
  token?: { status: number; contentType: string; schema: Record<string, unknown> };
  login?: { status: number; contentType: string; schema: Record<string, unknown> };
  paymentInit?: { status: number; contentType: string; schema: Record<string, unknown> };
  refusal?: { contentType: string; schema: Record<string, unknown> };
  /** Whether refusals keep the RFC 6750 WWW-Authenticate challenge. */
  wwwAuthenticate: boolean;
}

export interface AnswerShaper {
  /** The profile's name (`lexik`, a file's `name`). */
  readonly profile: string;
  token(issued: IssuedToken, headers: Record<string, string>): SandboxResponse | undefined;
  login(issued: IssuedToken, headers: Record<string, string>): SandboxResponse | undefined;
  /** `body`: today's payment/init body, member by member. */
  paymentInit(body: Record<string, unknown>, headers: Record<string, string>): SandboxResponse | undefined;
  /** `body`: today's placeholder body of a protected call. */
  protectedCall(body: Record<string, unknown>, operation: string): SandboxResponse | undefined;
  /** Any thrown value, as the problem mapper takes it (core/problem.ts), with the secrets its echoes are redacted against. */
  refusal(thrown: unknown, instance: string, secrets: SecretView, extraHeaders?: Record<string, string>): SandboxResponse | undefined;
  schemas(): ShapedSchemas;
}

/** A profile as a scenario carries it: its renderer, and the token settings its jwt section sets for the scenario. */
export interface ChosenProfile {
  readonly name: string;
  readonly shaper: AnswerShaper | undefined;
  /** The jwt section's ttl and alg, under the scenario file's own settings. */
  readonly settings: { tokenTtl?: string | number; algorithm?: string };
}

/** Picks a scenario's profile: the session's choice, else the file's settings.profile, else the sandbox's. */
export type ProfileChooser = (
  scenario: { name: string; settings?: { profile?: string | undefined } },
  source: string,
  requested?: string,
) => ChosenProfile | Promise<ChosenProfile>;
