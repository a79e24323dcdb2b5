import type { RequestTrace, SandboxContext } from "./context.js";
import { attributeMerchant, presentedTokenId } from "./attribution.js";
import { SandboxError } from "./errors.js";
import type { SandboxRequest, SandboxResponse } from "./http-types.js";
import { printable } from "./printable.js";
import { problemResponse } from "./problem.js";
import { redactQuery } from "./redact.js";
import { route } from "./router.js";
import { runRules } from "../scenarios/actions.js";

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

export function createPipeline(ctx: SandboxContext, hooks: PipelineHooks): (request: SandboxRequest) => Promise<SandboxResponse> {
  return async function handle(request: SandboxRequest): Promise<SandboxResponse> {
    const started = performance.now();
    const r = route(request.path);
    let attributed = attributeMerchant(request, r.name, ctx.merchants, ctx.scenarios.paymentTokenTransports(), ctx.settings.maxBodyBytes, (t) =>
      ctx.tokens.peek(t),
    );
    const sessionId = attributed && ctx.scenarios.of(attributed).sessionId;
    // A session idle past its limit ends here, before its credentials can be used again.
    if (sessionId && ctx.sessions.endIfIdle(sessionId)) attributed = undefined;
    const trace: RequestTrace = {
      endpoint: r.name,
      scenario: attributed ? ctx.scenarios.of(attributed) : ctx.scenarios.primary,
      // Who the request says it is; the endpoint confirms (or refuses) it.
      ...(attributed ? { merchantId: attributed.id } : {}),
      effects: {},
      rules: [],
    };
    let response: SandboxResponse;
    let thrown: unknown;
    try {
      response = (await runRules(request, ctx, trace, attributed)) ?? (await r.endpoint(request, ctx, trace));
      if (r.headers) response = { ...response, headers: { ...response.headers, ...r.headers(ctx, trace) } };
    } catch (e) {
      thrown = e;
      response = problemResponse(e, request.path, r.headers?.(ctx, trace));
    }
    // Say which scenario rules shaped this answer: scripted behaviour is never mistaken for real.
    if (trace.rules.length > 0 && !response.dropConnection) {
      const names = printable(trace.rules.join(", "), 1000);
      response = { ...response, headers: { ...response.headers, "x-sandbox-rule": names } };
    }
    const entry: RequestLogEntry = {
      time: new Date().toISOString(),
      method: request.method,
      path: request.path,
      query: redactQuery(request.query),
      status: response.dropConnection ? 0 : response.status,
      durationMs: Math.round((performance.now() - started) * 1000) / 1000,
      endpoint: trace.endpoint,
      scenario: trace.scenario.name,
      ...(trace.merchantId ? { merchant: trace.merchantId } : {}),
      ...(trace.tokenId ? { tokenId: trace.tokenId } : {}),
      ...(thrown instanceof SandboxError ? { code: thrown.code } : thrown ? { code: "internal_error" } : {}),
      ...(trace.rules.length ? { rules: trace.rules } : {}),
    };
    if (thrown !== undefined && !(thrown instanceof SandboxError)) hooks.onInternalError?.(thrown, entry);
    hooks.onRequest?.(entry);
    // The journal is about the integration's requests; control-plane calls would only drown them.
    if (trace.endpoint !== "control") record(ctx, request, trace, entry, response);
    return response;
  };
}

/** The journal entry of a request of the integration (control-plane calls are not journaled). */
function record(ctx: SandboxContext, request: SandboxRequest, trace: RequestTrace, entry: RequestLogEntry, response: SandboxResponse): void {
  const session = trace.scenario.sessionId;
  if (session) ctx.sessions.touch(session);
  // A verified token's id is known already; only a refused one needs decoding.
  const presented = trace.endpoint === "token" || trace.endpoint === "login" ? undefined : (trace.tokenId ?? presentedTokenId(request));
  const retryAfter = Number(response.headers["retry-after"]);
  ctx.journal.add({
    time: entry.time,
    sandboxTime: new Date(trace.scenario.clock.now()).toISOString(),
    method: entry.method,
    path: entry.path,
    query: entry.query,
    status: entry.status,
    durationMs: entry.durationMs,
    endpoint: entry.endpoint,
    scenario: trace.scenario.file.name,
    ...(session && { session }),
    ...(entry.merchant && { merchant: entry.merchant }),
    ...(entry.tokenId && { tokenId: entry.tokenId }),
    ...(presented && { presentedTokenId: presented }),
    ...(entry.code && { code: entry.code }),
    ...(entry.rules && { rules: entry.rules }),
    ...(Number.isFinite(retryAfter) && response.headers["retry-after"] !== undefined && { retryAfter }),
    ...(trace.credentialSources && { credentialSources: trace.credentialSources }),
    ...(entry.query !== request.query && { secretInQuery: true }),
  });
}
