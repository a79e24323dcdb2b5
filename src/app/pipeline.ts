import { answerFacts } from "../core/answer-shaper.js";
import type { RequestTrace } from "../core/context.js";
import { attributeMerchant, namesMerchant, presentedTokenId, type AttributionDeps } from "../core/attribution.js";
import { SandboxError, type StateUnavailable } from "../core/errors.js";
import type { ResponseStream, SandboxRequest, SandboxResponse } from "../core/http-types.js";
import { RequestBody } from "../core/json-body.js";
import { printable } from "../core/printable.js";
import { redactUrl } from "../core/redact.js";
import { unionOf } from "../core/secret-index.js";
import { sessionCredentialsMismatch } from "../core/session-binding.js";
import type { SandboxContext } from "./context.js";
import { controlScope, rulesScope } from "./shared/part-names.js";
import type { SharedRun } from "./shared/shared-run.js";
import { RefusalAnswers } from "./refusal-answers.js";
import { createRouter, underBase, UNROUTED } from "./routes.js";
import { dotSegmentRefusal, hasDotSegment } from "../core/dot-segments.js";
import { rulesMayFire, runRules, type ScenarioTrace } from "../scenarios/actions.js";
import { capJournalText, type JournalRecord, usesItsSession } from "../control/journal.js";
import { forcedExpiry } from "../core/forced-expiry.js";
import { analyze } from "../control/report.js";
import { rebaseLinks, sessionUrlUnknown } from "../control/session-url.js";
import { formRefusal } from "../endpoints/request-form.js";
import { SESSION_URL_PREFIX, sessionBasePath, splitSessionPath } from "../core/session-path.js";

/**
 * The request pipeline, one straight line per request: route, attribute the request to a merchant
 * (and so a scenario), run the scenario's rules, run the endpoint, map any refusal to a problem,
 * then log and journal what happened. Every adapter calls this and nothing else.
 */

/** One line of the request log. Values that could be secret are never here in clear. */
export interface RequestLogEntry {
  /** Wall-clock time the request arrived (ISO 8601). */
  time: string;
  method: string;
  path: string;
  /** The query string with secret-looking values redacted. */
  query: string;
  status: number;
  durationMs: number;
  endpoint: RequestTrace["endpoint"];
  scenario: string;
  /** The session whose base URL (`/s/{id}/...`) the request was sent under; `path` is the path under it. */
  session?: string;
  merchant?: string;
  tokenId?: string;
  /** The refusal's stable code, when the request was refused. */
  code?: string;
  /** `scenario/rule` of the scenario rules that fired. */
  rules?: string[];
}

export interface PipelineHooks {
  onRequest?: ((entry: RequestLogEntry) => void) | undefined;
  onInternalError?: ((error: unknown, entry: RequestLogEntry) => void) | undefined;
}

