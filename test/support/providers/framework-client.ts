/**
 * What the framework clients (lexik-client.ts, spring-client.ts, laravel-client.ts) share: the
 * merchant's settings, one HTTP call that records its status for the transcript, and the shape of
 * a step's result. Each client branches on what its framework's clients branch on; what it does
 * not expect fails the step with a message saying what it saw (never a token: JWTs are cut out).
 */
export interface ClientSettings {
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  paymentToken: string;
  email: string;
  password: string;
}

export type Outcome = "ok" | "refused" | "failed";

export interface StepResult {
  outcome: Outcome;
  /** What the client decided, in its own words. */
  decision: string;
}

export interface FrameworkClient {
  /** The statuses of every answer since the last `startStep`, in order. */
  readonly statuses: number[];
  startStep(): void;
  /** The kept token (the last one issued to this client), or undefined. */
  token: string | undefined;
  /** POST /api/v2/auth/token with the credentials in the JSON body or the X-Api-* headers; keeps the token. */
  authenticate(via: "body" | "headers", omit?: "api_secret"): Promise<StepResult>;
  /** A protected GET with the kept token (none if undefined), renewing or re-authenticating as the client does. */
  callProtected(path: string): Promise<StepResult>;
  /** POST /api/v2/payment/init with this bearer. */
  initPayment(bearer: string): Promise<StepResult>;
  /** The deprecated login; keeps its token. */
  login(): Promise<StepResult>;
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

export function httpRecorder(statuses: number[]) {
  return async (url: string, init: RequestInit & { headers?: Record<string, string> } = {}): Promise<Reply> => {
    const res = await fetch(url, init);
    const text = await res.text();
    statuses.push(res.status);
    let json: unknown;
    try {
      json = text === "" ? undefined : (JSON.parse(text) as unknown);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json };
  };
}

/** What an answer was, for a failed step's message: status, type, challenge, body (JWTs cut out, at most 160 characters). */
export function described(r: Reply): string {
  const type = r.headers.get("content-type");
  const challenge = r.headers.get("www-authenticate");
  const body = r.text === "" ? "no body" : JSON.stringify(redactJwts(r.text).slice(0, 160));
  return `HTTP ${r.status}${type ? ` ${type}` : " no content-type"}${challenge ? ` WWW-Authenticate ${JSON.stringify(challenge)}` : ""}, ${body}`;
}

export function redactJwts(s: string): string {
  return s.replace(/eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*/g, "<jwt>");
}

export function isJwt(v: unknown): v is string {
  return typeof v === "string" && /^eyJ[A-Za-z0-9_-]*\.eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+$/.test(v);
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export const ok = (decision: string): StepResult => ({ outcome: "ok", decision });
export const refused = (decision: string): StepResult => ({ outcome: "refused", decision });
export const failed = (decision: string): StepResult => ({ outcome: "failed", decision });

/**
 * The protected call as every client makes it: the call; on "renew" or "re-authenticate" a new
 * token and one more call. `classify` reads a non-200 answer in the framework's terms.
 */
export type Verdict = { act: "renew" | "reauthenticate"; why: string } | StepResult;

export async function protectedWithRetry(
  client: FrameworkClient,
  call: () => Promise<Reply>,
  accept: (r: Reply) => StepResult,
  classify: (r: Reply) => Verdict,
): Promise<StepResult> {
  const first = await call();
  if (first.status === 200) return accept(first);
  const verdict = classify(first);
  if (!("act" in verdict)) return verdict;
  const renewed = await client.authenticate("body");
  if (renewed.outcome !== "ok") return { outcome: renewed.outcome, decision: `${verdict.why}: ${verdict.act} failed: ${renewed.decision}` };
  const second = await call();
  const done = second.status === 200 ? accept(second) : classify(second);
  if ("act" in done) return failed(`${verdict.why}: ${verdict.act}, then again ${done.why}`);
  return {
    outcome: done.outcome,
    decision: `${verdict.why}: ${verdict.act === "renew" ? "renewed the token" : "re-authenticated"}, retried: ${done.decision}`,
  };
}

/** The merchant API requests every framework client sends, the same bytes for each (only the reading differs). */
export function merchantRequests(settings: ClientSettings, statuses: number[]) {
  const http = httpRecorder(statuses);
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    http(settings.baseUrl + path, {
      method: "POST",
      headers: { accept: "application/json", ...(body !== undefined && { "content-type": "application/json" }), ...headers },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
  return {
    token(via: "body" | "headers", omit?: "api_secret"): Promise<Reply> {
      const secret = omit === "api_secret" ? undefined : settings.apiSecret;
      return via === "body"
        ? post("/api/v2/auth/token", { api_key: settings.apiKey, ...(secret !== undefined && { api_secret: secret }) })
        : post("/api/v2/auth/token", undefined, { "x-api-key": settings.apiKey, ...(secret !== undefined && { "x-api-secret": secret }) });
    },
    get: (path: string, token: string | undefined) =>
      http(settings.baseUrl + path, { headers: { accept: "application/json", ...(token !== undefined && { authorization: `Bearer ${token}` }) } }),
    initPayment: (bearer: string) => post("/api/v2/payment/init", { amount: 1999, currency: "EUR" }, { authorization: `Bearer ${bearer}` }),
    login: () => post("/api/login_check", { username: settings.email, password: settings.password }),
  };
}

/**
 * How one framework's clients read its answers; the requests, the kept token and the retry are
 * the same for every framework (`frameworkClient`). `path` is the route the answer came from.
 */
export interface FrameworkReading {
  /** A refusal (any status but the route's success) in the framework's terms: act on it, or the step's result. */
  classify(r: Reply, path: string): Verdict;
  /** An answer of the token or login route: the token to keep, or the step's result (a refusal read with `classify`). */
  tokenOf(r: Reply, path: string): string | StepResult;
  /** A protected GET's 200. */
  protectedAnswer(r: Reply): StepResult;
  /** payment/init's 201. */
  created(r: Reply): StepResult;
  /** What a refused payment/init that asks to renew or re-authenticate is reported as, e.g. "payment/init refused". */
  initRefused: string;
}

export function frameworkClient(settings: ClientSettings, read: FrameworkReading): FrameworkClient {
  const statuses: number[] = [];
  const send = merchantRequests(settings, statuses);
  const keepToken = (r: Reply, path: string): StepResult => {
    const token = read.tokenOf(r, path);
    if (typeof token !== "string") return token;
    client.token = token;
    return ok("kept the token");
  };
  const client: FrameworkClient = {
    statuses,
    token: undefined,
    startStep: () => {
      statuses.length = 0;
    },
    async authenticate(via, omit) {
      return keepToken(await send.token(via, omit), "/api/v2/auth/token");
    },
    callProtected(path) {
      return protectedWithRetry(
        client,
        () => send.get(path, client.token),
        read.protectedAnswer,
        (r) => read.classify(r, path),
      );
    },
    async initPayment(bearer) {
      const r = await send.initPayment(bearer);
      if (r.status === 201) return read.created(r);
      const v = read.classify(r, "/api/v2/payment/init");
      return "act" in v ? refused(`${read.initRefused}: ${v.why}`) : v;
    },
    async login() {
      return keepToken(await send.login(), "/api/login_check");
    },
  };
  return client;
}
