import type { ErrorCode } from "../../core/error-catalogue.js";
import { MAX_ENDED_SECRETS } from "../../core/secret-fingerprints.js";
import type { OperationDoc, PathDoc } from "./operations.js";
import { ref } from "./ref.js";
import { JOURNAL_PAGE_MAX } from "../journal.js";
import { SESSION_HISTORY_MAX } from "../session-history.js";

/**
 * The prose of the control plane under /__sandbox/, by route of src/control/router.ts: health, this
 * document, the scenarios, sessions, clocks, resets, the request journal, the integration report and token
 * minting, and the QA page's files. Everything but health and those files refuses web pages (another
 * site's Origin, a Host it does not answer to), needs the admin token when one is set, and answers
 * 404 with --no-control-plane; the page's files check only the Host.
 * Control-plane calls run no scenario rules and are not journaled. The refusal responses are
 * generated from the codes listed here and the error catalogue (operations.ts).
 */

const ADMIN = [{ AdminToken: [] }, { AdminTokenHeader: [] }, {}];

const json = (description: string, schema: object, headers: Record<string, unknown> = {}) => ({
  description,
  headers: { "Cache-Control": ref("headers", "Cache-Control-NoStore"), ...headers },
  content: { "application/json": { schema } },
});

/** The refusals of every admin-guarded operation. */
const GUARDED: readonly ErrorCode[] = ["admin_token_required", "host_not_allowed", "cross_site_request", "not_found", "method_not_allowed"];
/** A POST: a web page can send a form or text unasked, but not JSON. */
const POSTED: readonly ErrorCode[] = [...GUARDED, "control_json_required"];
/** A POST that reads a JSON body. */
const WITH_BODY: readonly ErrorCode[] = [...POSTED, "body_malformed_json", "body_not_object", "body_not_utf8", "unknown_field"];
const CLOCK: readonly ErrorCode[] = [
  ...WITH_BODY,
  "clock_change_missing",
  "clock_set_invalid",
  "clock_out_of_range",
  "clock_advance_invalid",
  "clock_freeze_invalid",
];

const NOTES = {
  401: "The sandbox was started with an admin token and the request lacks it or sends a wrong one.",
  403: "A request a web page could have made: a Host the sandbox does not answer to (DNS rebinding; allow names with --allowed-hosts), or an Origin other than the sandbox's own, `Origin: null` or `Sec-Fetch-Site: cross-site`. Call the control plane from a script or CI.",
  404: "The control plane is turned off (--no-control-plane); or, under /sessions/{id}, no such session (deleted, reaped after being idle, never created).",
  405: "Another method; `Allow` lists the ones this path takes.",
  415: "Not declared as JSON: a POST needs `Content-Type: application/json`, with an empty body too.",
};
const BODY_NOTES = {
  ...NOTES,
  400: "A field it does not take, a field of the wrong type or value, or a malformed JSON body (a body over the size limit arrives cut short, and so is malformed).",
};

/** An admin-guarded operation. */
const op = (doc: Omit<OperationDoc, "security">): OperationDoc => ({
  security: ADMIN,
  notes: doc.refusals.includes("unknown_field") ? BODY_NOTES : NOTES,
  ...doc,
});
const path = (operations: PathDoc["operations"], parameters?: readonly object[]): PathDoc => ({
  tag: "Control plane",
  scripted: false,
  challenge: { header: "WWW-Authenticate-Bearer", statuses: [401] },
  ...(parameters && { parameters }),
  operations,
});

const clockBody = {
  required: false,
  description:
    "Tokens issued after the clock moved forward carry `iat` (and `nbf`, when a scenario sets one) in the sandbox's future: a client library that checks them against its own wall clock refuses them as not yet valid (PyJWT's `ImmatureSignatureError`; jose when given `maxTokenAge`). Give the client a leeway as large as the move (PyJWT `leeway=`, jose `clockTolerance`), or `set` both clocks to one instant instead of advancing.",
  content: {
    "application/json": {
      schema: ref("schemas", "ClockChange"),
      examples: { advance: { value: { advance: "61m" } }, freeze: { value: { set: "2026-01-01T00:00:00Z", freeze: true } } },
    },
  },
};
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