export function createPipeline(ctx: SandboxContext, hooks: PipelineHooks): (request: SandboxRequest, run?: SharedRun) => Promise<SandboxResponse> {
  const route = createRouter(ctx.settings, ctx.control.enabled);
  // A dotted path sent to the control plane (/__sandbox/…) stays the control plane's: refused, and
  // not journaled as the integration's request. Any other is refused unrouted.
  const dottedRoute = (sent: string) => {
    const sentTo = route(sent);
    return sentTo.name === "control" ? sentTo : UNROUTED;
  };
  // Made once: what attribution reads, current at each request (sessions add scenarios and their
  // payment-token transports as they come).
  const attribution: AttributionDeps = {
    registry: ctx.merchants,
    get transports() {
      return ctx.scenarios.paymentTokenTransports();
    },
    maxBodyBytes: ctx.settings.maxBodyBytes,
    credentialPrecedence: (merchant) => ctx.scenarios.of(merchant).settings.credentialPrecedence,
    provenSubject: (t) => ctx.tokens.provenSubject(t),
  };
  const refusals = new RefusalAnswers(() => ctx.merchants.secrets.view());
  // The log's time, formatted once per millisecond: under load ten or more requests share one, and
  // toISOString() was a tenth of the log line's cost.
  let isoMs = Number.NaN;
  let iso = "";
  const isoTime = (ms: number): string => {
    if (ms !== isoMs) {
      isoMs = ms;
      iso = new Date(ms).toISOString();
    }
    return iso;
  };
  /** `run`: this run of the request on a replica that shares its state (SharedState.wrap hands it over). */
  return async function handle(received: SandboxRequest, run?: SharedRun): Promise<SandboxResponse> {
    const started = performance.now();
    const arrivedMs = Date.now();
    // A request that waited for its body redacts what was a secret when it arrived or is one now.
    const current = ctx.merchants.secrets.view();
    const secrets = received.secretsAtArrival ? unionOf(received.secretsAtArrival, current) : current;
    // A path with dot segments (`..`, `%2e%2e`) is refused before anything is routed or read: a
    // prefix match would take /api/v2/payment/../cashout/x for a payment call.
    const dotted = hasDotSegment(received.path);
    // A session's base URL (/s/<id>/...) is taken off here, once: everything after sees the path
    // under it, as at the root. Every other request pays one string test.
    const base = !dotted && received.path.startsWith(SESSION_URL_PREFIX) ? splitSessionPath(received.path) : undefined;
    const session = base && ctx.sessions.active(base.id);
    // Under an unknown (or ended) session's base URL nothing more is read: the answer is its 404.
    const unknownBase = base !== undefined && session === undefined;
    const request = session ? { ...received, path: base!.rest } : received;
    // What the form check and the endpoint read (a HEAD as its GET); rules and the journal see `request`.
    const answered = asGet(request);
    const r = dotted ? dottedRoute(received.path) : base ? underBase(route(base.rest)) : route(request.path);
    // Decoded at most once, by whichever reads it first; carried on the trace to the endpoint.
    const body = new RequestBody(request.body);
    const claimed = dotted || unknownBase || !namesMerchant(r.name) ? undefined : await attributeMerchant(request, body, r.name, attribution);
    let attributed = claimed?.merchant;
    let refusal: SandboxError | undefined = unknownBase ? sessionUrlUnknown(base!.id) : undefined;
    if (session && attributed && ctx.scenarios.of(attributed) !== session.instance) {
      // Another merchant's credentials under this session's base URL: refused in this session's
      // name, and not read as that merchant's at all (no rules, no state, nothing in its journal).
      refusal = sessionCredentialsMismatch(session.id, r.name, ctx.scenarios.of(attributed).sessionId !== undefined);
      attributed = undefined;
    }
    const sessionId = attributed && ctx.scenarios.of(attributed).sessionId;
    // A session idle past its limit ends here, before its credentials can be used again (the
    // session of a base URL was checked when it was looked up).
    if (!base && sessionId && ctx.sessions.endIfIdle(sessionId)) attributed = undefined;
    // Redacted once, before anything can echo it: the log, the journal and the answer agree. Under
    // a session's base URL that is the path under it; an unknown session's URL is shown whole.
    const shown = redactUrl(request.path, request.query, secrets);
    // The session of the base URL, whatever the credentials; else the named merchant's scenario
    // shapes the answer (its settings), proven or not.
    const scenario = session ? session.instance : attributed ? ctx.scenarios.of(attributed) : ctx.scenarios.primary;
    const trace: ScenarioTrace = {
      endpoint: r.name,
      shown,
      body,
      scenario,
      // Who the request says it is; the endpoint confirms (or refuses) it.
      merchantId: attributed?.id,
      identityProven: attributed !== undefined && claimed!.proven,
      baseUrlSession: session?.id,
      effects: {},
      rules: [],
      facts: answerFacts(request.method, shown.path, scenario.clock),
    };
    // The request's form (method, size, media type, each credential one way), from the route table,
    // before its identity counts or any rule matches: a request refused for it proves nothing and
    // is no call (no rule, no counter, no finding); it is journaled as only naming its merchant.
    if (dotted) refusal = dotSegmentRefusal(trace.shown.path);
    const form = refusal === undefined && r.form ? formRefusal(r.form, answered, trace, ctx.settings.maxBodyBytes) : undefined;
    if (form) {
      refusal = form;
      trace.identityProven = false;
    }
    let response: SandboxResponse;
    let thrown: unknown;
    // Only a proven identity fires the merchant's rules (and counts towards their `calls`): a
    // request that merely names a merchant must not script what its real client sees. Nor does
    // a token in the query: the endpoint refuses it whatever a rule would answer.
    const proven = refusal === undefined && trace.identityProven && !claimed!.fromQuery ? attributed : undefined;
    const rulesFire = refusal === undefined && rulesMayFire(trace, proven);
    // Shared state: a request that may change it runs alone on this replica, and its commit holds
    // only if what it read is unchanged (app/shared/shared-state.ts).
    if (run && refusal === undefined) {
      if (r.name === "control" ? !READS.has(request.method) : rulesFire)
        await run.exclusive(r.name === "control" ? controlScope(request.path) : rulesScope(scenario.sessionId));
    }
    try {
      if (refusal) throw refusal;
      const scripted = rulesFire ? await runRules(request, ctx, trace, proven) : undefined;
      response = scripted ?? (await r.endpoint(answered, ctx, trace));
      if (r.headers) response = { ...response, headers: { ...response.headers, ...r.headers } };
      // A HEAD has GET's headers (no content-length either) and no body: the stream is never opened.
      if (response.stream && request.method === "HEAD") {
        response.stream.cancel();
        response = { ...response, stream: ENDED_STREAM };
      }
    } catch (e) {
      thrown = e;
      // The merchant API's refusals in the scenario's response profile (none for oauth, and never
      // for the control plane); the code journaled and logged below stays the sandbox's.
      const shaper = r.name === "control" ? undefined : trace.scenario.shaper;
      response = refusals.answer(e, trace.shown.path, shaper, r.headers, secrets, trace.facts, r.refusalGroup);
    }
    // A profile's headers (a request id …) on every answer of the merchant API, shaped or not.
    const shaper = trace.scenario.shaper;
    if (shaper && r.name !== "control" && r.name !== "jwks" && !response.dropConnection) response = shaper.finish(response, trace.facts);
    if (session) response = { ...response, headers: rebaseLinks(response.headers, sessionBasePath(session.id)) };
    // Say which scenario rules shaped this answer: scripted behaviour is never mistaken for real.
    if (trace.rules.length > 0 && !response.dropConnection) {
      const names = printable(trace.rules.join(", "), 1000);
      response = { ...response, headers: { ...response.headers, "x-sandbox-rule": names } };
    }
    const outcome: Outcome = {
      arrivedMs,
      path: trace.shown.path,
      query: trace.shown.query,
      status: response.dropConnection ? 0 : response.status,
      durationMs: Math.round((performance.now() - started) * 1000) / 1000,
      code: thrown instanceof SandboxError ? thrown.code : thrown !== undefined ? "internal_error" : undefined,
      viaSessionUrl: base !== undefined,
    };
    // The log line is built only when something listens (formatting a date costs more than the rest).
    if (hooks.onRequest || outcome.code === "internal_error") {
      const log = (unavailable: StateUnavailable | undefined) => {
        const entry = logEntry(
          request.method,
          trace,
          unavailable ? { ...outcome, status: unavailable.status, code: unavailable.code } : outcome,
          isoTime(outcome.arrivedMs),
        );
        if (outcome.code === "internal_error") hooks.onInternalError?.(thrown, entry);
        hooks.onRequest?.(entry);
      };
      // Shared state: logged once the request's commit is stored (a run that lost a race is not).
      if (run) run.whenCommitted(log);
      else log(undefined);
    }
    // The journal is about the integration's requests; control-plane calls would only drown them.
    if (trace.endpoint !== "control") record(ctx, request, trace, outcome, response, run);
    return response;
  };
}

