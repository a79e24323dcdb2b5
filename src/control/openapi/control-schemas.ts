import { SESSION_ID_PATTERN } from "../../core/session-path.js";
import { sessionActionsJsonSchema } from "../../scenarios/session-actions.js";
import { SESSION_HISTORY_MAX } from "../session-history.js";
import { ref } from "./ref.js";
/**
 * `components.schemas` of the OpenAPI document, control-plane half: scenarios, sessions, clocks, the journal,
 * the report, token minting and log scanning. Field lists follow src/control.
 */

const isoTime = { type: "string", format: "date-time" } as const;

/** The profile a session answers in, as its answers show it. */
const SESSION_PROFILE = {
  type: "string",
  description:
    "The response profile the session's merchant API answers in: the one the creation asked for, else its scenario's, else the sandbox's (`oauth` unless `serve --profile` chose another).",
  examples: ["oauth", "lexik"],
} as const;

export const MINT_VARIANT_VALUES = [
  "valid",
  "expired",
  "not_yet_valid",
  "wrong_audience",
  "wrong_issuer",
  "unknown_kid",
  "foreign_key",
  "alg_none",
  "bad_signature",
  "login_token",
] as const;

const merchantCredentials = {
  type: "object",
  description: "A session merchant's credentials: fresh and random per session, so parallel tests never collide.",
  required: ["id", "api_key", "api_secret", "payment_token", "login"],
  properties: {
    id: { type: "string", description: "The tokens' `sub`: `<scenario merchant id>.<session id>`." },
    api_key: { type: "string", examples: ["sk_0123456789abcdef_0"] },
    api_secret: { type: "string" },
    payment_token: { type: "string", examples: ["mpt_test_0123456789abcdef01234567"] },
    login: {
      type: "object",
      required: ["email", "password"],
      properties: { email: { type: "string" }, password: { type: "string" } },
    },
  },
} as const;