/** The QA page's files: open (no admin token), but only to a Host the sandbox answers to. */
const PAGE_REFUSALS: readonly ErrorCode[] = ["host_not_allowed", "not_found", "method_not_allowed"];
const PAGE_NOTES = {
  403: "A Host the sandbox does not answer to (DNS rebinding; allow names with --allowed-hosts).",
  404: "The control plane is turned off (--no-control-plane), a file the page does not have, or a copy of the sandbox built without the page (run `npm run build`).",
  405: NOTES[405],
};
const PAGE_SECURITY_HEADERS = {
  "Content-Security-Policy": {
    description: "The page loads only its own script and style and talks only to this sandbox; it cannot be framed.",
    schema: { type: "string" },
  },
  "X-Frame-Options": { description: "DENY.", schema: { const: "DENY" } },
  "X-Content-Type-Options": { description: "nosniff.", schema: { const: "nosniff" } },
  "Referrer-Policy": { description: "no-referrer.", schema: { const: "no-referrer" } },
  "Cache-Control": { description: "Revalidate each time.", schema: { const: "no-cache" } },
};
const pageFile = (description: string, type: string) => ({
  description,
  headers: PAGE_SECURITY_HEADERS,
  content: { [type]: { schema: { type: "string" } } },
});
const PAGE_REDIRECT = {
  description: "To the page.",
  headers: {
    Location: { description: "/__sandbox/ui/", schema: { const: "/__sandbox/ui/" } },
    "Cache-Control": { description: "Revalidate each time.", schema: { const: "no-cache" } },
  },
  content: { "text/plain": { schema: { type: "string" } } },
};

/**
 * `/` (control/endpoints/ui.ts's ROOT_ROUTE): served beside the merchant API by the app's router,
 * as an unknown path of it is (scenario rules with `endpoint: any` apply, a response profile shapes
 * its refusal), so it is documented with the merchant paths; never under a session's base URL.
 */
export const rootDocs: Record<string, PathDoc> = {
  "/": {
    tag: "Control plane",
    scripted: true,
    operations: {
      get: {
        operationId: "rootRedirect",
        summary: "The sandbox's address, opened in a browser",
        description:
          "Sends a browser to the QA page, /__sandbox/ui/ (served only with the control plane on; with --no-control-plane, and under a session's base URL, `/` is an unknown path: 404 `not_found`). Any other method than GET and HEAD is an unknown path too.",
        security: [],
        responses: { "302": PAGE_REDIRECT },
        refusals: ["not_found"],
        notes: { 404: "Another method than GET and HEAD: `/` is then an unknown path (`not_found`, with the list of routes)." },
      },
    },
  },
};

