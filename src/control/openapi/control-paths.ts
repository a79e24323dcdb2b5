import { BODY_CODES } from "./error-codes.js";

/**
 * The control plane under /__sandbox/: health, this document, sessions, clocks, resets, the
 * request journal, the integration report and token minting. Everything but health refuses web
 * pages (another site's Origin, a Host it does not answer to), needs the admin token when one is
 * set, and answers 404 with --no-control-plane. Control-plane calls run no
 * scenario rules and are not journaled.
 */

const s = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const h = (name: string) => ({ $ref: `#/components/headers/${name}` });
const TAG = ["Control plane"];
const ADMIN = [{ AdminToken: [] }, { AdminTokenHeader: [] }, {}];

const json = (description: string, schema: object, headers: Record<string, unknown> = {}) => ({
  description,
  headers: { "Cache-Control": h("Cache-Control-NoStore"), ...headers },
  content: { "application/json": { schema } },
});
const problem = (description: string, codes: readonly string[], headers: Record<string, unknown> = {}) => ({
  description,
  ...(Object.keys(headers).length > 0 && { headers }),
  content: {
    "application/problem+json": {
      schema: { allOf: [s("ProblemDetails"), { type: "object", properties: { code: { enum: codes } } }] },
    },
  },
});

/** The refusals every admin-guarded control-plane operation can give. */
const guarded = {
  "401": problem(
    "The sandbox was started with an admin token and the request lacks it or sends a wrong one. (No WWW-Authenticate challenge is sent.)",
    ["admin_token_required"],
  ),
  "403": problem(
    "A request a web page could have made: a Host the sandbox does not answer to (DNS rebinding; allow names with --allowed-hosts), or an Origin other than the sandbox's own, `Origin: null` or `Sec-Fetch-Site: cross-site`. Call the control plane from a script or CI.",
    ["host_not_allowed", "cross_site_request"],
  ),
  "404": problem(
    "The control plane is turned off (--no-control-plane); or, under /sessions/{id}, no such session (deleted, reaped after being idle, never created).",
    ["not_found"],
  ),
  "405": problem("Another method; `Allow` lists the ones this path takes.", ["method_not_allowed"], { Allow: h("Allow") }),
};
/** Every control-plane POST: a web page can send a form or text unasked, but not JSON. */
const jsonRequired = {
  "415": problem("Not declared as JSON: a POST needs `Content-Type: application/json`, with an empty body too.", ["control_json_required"]),
};
const bodyRefusals = (codes: readonly string[]) => ({
  "400": problem(
    "A field it does not take, a field of the wrong type or value, or a malformed JSON body (a body over the size limit arrives cut short, and so is malformed).",
    [...codes, ...BODY_CODES],
  ),
  ...jsonRequired,
});
const clockBody = {
  required: false,
  content: {
    "application/json": {
      schema: s("ClockChange"),
      examples: { advance: { value: { advance: "61m" } }, freeze: { value: { set: "2026-01-01T00:00:00Z", freeze: true } } },
    },
  },
};
const CLOCK_CODES = ["unknown_field", "clock_change_missing", "clock_set_invalid", "clock_advance_invalid", "clock_freeze_invalid"];
const sessionId = {
  name: "id",
  in: "path",
  required: true,
  description: "The session id from POST /__sandbox/sessions.",
  schema: { type: "string", examples: ["ses_0123456789abcdef"] },
};
const filters = [
  { name: "session", in: "query", required: false, description: "Only this session's requests.", schema: { type: "string" } },
  { name: "merchant", in: "query", required: false, description: "Only this merchant's requests (a merchant id).", schema: { type: "string" } },
];