/** Control-plane methods that change nothing. */
const READS = new Set(["GET", "HEAD"]);

/** A stream that ends as soon as it is opened: what a HEAD of a streaming answer sends. */
const ENDED_STREAM: ResponseStream = {
  open(sink) {
    sink.end();
    return () => {};
  },
  cancel() {},
};

/**
 * HEAD is GET without the body (RFC 9110 §9.3.2): every endpoint answers it as GET, so the status,
 * the headers and the Content-Length the adapter sends are GET's own (a body that named the method,
 * a 405's message or a placeholder's operation, would make the length lie). Rules and the journal
 * still see the HEAD the client sent.
 */
function asGet(request: SandboxRequest): SandboxRequest {
  return request.method === "HEAD" ? { ...request, method: "GET" } : request;
}

function logEntry(method: string, trace: ScenarioTrace, outcome: Outcome, time: string): RequestLogEntry {
  const entry: RequestLogEntry = {
    time,
    method,
    path: outcome.path,
    query: outcome.query,
    status: outcome.status,
    durationMs: outcome.durationMs,
    endpoint: trace.endpoint,
    scenario: trace.scenario.name,
  };
  if (outcome.viaSessionUrl && trace.scenario.sessionId) entry.session = trace.scenario.sessionId;
  if (trace.merchantId) entry.merchant = trace.merchantId;
  if (trace.tokenId) entry.tokenId = trace.tokenId;
  if (outcome.code) entry.code = outcome.code;
  if (trace.rules.length) entry.rules = trace.rules;
  return entry;
}