export const controlDocs: Record<string, PathDoc> = {
  "/__sandbox/health": path({
    get: {
      operationId: "health",
      summary: "Liveness and readiness",
      description: "Always open (no admin token, any Host and Origin, even with --no-control-plane): for probes and the image's HEALTHCHECK.",
      security: [],
      responses: { "200": json("Up.", ref("schemas", "Health")) },
      refusals: ["method_not_allowed"],
      notes: NOTES,
    },
  }),
  "/__sandbox/ui": path({
    get: {
      operationId: "qaPageRedirect",
      summary: "The QA page, without the slash",
      description: "Sends a browser to /__sandbox/ui/, where the page's relative links resolve. `GET /` does the same when the control plane is on.",
      security: [],
      responses: { "302": PAGE_REDIRECT },
      refusals: PAGE_REFUSALS,
      notes: PAGE_NOTES,
    },
  }),
  "/__sandbox/ui/": path({
    get: {
      operationId: "qaPage",
      summary: "The QA page (open it in a browser)",
      description: [
        "A page for QA engineers: scenarios, sessions with their credentials, a session's live journal, findings and timeline, its clock, break-it-now actions and token minting.",
        "Built into the package (no CDN, works offline and in the image). The page itself holds nothing of any session and needs no admin token;",
        "it uses only the operations of this document, and asks for the admin token when the sandbox has one, keeping it for the tab (sessionStorage).",
      ].join(" "),
      security: [],
      responses: { "200": pageFile("The page's HTML.", "text/html") },
      refusals: PAGE_REFUSALS,
      notes: PAGE_NOTES,
    },
  }),
  "/__sandbox/ui/{asset}": path(
    {
      get: {
        operationId: "qaPageAsset",
        summary: "The QA page's script and style",
        description: "`app.js`, `app.css` (and `index.html`); any other name is 404.",
        security: [],
        responses: {
          "200": {
            ...pageFile("The file.", "text/javascript"),
            content: {
              "text/javascript": { schema: { type: "string" } },
              "text/css": { schema: { type: "string" } },
              "text/html": { schema: { type: "string" } },
            },
          },
        },
        refusals: PAGE_REFUSALS,
        notes: PAGE_NOTES,
      },
    },
    [
      {
        name: "asset",
        in: "path",
        required: true,
        description: "A file of the page.",
        schema: { type: "string", enum: ["app.js", "app.css", "index.html"] },
      },
    ],
  ),
  "/__sandbox/openapi.json": path({
    get: op({
      operationId: "openApiDocument",
      summary: "This document",
      description: "The whole surface, merchant API and control plane, as OpenAPI 3.1; `info.version` is the package version.",
      responses: {
        "200": json(
          "The OpenAPI document.",
          { type: "object" },
          { "Cache-Control": { description: "Revalidate each time.", schema: { const: "no-cache" } } },
        ),
      },
      refusals: GUARDED,
    }),
  }),
  "/__sandbox/scenarios": path({
    get: op({
      operationId: "listScenarios",
      summary: "The scenarios a session can be created from",
      description:
        "The scenarios loaded at start (`serve --scenario`, and the built-in `default` unless one replaced it), `source: loaded`, then the shipped library's, `source: library`, each by name; a library scenario also loaded is listed once, as loaded. Each with its description and one line per rule of what it scripts (its conditions, then its actions: `payment, cashout · 4th call → expire_token: presented`), never a credential. POST /__sandbox/sessions takes these names. It takes no parameters.",
      responses: { "200": json("The scenarios.", ref("schemas", "ScenarioList")) },
      refusals: [...GUARDED, "unknown_parameter"],
      notes: { ...NOTES, 400: "A query parameter: it takes none." },
    }),
  }),
  "/__sandbox/sessions": path({
    post: op({
      operationId: "createSession",
      summary: "A private copy of a scenario, with fresh credentials",
      description:
        "For parallel tests against one sandbox: the scenario's merchants with new random credentials, its own state, clock and rules. Configure the integration with the answer's `base_url` and credentials: every request under the base URL is the session's, whatever its credentials (at the root, the credentials select the session). Idle sessions are reaped (`expires_at`), and there are at most `--max-sessions`.",
      requestBody: { required: false, content: { "application/json": { schema: ref("schemas", "SessionCreate") } } },
      responses: { "201": json("The session.", ref("schemas", "Session"), { Location: ref("headers", "Location") }) },
      refusals: [...WITH_BODY, "session_scenario_invalid", "session_scenario_unknown", "session_profile_invalid", "too_many_sessions"],
    }),
    get: op({
      operationId: "listSessions",
      summary: "The live sessions",
      responses: { "200": json("The sessions.", ref("schemas", "SessionList")) },
      refusals: GUARDED,
    }),
  }),
  "/__sandbox/sessions/{id}": path(
    {
      get: op({
        operationId: "getSession",
        summary: "One session: credentials, state and clock",
        responses: { "200": json("The session.", ref("schemas", "SessionDetail")) },
        refusals: GUARDED,
      }),
      delete: op({
        operationId: "deleteSession",
        summary: "End a session",
        description: "Its merchants, tokens and rules are gone at once.",
        responses: { "204": { description: "Deleted.", headers: { "Cache-Control": ref("headers", "Cache-Control-NoStore") } } },
        refusals: GUARDED,
      }),
    },
    [sessionId],
  ),
  "/__sandbox/sessions/{id}/clock": path(
    {
      get: op({
        operationId: "getSessionClock",
        summary: "The session's clock",
        responses: { "200": json("Its clock.", ref("schemas", "Clock")) },
        refusals: GUARDED,
      }),
      post: op({
        operationId: "changeSessionClock",
        summary: "Move, set or freeze the session's clock",
        description: "Only this session's tokens and rules see the change: e.g. advance 61m to make its access tokens expire.",
        requestBody: clockBody,
        responses: { "200": json("The clock after the change.", ref("schemas", "Clock")) },
        refusals: CLOCK,
      }),
    },
    [sessionId],
  ),
  "/__sandbox/sessions/{id}/reset": path(
    {
      post: op({
        operationId: "resetSession",
        summary: "Back to a fresh start",
        description:
          "The session's scenario state, merchants and clock as they started; every token issued to it so far is revoked. Credentials stay the same.",
        responses: { "200": json("Reset.", ref("schemas", "SessionReset")) },
        refusals: POSTED,
      }),
    },
    [sessionId],
  ),
  "/__sandbox/sessions/{id}/actions": path(
    {
      post: op({
        operationId: "sessionActions",
        summary: "Break it now: run scenario actions on a session",
        description:
          "A scenario rule's actions, on this session only, validated as in a scenario file (unknown keys are refused with the nearest allowed one). `now`: the state changes of a rule's `then`, applied once, at once (revoke or expire all tokens, rotate the signing key or the secret, disable or enable the merchant, expire or revoke the payment token, login_gone, advance_clock, set_state). `next`: a rule put before the scenario's own that answers the session's next `times` requests (of `endpoint`, when given) with its `then` (respond, delay, drop_connection, reject_credentials, issue_token, and state changes too), then is spent; it shows as `<scenario>/action-<n>` in X-Sandbox-Rule and the journal. `merchant` limits both to one of the session's merchants. A reset removes the `next` rules. A refused request changes nothing. No secret is echoed: after `rotate_secret`, GET the session for its new api_secret.",
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: ref("schemas", "SessionActions"),
              examples: {
                revoke: { value: { now: { revoke_token: "all" } } },
                outage: { value: { next: { endpoint: "token", times: 3, then: { respond: { status: 503, retry_after: "30s" } } } } },
                slow: { value: { next: { times: 5, then: { delay: "2s" } } } },
              },
            },
          },
        },
        responses: { "200": json("What was done.", ref("schemas", "SessionActionsResult")) },
        refusals: [
          ...POSTED,
          "body_malformed_json",
          "body_not_object",
          "body_not_utf8",
          "session_action_invalid",
          "clock_out_of_range",
          "session_action_rules_full",
        ],
        notes: {
          ...NOTES,
          400: "The body is not valid actions (the message lists each problem at its path, with the allowed keys and the nearest one), names no merchant of this session, or would move the session's clock out of range; or a malformed JSON body. Nothing was changed.",
          429: "The session holds 100 pending `next` rules; wait for them to be spent, or reset it.",
        },
      }),
    },
    [sessionId],
  ),
  "/__sandbox/sessions/{id}/report": path(
    {
      get: op({
        operationId: "sessionReport",
        summary: "The integration report of one session",
        responses: { "200": json("Its findings.", ref("schemas", "SessionReport")) },
        refusals: GUARDED,
      }),
    },
    [sessionId],
  ),
  "/__sandbox/clock": path({
    get: op({
      operationId: "getClock",
      summary: "The sandbox clock",
      description: "The clock every scenario and session clock follows (scenarios may run at an offset from it).",
      responses: { "200": json("The clock.", ref("schemas", "Clock")) },
      refusals: GUARDED,
    }),
    post: op({
      operationId: "changeClock",
      summary: "Move, set or freeze the sandbox clock",
      requestBody: clockBody,
      responses: { "200": json("The clock after the change.", ref("schemas", "Clock")) },
      refusals: CLOCK,
    }),
  }),
  "/__sandbox/reset": path({
    post: op({
      operationId: "resetSandbox",
      summary: "The whole sandbox as it started",
      description: "Deletes every session, resets every scenario and the clock, revokes every token issued so far, and empties the journal.",
      responses: { "200": json("Reset.", ref("schemas", "SandboxReset")) },
      refusals: POSTED,
    }),
  }),
  "/__sandbox/requests": path({
    get: op({
      operationId: "listRequests",
      summary: "The redacted request journal",
      description: "The integration's requests (control-plane calls excluded), oldest first, from a bounded ring buffer.",
      parameters: [
        ...filters,
        {
          name: "since",
          in: "query",
          required: false,
          description: "Only entries after this request id (`req_12`) or ISO time.",
          schema: { type: "string" },
        },
        {
          name: "limit",
          in: "query",
          required: false,
          description: `At most this many, the newest (with \`since\`: the first this many after it). From 1 to ${JOURNAL_PAGE_MAX}, the default; a larger journal is read in pages with \`since\`.`,
          schema: { type: "integer", minimum: 1, maximum: JOURNAL_PAGE_MAX, default: JOURNAL_PAGE_MAX },
        },
      ],
      responses: { "200": json("The entries.", ref("schemas", "Journal")) },
      refusals: [...GUARDED, "unknown_parameter", "limit_invalid", "since_invalid"],
      notes: { ...NOTES, 400: `A parameter it does not take, a \`limit\` outside 1 to ${JOURNAL_PAGE_MAX}, or a bad \`since\`.` },
    }),
  }),
  "/__sandbox/report": path({
    get: op({
      operationId: "report",
      summary: "The integration report",
      description:
        "What the integration did wrong, read from the journal: a new token per call, an expired token reused, the JWT on payment/init, the deprecated login used, retries that ignore Retry-After … Each finding has a stable code, a severity and the ids of the requests that show it.",
      parameters: filters,
      responses: { "200": json("The findings.", ref("schemas", "Report")) },
      refusals: [...GUARDED, "unknown_parameter"],
      notes: { ...NOTES, 400: "A parameter it does not take." },
    }),
  }),
  "/__sandbox/events": path({
    get: op({
      operationId: "events",
      summary: "Live events: requests, findings, clock moves, session changes and history",
      description: [
        "Server-Sent Events, open until the client leaves or the sandbox closes (read it with `curl -N` or a streaming fetch that sends the admin token: an EventSource cannot send headers, and the token is never taken in the query).",
        "Each event is `event: <kind>`, `id: <req_N>` (the last journaled request; a `history` entry's own `req_N.M`; `overflow` has none) and one `data:` line of JSON:",
        "`request`: a journal entry exactly as GET /__sandbox/requests lists it (schema JournalEntry), its id its `req_N`;",
        "`findings`: `{session, findings}` (schema Finding), the report of a session with a stream of its own open, when its requests changed it (worked out 200 ms after a request, so at most five times a second however many requests come, off the requests' own path);",
        "`clock`: the sandbox clock (schema Clock) or a session's, `{session, now, frozen}`, when POST …/clock moved, set or froze it;",
        "`session`: `{change: created|reset|ended|actions, id, scenario, reason?: deleted|reaped, applied?: [action names], rule?: the next rule's name}`, never credentials;",
        "`history`: an entry of a session's history (schema HistoryEntry) as GET /__sandbox/sessions/{id} lists it, sent after the `clock` or `session` event of the same call, its id `req_N.M`;",
        "`overflow`: `{reason}`, the last event of a stream whose client fell more than its buffer behind (the stream then ends: reconnect with Last-Event-ID).",
        "Comment lines (`: …`) open the stream and keep it alive through proxies. With `session`, only that session's requests, findings, clock and changes (and the sandbox clock); without, every request and change, and the findings computed for the streams of a session (a session's findings are computed only while a stream of that session is open).",
        `\`Last-Event-ID\` (or \`since\`) replays the journal's requests and the sessions' history entries after that id first, in the order they happened, then the stream goes live (a session's history holds its last ${SESSION_HISTORY_MAX} entries). The replay counts against the stream's buffer: with more than \`--event-buffer-size\` events to replay, the stream sends that many, then \`overflow\`, and ends; reconnecting with the last id got sends the next ones.`,
      ].join(" "),
      parameters: [
        {
          name: "session",
          in: "query",
          required: false,
          description: "Only this session's events (and the sandbox clock's).",
          schema: { type: "string" },
        },
        {
          name: "since",
          in: "query",
          required: false,
          description:
            "Replay the journal's requests and the history entries after this id (`req_12`, or a history entry's `req_12.3`) first; as the Last-Event-ID header.",
          schema: { type: "string", pattern: "^req_[0-9]+(\\.[0-9]+)?$" },
        },
        {
          name: "Last-Event-ID",
          in: "header",
          required: false,
          description:
            "The id of the last event seen (`req_12`, `req_12.3`), sent on reconnect: the requests and history entries after it are replayed.",
          schema: { type: "string", pattern: "^req_[0-9]+(\\.[0-9]+)?$" },
        },
      ],
      responses: {
        "200": {
          description:
            "The stream (`content-type: text/event-stream`, no content-length, `x-accel-buffering: no`). A HEAD gets these headers and opens no stream.",
          headers: { "Cache-Control": ref("headers", "Cache-Control-NoStore") },
          content: { "text/event-stream": { schema: { type: "string", description: "Server-Sent Events as described above." } } },
        },
      },
      refusals: [...GUARDED, "unknown_parameter", "since_invalid", "too_many_subscribers"],
      notes: {
        ...NOTES,
        400: "A parameter it does not take, or a `since` / Last-Event-ID that is not a request id.",
        404: "No such session (deleted, reaped after being idle, never created), or the control plane is off.",
        429: "As many streams are open as the sandbox allows (maxEventSubscribers, default 32): close one, or raise the limit.",
      },
    }),
  }),
  "/__sandbox/tokens": path({
    post: op({
      operationId: "mintToken",
      summary: "Mint a token, valid or deliberately bad",
      description:
        "For clients that verify tokens themselves: one token of the catalogue for a merchant, with its header, claims and the code the sandbox answers for it on /api/v2/payment/*.",
      requestBody: {
        required: false,
        content: { "application/json": { schema: ref("schemas", "MintRequest"), example: { merchant: "sandbox-api-key", variant: "expired" } } },
      },
      responses: { "201": json("The token.", ref("schemas", "MintedToken")) },
      refusals: [...WITH_BODY, "mint_field_invalid", "mint_variant_unknown", "mint_ttl_invalid"],
      notes: { ...BODY_NOTES, 404: "No merchant with this api_key or id, or the control plane is off." },
    }),
  }),
  "/__sandbox/scan": path({
    post: op({
      operationId: "scanLogs",
      summary: "Find this sandbox's secrets in log text",
      description: `Where the text holds, in clear, a secret of a merchant the sandbox has known since it started (api_secret, a rotated one too, payment token or login password; of sessions that ended too, by fingerprint, the ${MAX_ENDED_SECRETS.toLocaleString("en")} most recently ended) or a JWT a key of this sandbox signed (access, login or minted token, expired or not, by a key in use, rotated out or of an ended session: its signature proves it). Each hit says where and what, never the secret. A JWT-shaped string no such key verifies is listed in \`unverified\` (after a restart the sandbox knows no key of before). The body is bounded by the size limit: send a large log in chunks of lines.`,
      requestBody: { required: true, content: { "application/json": { schema: ref("schemas", "ScanRequest") } } },
      responses: { "200": json("The hits and unverified JWTs (none when the text is clean).", ref("schemas", "ScanResult")) },
      refusals: [...WITH_BODY, "scan_text_missing", "scan_text_invalid", "payload_too_large"],
      notes: { ...BODY_NOTES, 413: "The body is over the limit: send fewer lines at a time." },
    }),
  }),
};
