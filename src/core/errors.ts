/**
 * One error type for every way a request can be refused. Each case is a class with a stable
 * `code` (for tests and clients to switch on), the HTTP status, the OAuth `error` member where one
 * applies, and a `description` that tells the caller how to fix the request.
 *
 * Descriptions must never contain a secret, a password, a payment token or a JWT in clear: quote
 * what the request sent with `echo()` (echo.ts), never shortened first, and the single mapper to a
 * response (`problem.ts`) redacts it with the secrets of the moment; a secret the sandbox itself
 * names goes through `redact()` first.
 */

import { echo } from "./echo.js";
import type { CodeWith, ErrorCode, OAuthError } from "./error-catalogue.js";
import { SandboxError, type SandboxErrorInit } from "./sandbox-error.js";

export type { ErrorCode, OAuthError } from "./error-catalogue.js";
export { SandboxError, type SandboxErrorInit } from "./sandbox-error.js";

/** 400: the request is malformed (bad JSON, missing credential, conflicting values …). */
export class InvalidRequest extends SandboxError {
  readonly status = 400;
  readonly error = "invalid_request" as const;
  constructor(
    readonly code: CodeWith<400, "invalid_request">,
    description: string,
    init?: SandboxErrorInit,
  ) {
    super(description, init);
  }
}

/** 401 on the token endpoint: unknown api_key, wrong api_secret, disabled merchant. */
export class InvalidClient extends SandboxError {
  readonly error = "invalid_client" as const;
  constructor(
    readonly code: CodeWith<401 | 403, "invalid_client">,
    description: string,
    readonly status: 401 | 403 = 401,
  ) {
    super(description, { challenge: "api-key" });
  }
}

/** 401 with no error code: the request carried no credentials at all (RFC 6750 §3.1). */
export class MissingCredentials extends SandboxError {
  readonly status = 401;
  readonly error = undefined;
  readonly code = "credentials_missing";
  constructor(description: string) {
    super(description, { challenge: "bearer" });
  }
}

/**
 * 401 from the deprecated login: unknown e-mail, wrong password, disabled merchant. Lexik sends no
 * challenge, so neither does this. The login answers it in Lexik's own body unless a response
 * profile shapes it (endpoints/login-check.ts).
 */
export class LoginRejected extends SandboxError {
  readonly status = 401;
  readonly error = "invalid_client" as const;
  readonly code = "login_invalid_credentials";
}

/** 401 invalid_token: expired, revoked, tampered, foreign or the wrong kind of token. */
export class InvalidToken extends SandboxError {
  readonly status = 401;
  readonly error = "invalid_token" as const;
  constructor(
    readonly code: CodeWith<401, "invalid_token">,
    description: string,
    /** When the refused token expired (seconds), where that is why: a profile may print it. */
    readonly tokenExpiresAt?: number,
  ) {
    super(description, { challenge: "bearer" });
  }
}

/**
 * The deprecated login's token on payment or cashout while the `loginToken` setting says `refused`:
 * the same answer as any token that is not an access token; its own class only so that the
 * pipeline can journal that a login token was used.
 */
export class LoginTokenRefused extends InvalidToken {
  constructor(description: string) {
    super("token_not_access_token", description);
  }
}

/** 403 insufficient_scope: a valid token that lacks the scope the endpoint needs. */
export class InsufficientScope extends SandboxError {
  readonly status = 403;
  readonly error = "insufficient_scope" as const;
  readonly code = "insufficient_scope";
  constructor(scope: string, description: string) {
    super(description, { challenge: "bearer", scope });
  }
}

/** 405: a method the route does not serve; `Allow` lists those it does (RFC 9110 §15.5.6). */
export class MethodNotAllowed extends SandboxError {
  readonly status = 405;
  readonly error = "method_not_allowed" as const;
  readonly code = "method_not_allowed";
  constructor(method: string, path: string, allowed: string[]) {
    const choices = allowed.length > 2 ? `${allowed.slice(0, -1).join(", ")} or ${allowed.at(-1)}` : allowed.join(" or ");
    super(`${echo(method, 32)} is not allowed on ${path}. Use ${choices}.`, {
      headers: { allow: allowed.join(", ") },
    });
  }
}

export class UnsupportedMediaType extends SandboxError {
  readonly status = 415;
  readonly error = "unsupported_media_type" as const;
  readonly code = "unsupported_media_type";
}

export class PayloadTooLarge extends SandboxError {
  readonly status = 413;
  readonly error = "payload_too_large" as const;
  readonly code = "payload_too_large";
}

export class NotFound extends SandboxError {
  readonly status = 404;
  readonly error = "not_found" as const;
  readonly code = "not_found";
}

/** 404 for a path under `/s/{session_id}` whose session does not exist (ended, reaped, never created). */
export class SessionUrlUnknown extends SandboxError {
  readonly status = 404;
  readonly error = "not_found" as const;
  readonly code = "session_url_unknown";
}

/**
 * 401 for a request under one session's base URL with the credentials of another merchant (another
 * session's, or one outside any session). The challenge is the endpoint's own: the api-key scheme on
 * the token endpoint, none on the login (Lexik sends none), bearer elsewhere.
 */
export class SessionCredentialsMismatch extends SandboxError {
  readonly status = 401;
  readonly code = "session_credentials_mismatch";
  readonly error: "invalid_client" | "invalid_token";
  constructor(description: string, challenge: "bearer" | "api-key" | undefined) {
    super(description, challenge ? { challenge } : {});
    this.error = challenge === "bearer" ? "invalid_token" : "invalid_client";
  }
}