interface Outcome {
  arrivedMs: number;
  /** The path and query with JWT-shaped and secret-looking values redacted. */
  path: string;
  query: string;
  status: number;
  durationMs: number;
  code: string | undefined;
  /** Sent under a session's base URL (`/s/{id}/...`), known or not; `path` is then the path under it. */
  viaSessionUrl: boolean;
}

/**
 * The journal record of a request of the integration (control-plane calls are not journaled).
 * Times stay numbers here; the journal formats them when it is read, not on every request.
 */
function record(
  ctx: SandboxContext,
  request: SandboxRequest,
  trace: ScenarioTrace,
  outcome: Outcome,
  response: SandboxResponse,
  /** The request's run on a replica that shares its state. */
  run: SharedRun | undefined,
): void {
  const session = trace.scenario.sessionId;
  const rec: JournalRecord = {
    timeMs: outcome.arrivedMs,
    sandboxTimeMs: trace.scenario.clock.now(),
    method: request.method,
    // Cut here, before anything stores it: a shared store holds what reaches its commit.
    path: capJournalText(outcome.path),
    query: capJournalText(outcome.query),
    status: outcome.status,
    durationMs: outcome.durationMs,
    endpoint: trace.endpoint,
    scenario: trace.scenario.file.name,
  };
  if (session) rec.session = session;
  if (trace.merchantId) rec.merchant = trace.merchantId;
  if (trace.merchantId && !trace.identityProven) rec.unverified = true;
  if (trace.tokenId) rec.tokenId = trace.tokenId;
  if (trace.tokenExpiresAtMs !== undefined) rec.tokenExpiresAtMs = trace.tokenExpiresAtMs;
  // A verified token's id is known already; only a refused one needs decoding.
  if (trace.endpoint !== "token" && trace.endpoint !== "login") {
    const presented = trace.tokenId ?? presentedTokenId(request);
    if (presented) rec.presentedTokenId = presented;
  }
  if (outcome.code) rec.code = outcome.code;
  if (outcome.code === "token_expired" && rec.presentedTokenId) {
    const forced = forcedExpiry(ctx.ledger, trace.scenario.clock, rec.presentedTokenId);
    if (forced) rec.tokenExpiry = forced;
  }
  if (trace.rules.length) rec.rules = trace.rules;
  const retryAfterHeader = response.headers["retry-after"];
  if (retryAfterHeader !== undefined && Number.isFinite(Number(retryAfterHeader))) rec.retryAfter = Number(retryAfterHeader);
  if (trace.credentialSources) rec.credentialSources = trace.credentialSources;
  if (trace.loginToken) rec.loginToken = true;
  if (outcome.query !== request.query) rec.secretInQuery = true;
  if (outcome.viaSessionUrl) rec.viaSessionUrl = true;
  if (session && usesItsSession(rec)) {
    // Shared: at the request's arrival, the time every replica reads from its journal entry.
    ctx.sessions.touch(session, run ? outcome.arrivedMs : undefined);
    run?.touch(session);
  }
  // Shared state: stored with the request's commit, and journaled on every replica from the feed.
  if (run) {
    run.journalRecord(rec);
    return;
  }
  ctx.journal.add(rec);
  // One test when no event stream is open: nothing is built for streams nobody reads.
  if (ctx.events.active) publishRequest(ctx, session);
}

/** The entry just journaled to the event streams, and its session's findings when they changed. */
function publishRequest(ctx: SandboxContext, session: string | undefined): void {
  const entry = ctx.journal.latest()!;
  ctx.events.publish("request", entry.id, entry, session);
  if (session && ctx.events.watches(session)) {
    ctx.events.findingsChanged(session, () => ({ id: ctx.journal.lastId(), findings: analyze(ctx.journal.list({ session })) }));
  }
}