export const controlPaths = withHead({
  "/__sandbox/health": {
    get: {
      tags: TAG,
      operationId: "health",
      summary: "Liveness and readiness",
      description: "Always open (no admin token, any Host and Origin, even with --no-control-plane): for probes and the image's HEALTHCHECK.",
      security: [],
      responses: { "200": json("Up.", s("Health")), "405": guarded["405"] },
    },
    head: { tags: TAG, operationId: "healthHead", summary: "Liveness without a body", security: [], responses: { "200": { description: "Up." } } },
  },
  "/__sandbox/openapi.json": {
    get: {
      tags: TAG,
      operationId: "openApiDocument",
      summary: "This document",
      description: "The whole surface, merchant API and control plane, as OpenAPI 3.1; `info.version` is the package version.",
      security: ADMIN,
      responses: {
        "200": json(
          "The OpenAPI document.",
          { type: "object" },
          { "Cache-Control": { description: "Revalidate each time.", schema: { const: "no-cache" } } },
        ),
        ...guarded,
      },
    },
    head: {
      tags: TAG,
      operationId: "openApiDocumentHead",
      summary: "This document's headers",
      security: ADMIN,
      responses: { "200": { description: "As GET, without a body." } },
    },
  },
  "/__sandbox/sessions": {
    post: {
      tags: TAG,
      operationId: "createSession",
      summary: "A private copy of a scenario, with fresh credentials",
      description:
        "For parallel tests against one sandbox: the scenario's merchants with new random credentials, its own state, clock and rules. Configure the integration with the answer's credentials; they select the session. Idle sessions are reaped (`expires_at`), and there are at most `--max-sessions`.",
      security: ADMIN,
      requestBody: { required: false, content: { "application/json": { schema: s("SessionCreate") } } },
      responses: {
        "201": json("The session.", s("Session"), { Location: h("Location") }),
        ...bodyRefusals(["unknown_field", "session_scenario_invalid", "session_scenario_unknown"]),
        "429": problem("As many sessions as allowed: delete finished ones.", ["too_many_sessions"]),
        ...guarded,
      },
    },
    get: {
      tags: TAG,
      operationId: "listSessions",
      summary: "The live sessions",
      security: ADMIN,
      responses: { "200": json("The sessions.", s("SessionList")), ...guarded },
    },
  },
  "/__sandbox/sessions/{id}": {
    parameters: [sessionId],
    get: {
      tags: TAG,
      operationId: "getSession",
      summary: "One session: credentials, state and clock",
      security: ADMIN,
      responses: { "200": json("The session.", s("SessionDetail")), ...guarded },
    },
    delete: {
      tags: TAG,
      operationId: "deleteSession",
      summary: "End a session",
      description: "Its merchants, tokens and rules are gone at once.",
      security: ADMIN,
      responses: { "204": { description: "Deleted.", headers: { "Cache-Control": h("Cache-Control-NoStore") } }, ...guarded },
    },
  },
  "/__sandbox/sessions/{id}/clock": {
    parameters: [sessionId],
    get: {
      tags: TAG,
      operationId: "getSessionClock",
      summary: "The session's clock",
      security: ADMIN,
      responses: { "200": json("Its clock.", s("Clock")), ...guarded },
    },
    post: {
      tags: TAG,
      operationId: "changeSessionClock",
      summary: "Move, set or freeze the session's clock",
      description: "Only this session's tokens and rules see the change: e.g. advance 61m to make its access tokens expire.",
      security: ADMIN,
      requestBody: clockBody,
      responses: { "200": json("The clock after the change.", s("Clock")), ...bodyRefusals(CLOCK_CODES), ...guarded },
    },
  },
  "/__sandbox/sessions/{id}/reset": {
    parameters: [sessionId],
    post: {
      tags: TAG,
      operationId: "resetSession",
      summary: "Back to a fresh start",
      description:
        "The session's scenario state, merchants and clock as they started; every token issued to it so far is revoked. Credentials stay the same.",
      security: ADMIN,
      responses: { "200": json("Reset.", s("SessionReset")), ...jsonRequired, ...guarded },
    },
  },
  "/__sandbox/sessions/{id}/report": {
    parameters: [sessionId],
    get: {
      tags: TAG,
      operationId: "sessionReport",
      summary: "The integration report of one session",
      security: ADMIN,
      responses: { "200": json("Its findings.", s("SessionReport")), ...guarded },
    },
  },
  "/__sandbox/clock": {
    get: {
      tags: TAG,
      operationId: "getClock",
      summary: "The sandbox clock",
      description: "The clock every scenario and session clock follows (scenarios may run at an offset from it).",
      security: ADMIN,
      responses: { "200": json("The clock.", s("Clock")), ...guarded },
    },
    post: {
      tags: TAG,
      operationId: "changeClock",
      summary: "Move, set or freeze the sandbox clock",
      security: ADMIN,
      requestBody: clockBody,
      responses: { "200": json("The clock after the change.", s("Clock")), ...bodyRefusals(CLOCK_CODES), ...guarded },
    },
  },
  "/__sandbox/reset": {
    post: {
      tags: TAG,
      operationId: "resetSandbox",
      summary: "The whole sandbox as it started",
      description: "Deletes every session, resets every scenario and the clock, revokes every token issued so far, and empties the journal.",
      security: ADMIN,
      responses: { "200": json("Reset.", s("SandboxReset")), ...jsonRequired, ...guarded },
    },
  },
  "/__sandbox/requests": {
    get: {
      tags: TAG,
      operationId: "listRequests",
      summary: "The redacted request journal",
      description: "The integration's requests (control-plane calls excluded), oldest first, from a bounded ring buffer.",
      security: ADMIN,
      parameters: [
        ...filters,
        {
          name: "since",
          in: "query",
          required: false,
          description: "Only entries after this request id (`req_12`) or ISO time.",
          schema: { type: "string" },
        },
        { name: "limit", in: "query", required: false, description: "At most this many, the newest.", schema: { type: "integer", minimum: 1 } },
      ],
      responses: {
        "200": json("The entries.", s("Journal")),
        "400": problem("A parameter it does not take, or a bad `limit` or `since`.", ["unknown_parameter", "limit_invalid", "since_invalid"]),
        ...guarded,
      },
    },
  },
  "/__sandbox/report": {
    get: {
      tags: TAG,
      operationId: "report",
      summary: "The integration report",
      description:
        "What the integration did wrong, read from the journal: a new token per call, an expired token reused, the JWT on payment/init, the deprecated login used, retries that ignore Retry-After … Each finding has a stable code, a severity and the ids of the requests that show it.",
      security: ADMIN,
      parameters: filters,
      responses: { "200": json("The findings.", s("Report")), ...guarded },
    },
  },
  "/__sandbox/tokens": {
    post: {
      tags: TAG,
      operationId: "mintToken",
      summary: "Mint a token, valid or deliberately bad",
      description:
        "For clients that verify tokens themselves: one token of the catalogue for a merchant, with its header, claims and the code the sandbox answers for it on /api/v2/payment/*.",
      security: ADMIN,
      requestBody: {
        required: false,
        content: { "application/json": { schema: s("MintRequest"), example: { merchant: "sandbox-api-key", variant: "expired" } } },
      },
      responses: {
        "201": json("The token.", s("MintedToken")),
        ...bodyRefusals(["unknown_field", "mint_field_invalid", "mint_variant_unknown", "mint_ttl_invalid"]),
        ...guarded,
        "404": problem("No merchant with this api_key or id, or the control plane is off.", ["not_found"]),
      },
    },
  },
  "/__sandbox/scan": {
    post: {
      tags: TAG,
      operationId: "scanLogs",
      summary: "Find this sandbox's secrets in log text",
      description:
        "Where the text holds, in clear, a secret of a merchant the sandbox knows now (api_secret, payment token, login password) or a JWT this sandbox signed (access, login or minted token, expired or not: its signature proves it). Each hit says where and what, never the secret. The body is bounded by the size limit: send a large log in chunks of lines.",
      security: ADMIN,
      requestBody: { required: true, content: { "application/json": { schema: s("ScanRequest") } } },
      responses: {
        "200": json("The hits (none when the text is clean).", s("ScanResult")),
        ...bodyRefusals(["unknown_field", "scan_text_missing", "scan_text_invalid"]),
        "413": problem("The body is over the limit: send fewer lines at a time.", ["payload_too_large"]),
        ...guarded,
      },
    },
  },
} as const);

/**
 * Every control-plane route that takes GET takes HEAD (src/control/router.ts): documented as its
 * GET, same parameters, statuses and headers, with no body. Health and this document keep their
 * own shorter HEAD entries.
 */
function withHead<T extends Record<string, object>>(paths: T): T {
  const out: Record<string, object> = {};
  for (const [path, item] of Object.entries(paths) as Array<[string, Record<string, unknown>]>) {
    const get = item.get as { operationId: string; summary: string; responses: Record<string, { content?: unknown }> } | undefined;
    if (!get || item.head) {
      out[path] = item;
      continue;
    }
    const responses = Object.fromEntries(Object.entries(get.responses).map(([status, { content: _body, ...rest }]) => [status, rest]));
    out[path] = {
      ...item,
      head: {
        ...get,
        operationId: `${get.operationId}Head`,
        summary: `${get.summary} (headers only)`,
        description: "As GET, without a body: the same status and headers, content-length included.",
        responses,
      },
    };
  }
  return out as T;
}