export class Gone extends SandboxError {
  readonly status = 410;
  readonly error = "gone" as const;
  readonly code: CodeWith<410, "gone">;
  constructor(code: CodeWith<410, "gone">, description: string, init?: SandboxErrorInit) {
    super(description, init);
    this.code = code;
  }
}

/** 500 for a bug of ours. The description never echoes the underlying message, which could hold input. */
export class InternalError extends SandboxError {
  readonly status = 500;
  readonly error = "server_error" as const;
  readonly code = "internal_error";
}

/**
 * An error answer scripted by a scenario rule (an outage, a rate limit …). The description says it
 * is simulated and by which rule, so a person reading a CI log is never misled.
 */
export class SimulatedFailure extends SandboxError {
  readonly status: number;
  readonly code: ErrorCode;
  readonly error: OAuthError | undefined;
  constructor(status: number, description: string, headers: Record<string, string>) {
    super(description, { headers });
    this.status = status;
    this.code = status === 503 ? "service_unavailable" : status === 429 ? "rate_limited" : `simulated_${status}`;
    this.error = status === 503 ? "temporarily_unavailable" : status >= 500 ? "server_error" : status === 429 ? "rate_limited" : undefined;
  }
}

/** 500 for a scenario that cannot do what it says (a response template that cannot be filled). */
export class ScenarioFault extends SandboxError {
  readonly status = 500;
  readonly error = "server_error" as const;
  readonly code = "scenario_fault";
}

/** 429 when the sandbox holds as many sessions as it may (bounded memory). */
export class TooManySessions extends SandboxError {
  readonly status = 429;
  readonly error = "rate_limited" as const;
  readonly code = "too_many_sessions";
}

/** 429 when a session holds as many pending `next` rules as it may (bounded memory). */
export class SessionActionRulesFull extends SandboxError {
  readonly status = 429;
  readonly error = "rate_limited" as const;
  readonly code = "session_action_rules_full";
}

/** 429 when the sandbox holds as many open event streams as it may (bounded memory). */
export class TooManySubscribers extends SandboxError {
  readonly status = 429;
  readonly error = "rate_limited" as const;
  readonly code = "too_many_subscribers";
}

/**
 * 401 on the control plane when an admin token is set and the request lacks it or sends a wrong
 * one. Only a wrong token's challenge says error="invalid_token": a request without any gets a bare
 * `Bearer realm="merchant-api"` (RFC 6750 §3.1). The body's `error` stays the code's one.
 */
export class AdminTokenRequired extends SandboxError {
  readonly status = 401;
  readonly error = "invalid_token" as const;
  readonly code = "admin_token_required";
  constructor(description: string, tokenSent: boolean) {
    // A 401 always carries a challenge (RFC 9110 §15.5.2): the admin token is a bearer token.
    super(description, { challenge: tokenSent ? "bearer" : "bare-bearer" });
  }
}

/**
 * 403 on the control plane for a request a web page made: an Origin that is not the sandbox's own,
 * `Origin: null` or `Sec-Fetch-Site: cross-site`. The control plane is for scripts and CI.
 */
export class CrossSiteRequest extends SandboxError {
  readonly status = 403;
  readonly error = "access_denied" as const;
  readonly code = "cross_site_request";
}

/** 403 on the control plane for a Host the sandbox does not answer to (a DNS-rebinding page's). */
export class HostNotAllowed extends SandboxError {
  readonly status = 403;
  readonly error = "access_denied" as const;
  readonly code = "host_not_allowed";
}

/** 415 on the control plane: a POST not declared as JSON, which a web page could send unasked. */
export class ControlJsonRequired extends SandboxError {
  readonly status = 415;
  readonly error = "unsupported_media_type" as const;
  readonly code = "control_json_required";
}

/** An Expect header other than 100-continue (RFC 9110 §10.1.1). */
export class ExpectationFailed extends SandboxError {
  readonly status = 417;
  readonly error = "invalid_request" as const;
  readonly code = "expectation_unsupported";
}

/** The request's header section is over the server's limit (RFC 6585 §5). */
export class HeadersTooLarge extends SandboxError {
  readonly status = 431;
  readonly error = "invalid_request" as const;
  readonly code = "headers_too_large";
}

/**
 * More header fields than the server's limit (RFC 6585 §5 covers the count as well as the size).
 * A code of its own: the fix is fewer fields, not shorter ones.
 */
export class TooManyHeaders extends SandboxError {
  readonly status = 431;
  readonly error = "invalid_request" as const;
  readonly code = "headers_too_many";
}

/** 408 when a client does not finish its request in time (node's request/headers timeouts). */
export class RequestTimeout extends SandboxError {
  readonly status = 408;
  readonly error = "invalid_request" as const;
  readonly code = "request_timeout";
}

/**
 * 503 when the shared state store (`--state`) does not answer in time: the replica fails closed,
 * never answering from memory, and its health check says so, so a balancer drains it.
 */
export class StateUnavailable extends SandboxError {
  readonly status = 503;
  readonly error = "temporarily_unavailable" as const;
  readonly code = "state_unavailable";
  constructor(
    description: string,
    retryAfterSeconds = 1,
    /** The call was refused before it left this replica (not connected): it changed nothing. */
    readonly unsent = false,
  ) {
    super(description, { headers: { "retry-after": String(retryAfterSeconds) } });
  }
}