export const controlSchemas = {
  Health: {
    type: "object",
    required: ["status", "version", "scenarios"],
    properties: {
      status: { const: "ok" },
      version: { type: "string", description: "The package version.", examples: ["0.1.0"] },
      scenarios: {
        type: "array",
        items: { type: "string" },
        description: "Names of the loaded scenarios, sessions' included.",
        examples: [["default"]],
      },
    },
  },
  Clock: {
    type: "object",
    required: ["now", "frozen"],
    properties: { now: isoTime, frozen: { type: "boolean" } },
  },
  ClockChange: {
    type: "object",
    description: "One or more changes, applied in this order: set, advance, freeze. Every token is judged by this clock.",
    minProperties: 1,
    additionalProperties: false,
    properties: {
      set: { ...isoTime, description: "Jump to this instant." },
      advance: {
        type: ["string", "number"],
        description: "A duration to move by: `90s`, `59m`, `1h30m`, `500ms`, `-5m` (back), or a number of seconds.",
        examples: ["61m"],
      },
      freeze: { type: "boolean", description: "true stops the clock where it is; false lets it run from there." },
    },
  },
  ScenarioList: {
    type: "object",
    required: ["scenarios"],
    properties: {
      scenarios: {
        type: "array",
        description: "The loaded scenarios first, then the library's, each by name.",
        items: {
          type: "object",
          required: ["name", "description", "source", "rules"],
          additionalProperties: false,
          properties: {
            name: { type: "string", description: "What POST /__sandbox/sessions takes as `scenario`.", examples: ["token-expires-after-calls"] },
            description: { type: "string" },
            source: {
              type: "string",
              enum: ["loaded", "library"],
              description: "`loaded`: given at start (or the built-in default); `library`: shipped with the sandbox.",
            },
            rules: {
              type: "array",
              description: "The scenario's rules in its file's order (none for one that only sets settings or merchants).",
              items: {
                type: "object",
                required: ["name", "summary"],
                additionalProperties: false,
                properties: {
                  name: { type: "string", description: "As X-Sandbox-Rule names it (`rules[<index>]` when the file gives none)." },
                  summary: {
                    type: "string",
                    description: "What it scripts: its conditions joined by ` · ` (`every request` when none), `→`, its actions joined by `, `.",
                    examples: ["payment, cashout · 4th call → expire_token: presented"],
                  },
                },
              },
            },
          },
        },
      },
    },
  },
  SessionCreate: {
    type: "object",
    additionalProperties: false,
    properties: {
      scenario: {
        type: "string",
        description: "A loaded scenario or a library scenario (`merchant-sandbox scenarios` lists them); `default` when absent.",
        examples: ["token-endpoint-outage"],
      },
      profile: {
        type: "string",
        minLength: 1,
        description:
          "The response profile the session's merchant API answers are shaped in: a built-in (oauth, lexik, spring, laravel, camel, envelope) or a profile this sandbox loaded at start; default the scenario's. This document shows the merchant API in the primary scenario's profile: a session in another profile answers in that profile's shapes instead (its token, payment/init and login successes and its refusals).",
        examples: ["lexik"],
      },
    },
  },
  SessionMerchant: merchantCredentials,
  Session: {
    type: "object",
    description: "Everything a test needs to configure its integration against its private copy of a scenario.",
    required: ["id", "scenario", "profile", "merchant", "merchants", "base_url", "expires_at"],
    properties: {
      id: { type: "string", pattern: SESSION_ID_PATTERN.source },
      scenario: { type: "string" },
      profile: SESSION_PROFILE,
      merchant: { ...ref("schemas", "SessionMerchant"), description: "The scenario's first merchant." },
      merchants: { type: "array", items: ref("schemas", "SessionMerchant") },
      base_url: {
        type: "string",
        description:
          "The base URL to configure the integration with: `http://<Host of this request>/s/<id>` (only the path when the request had no Host). Every merchant API path under it is this session's, whatever the request's credentials: all of them show in its journal and report.",
        examples: ["http://localhost:4010/s/ses_0123456789abcdef"],
      },
      expires_at: {
        ...isoTime,
        description: "When the session is reaped if it stays idle (wall-clock time; `--session-idle-ttl`, 30 minutes by default).",
      },
    },
  },
  SessionDetail: {
    allOf: [
      ref("schemas", "Session"),
      {
        type: "object",
        required: ["state", "clock", "history", "history_dropped"],
        properties: {
          state: { type: "string", description: "The scenario's state (`started` at first; rules' `set_state` moves it)." },
          clock: ref("schemas", "Clock"),
          history: {
            type: "array",
            items: ref("schemas", "HistoryEntry"),
            maxItems: SESSION_HISTORY_MAX,
            description: `What was done to the session through the control plane, oldest first: its last ${SESSION_HISTORY_MAX} clock moves, actions and resets (the sandbox clock's moves are not in it).`,
          },
          history_dropped: {
            type: "integer",
            minimum: 0,
            description: `How many older entries were dropped to keep the last ${SESSION_HISTORY_MAX}.`,
          },
        },
      },
    ],
  },
  HistoryEntry: {
    type: "object",
    description:
      "One thing done to a session through the control plane: POST …/clock (`clock`), POST …/actions (`actions`) or POST …/reset (`reset`). Never a secret: each value it echoes is redacted as the journal redacts, and cut at 64 characters.",
    required: ["id", "session", "time", "sandboxTime", "kind", "clock"],
    properties: {
      id: {
        type: "string",
        pattern: "^req_[0-9]+\\.[0-9]+$",
        description:
          "`req_<n>.<m>`: done after the journal's request `req_<n>`, the sandbox's m-th entry. Its event id: `since` and Last-Event-ID take it.",
        examples: ["req_12.3"],
      },
      session: { type: "string" },
      time: { ...isoTime, description: "Wall-clock time it was done." },
      sandboxTime: { ...isoTime, description: "The session clock when it was done, before any move it made." },
      kind: { enum: ["clock", "actions", "reset"] },
      change: {
        type: "object",
        description: "`clock`: what was asked, as sent.",
        properties: {
          advance: { anyOf: [{ type: "string" }, { type: "number" }] },
          set: { type: "string" },
          freeze: { type: "boolean" },
        },
      },
      merchants: { type: "array", items: { type: "string" }, description: "`actions`: the merchants they acted on." },
      now: {
        type: "object",
        additionalProperties: { type: ["string", "number", "boolean", "null"] },
        description: "`actions`: the `now` actions with their values, each redacted.",
      },
      next: {
        type: "object",
        required: ["rule", "endpoint", "times", "actions"],
        description: "`actions`: the `next` rule added, never the values of its actions.",
        properties: {
          rule: { type: "string", examples: ["default/action-1"] },
          endpoint: { anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }] },
          times: { type: "integer", minimum: 1 },
          actions: { type: "array", items: { type: "string" } },
        },
      },
      clock: { ...ref("schemas", "Clock"), description: "The session clock after it." },
    },
  },
  SessionActions: sessionActionsJsonSchema(),
  SessionActionRule: {
    type: "object",
    description: "A `next` rule of the session: never the values of its actions (a rotated secret).",
    required: ["name", "endpoint", "times", "remaining", "actions"],
    properties: {
      name: { type: "string", description: "As X-Sandbox-Rule and the journal show it.", examples: ["token-endpoint-outage/action-1"] },
      endpoint: {
        anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }],
        description: "The endpoint(s) it answers; `any` when not limited.",
      },
      merchant: { type: "string", description: "The one merchant whose requests it answers, when the request named one." },
      times: { type: "integer", minimum: 1 },
      remaining: { type: "integer", minimum: 0, description: "How many more requests it answers." },
      actions: { type: "array", items: { type: "string" }, description: "The names of its actions." },
    },
  },
  SessionActionsResult: {
    type: "object",
    required: ["session", "merchants", "applied", "pending", "state", "clock"],
    properties: {
      session: { type: "string" },
      merchants: { type: "array", items: { type: "string" }, description: "The session merchants the actions apply to." },
      applied: { type: "array", items: { type: "string" }, description: "The `now` actions applied, by name, in the order given." },
      rule: { ...ref("schemas", "SessionActionRule"), description: "The rule `next` added." },
      pending: {
        type: "array",
        items: ref("schemas", "SessionActionRule"),
        description: "Every `next` rule of the session still to fire, first to fire first.",
      },
      state: { type: "string", description: "The scenario state after the actions." },
      clock: ref("schemas", "Clock"),
    },
  },
  SessionList: {
    type: "object",
    required: ["sessions"],
    properties: {
      sessions: {
        type: "array",
        items: {
          type: "object",
          required: ["id", "scenario", "profile", "base_url", "expires_at"],
          properties: {
            id: { type: "string" },
            scenario: { type: "string" },
            profile: SESSION_PROFILE,
            base_url: { type: "string" },
            expires_at: isoTime,
          },
        },
      },
    },
  },
  SessionReset: {
    type: "object",
    required: ["reset", "session", "clock"],
    properties: { reset: { const: true }, session: { type: "string" }, clock: ref("schemas", "Clock") },
  },
  SandboxReset: {
    type: "object",
    required: ["reset", "scenarios", "clock"],
    properties: { reset: { const: true }, scenarios: { type: "array", items: { type: "string" } }, clock: ref("schemas", "Clock") },
  },
  JournalEntry: {
    type: "object",
    description:
      "What one request of the integration did. Built from what the sandbox learnt, never from raw values: no secret, password, payment token or JWT, only token ids and redacted query strings.",
    required: ["id", "seq", "time", "sandboxTime", "method", "path", "query", "status", "durationMs", "endpoint", "scenario"],
    properties: {
      id: { type: "string", pattern: "^req_[0-9]+$" },
      seq: { type: "integer", minimum: 1 },
      time: { ...isoTime, description: "Wall-clock time the request arrived." },
      sandboxTime: { ...isoTime, description: "The scenario's clock when it arrived (what expiry is judged by)." },
      method: { type: "string" },
      path: { type: "string" },
      query: { type: "string", description: "With secret-looking values redacted." },
      status: { type: "integer", description: "0 when a rule dropped the connection." },
      durationMs: { type: "number" },
      endpoint: { type: "string", enum: ["token", "payment", "cashout", "payment-init", "login", "jwks", "unknown"] },
      scenario: { type: "string" },
      session: { type: "string" },
      merchant: { type: "string", description: "The merchant the request named (api_key, login e-mail, payment token or token `sub`)." },
      unverified: {
        type: "boolean",
        const: true,
        description:
          "Present when the request named `merchant` without proving it (wrong secret or password, a token no sandbox key signed, or refused for its form: method, Content-Type, body, a credential sent two ways): it fired no rules and counts in no finding but `unproven_identity`.",
      },
      tokenId: {
        type: "string",
        description: "The jti of an access token issued or accepted by this request (the deprecated login's token included).",
      },
      tokenExpiresAt: {
        ...isoTime,
        description:
          "When the token this request was issued expires (its `exp`), on the issuing scenario's clock as `sandboxTime` is: on a token exchange, or a deprecated login, that answered with a token. Whole seconds.",
      },
      presentedTokenId: { type: "string", description: "The jti of the bearer token the request presented, valid or not." },
      code: { type: "string", description: "The refusal's code (see ErrorCode)." },
      tokenExpiry: {
        type: "string",
        enum: ["early", "clock_jump"],
        description:
          "On a token_expired refusal the sandbox or the test caused: `early`, expired before its exp (expire_token); `clock_jump`, one clock move carried it from before 90 % of its lifetime to past its exp. Such a renewal is not held against the client.",
      },
      rules: { type: "array", items: { type: "string" }, description: "`scenario/rule` of the rules that fired." },
      retryAfter: { type: "number", description: "Seconds, from the answer's Retry-After." },
      credentialSources: {
        type: "object",
        properties: {
          apiKey: { type: "string", enum: ["body", "header", "both"] },
          apiSecret: { type: "string", enum: ["body", "header", "both"] },
        },
      },
      secretInQuery: { type: "boolean", description: "The query string carried something secret-looking." },
      viaSessionUrl: {
        type: "boolean",
        const: true,
        description:
          "Present when the request was sent under a session's base URL (`/s/{id}/…`): `session` is that session whatever the credentials, and `path` the path under the base URL. Under an unknown or ended session's URL there is no `session` and `path` is the whole path.",
      },
      loginToken: {
        type: "boolean",
        const: true,
        description:
          "Present when payment or cashout was called with the deprecated login's token (typ JWT), accepted or refused by the `loginToken` setting; `deprecated_login_used` cites it.",
      },
    },
  },
  Journal: {
    type: "object",
    required: ["requests", "capacity"],
    properties: {
      requests: { type: "array", items: ref("schemas", "JournalEntry"), description: "Oldest first." },
      capacity: { type: "integer", description: "How many entries the ring buffer keeps (`--journal-size`, 1000 by default); the oldest go first." },
    },
  },
  Finding: {
    type: "object",
    description: "Something the integration did wrong (or should know), read from the journal.",
    required: ["code", "severity", "message", "evidence"],
    properties: {
      code: {
        type: "string",
        description: "A stable finding code.",
        examples: ["token_per_call", "expired_token_reused", "retry_ignores_retry_after"],
      },
      severity: { type: "string", enum: ["error", "warning", "info"], description: "`error` should fail a CI gate." },
      message: { type: "string", description: "What happened and how to fix it." },
      evidence: { type: "array", items: { type: "string" }, description: "Ids (`req_<n>`) of the requests that show it." },
    },
  },
  Report: {
    type: "object",
    required: ["findings"],
    properties: { findings: { type: "array", items: ref("schemas", "Finding") } },
  },
  SessionReport: {
    type: "object",
    required: ["session", "findings"],
    properties: { session: { type: "string" }, findings: { type: "array", items: ref("schemas", "Finding") } },
  },
  ScanRequest: {
    type: "object",
    required: ["text"],
    additionalProperties: false,
    properties: { text: { type: "string", description: "The log lines to scan, joined with \\n." } },
  },
  ScanResult: {
    type: "object",
    required: ["hits", "unverified"],
    properties: {
      hits: {
        type: "array",
        items: {
          type: "object",
          required: ["line", "column", "kind", "merchant"],
          properties: {
            line: { type: "integer", minimum: 1 },
            column: { type: "integer", minimum: 1, description: "Counted in characters." },
            kind: { type: "string", enum: ["api_secret", "payment_token", "password", "access_token", "login_token"] },
            merchant: { type: "string", description: "The secret's owner, or the token's `sub` (`unknown` when it has none)." },
          },
        },
      },
      unverified: {
        type: "array",
        description:
          "JWT-shaped strings no key of this sandbox verifies, live or retired: signed before it restarted (it then knows none of the keys of before), or by another issuer. Where they stand, never the token.",
        items: {
          type: "object",
          required: ["line", "column", "length"],
          properties: {
            line: { type: "integer", minimum: 1 },
            column: { type: "integer", minimum: 1, description: "Counted in characters." },
            length: { type: "integer", minimum: 1, description: "The string's length in characters." },
          },
        },
      },
    },
  },
  MintRequest: {
    type: "object",
    additionalProperties: false,
    properties: {
      merchant: {
        type: "string",
        description: "An api_key or merchant id; the primary scenario's first merchant when absent.",
        examples: ["sandbox-api-key"],
      },
      variant: ref("schemas", "MintVariant"),
      ttl: {
        type: ["string", "number"],
        description: "Lifetime of the token (`90s`, `59m`, `1h`, or seconds); the scenario's token TTL when absent.",
        examples: ["90s"],
      },
    },
  },
  MintVariant: {
    type: "string",
    description:
      "Which token: `valid`, or one deliberately wrong in one way: `expired` (token_expired), `not_yet_valid` (token_not_yet_valid), `wrong_audience`, `wrong_issuer`, `unknown_kid` (a kid this sandbox has not), `foreign_key` (signed by a key of no sandbox: token_unknown_kid), `alg_none` (token_algorithm_rejected), `bad_signature` (token_signature_invalid), `login_token` (the deprecated login's kind, typ JWT: accepted by default, token_not_access_token where the merchant's scenario sets `login_token: refused`). Default `valid`.",
    enum: MINT_VARIANT_VALUES,
  },
  MintedToken: {
    type: "object",
    required: ["token", "variant", "header", "claims", "expected_error"],
    properties: {
      token: { type: "string", description: "The compact JWT. Valid and `login_token` tokens are recorded, so revocation and resets apply to them." },
      variant: ref("schemas", "MintVariant"),
      header: { type: "object", description: "The token's protected header (alg, kid, typ)." },
      claims: {
        type: "object",
        properties: {
          iss: { type: "string" },
          sub: { type: "string" },
          aud: { type: "string" },
          iat: { type: "integer" },
          exp: { type: "integer" },
          nbf: { type: "integer" },
          jti: { type: "string" },
          client_id: { type: "string" },
          scope: { type: "string" },
        },
      },
      expected_error: {
        type: ["string", "null"],
        description:
          "The code the sandbox itself answers for this token on /api/v2/payment/*; null for a token it accepts (a valid one, or a `login_token` where login tokens are accepted).",
        enum: [
          null,
          "token_expired",
          "token_not_yet_valid",
          "token_wrong_audience",
          "token_wrong_issuer",
          "token_unknown_kid",
          "token_algorithm_rejected",
          "token_signature_invalid",
          "token_not_access_token",
        ],
      },
    },
  },
} as const;
