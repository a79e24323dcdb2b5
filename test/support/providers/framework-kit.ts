import { type Credentials, listenProvider, type ProviderOptions, type RunningProvider } from "./kit.js";

/**
 * The harness of the framework fakes (lexik.ts, spring.ts, laravel.ts): a bare node:http server
 * that hands each request to the framework's app and writes exactly the status, headers and body
 * bytes the app gives, nothing else of its own (node adds Date, Connection and Content-Length, as
 * the real servers do). The app reads the time from the provider's clock, which a test moves on
 * to expire tokens. Same RunningProvider as kit.ts, so calibrate's tests use either.
 */

/** The kinds of change `calibrate --check` must report; each fake maps each kind onto one answer. */
export const DRIFTS = [
  "renamed-field",
  "removed-field",
  "added-field",
  "status",
  "code",
  "message",
  "challenge",
  "content-type",
  "body-empty",
  "body-nonempty",
  "header-appeared",
  "header-disappeared",
] as const;
export type Drift = (typeof DRIFTS)[number];

export interface FrameworkOptions extends ProviderOptions {
  /** The provider after an unannounced release that changed this one thing (see each fake's DRIFT table). */
  drift?: Drift;
}

export interface FrameworkRequest {
  method: string;
  /** The path without the query. */
  path: string;
  query: URLSearchParams;
  /** The URL as the app sees it, without the query (Laravel's `$request->url()`). */
  url: string;
  /** Lower-case names, the first value of each. */
  headers: Record<string, string | undefined>;
  body: string;
}

export interface RawAnswer {
  status: number;
  /** In the order the framework writes them. */
  headers: Record<string, string>;
  /** The exact bytes; undefined: no body at all. */
  body?: string;
}

export interface Clock {
  nowMs(): number;
  nowSeconds(): number;
}

export interface FrameworkApp {
  handle(req: FrameworkRequest): RawAnswer | Promise<RawAnswer>;
  /** A token of the app's own that is past its expiry and skew by a minute, for --expired-token. */
  expiredToken(): string;
}

export interface AppContext {
  clock: Clock;
  credentials: Credentials;
  /** Push every token the app issues: none may reach a profile or calibrate's output. */
  issued: string[];
  drift: Drift | undefined;
}

export async function startFrameworkProvider(
  makeApp: (ctx: AppContext) => Promise<FrameworkApp>,
  credentials: Credentials,
  options: FrameworkOptions = {},
  /**
   * The provider's public origin, as its app sees it behind its proxy (Symfony/Laravel trusted
   * proxies, Spring's forwarded headers): stable across runs, unlike the port a test listens on,
   * so a URL in a token or an answer (tymon's `iss`) is the same for calibrate and for --check.
   */
  publicOrigin?: string,
): Promise<RunningProvider> {
  let offsetMs = 0;
  const issued: string[] = [];
  const clock: Clock = {
    nowMs: () => Date.now() + offsetMs,
    nowSeconds: () => Math.floor((Date.now() + offsetMs) / 1000),
  };
  const app = await makeApp({ clock, credentials, issued, drift: options.drift });

  const listening = await listenProvider((req, body, n) => {
    const url = new URL(req.url ?? "/", publicOrigin ?? `http://${req.headers.host ?? "localhost"}`);
    const headers: Record<string, string | undefined> = {};
    for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v[0] : v;
    if (options.rateLimit?.requests.includes(n))
      return Promise.resolve({
        status: 429,
        headers: { "Content-Type": "application/json", "Retry-After": options.rateLimit.retryAfter },
        body: '{"message":"Slow down"}',
      });
    return Promise.resolve(
      app.handle({ method: req.method ?? "GET", path: url.pathname, query: url.searchParams, url: `${url.origin}${url.pathname}`, headers, body }),
    );
  });
  return {
    ...listening,
    credentials,
    issued,
    expiredToken: async () => app.expiredToken(),
    advanceClock: (ms) => {
      offsetMs += ms;
    },
  };
}

/** The credentials a request to the token route carries: JSON body members, else the X-Api-* headers. */
export function tokenCredentials(req: FrameworkRequest, json: Record<string, unknown> | undefined): { key: unknown; secret: unknown } {
  return { key: json?.api_key ?? req.headers["x-api-key"], secret: json?.api_secret ?? req.headers["x-api-secret"] };
}

/** JSON.parse of a request body: undefined for an empty body, "invalid" when it is not a JSON object. */
export function parseJsonObject(body: string): Record<string, unknown> | undefined | "invalid" {
  if (body.trim() === "") return undefined;
  try {
    const v = JSON.parse(body) as unknown;
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : "invalid";
  } catch {
    return "invalid";
  }
}

/** A payment id of the fakes' payment/init (the value differs per request, as a real one does). */
export function paymentId(): string {
  return `pay_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
}
