import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { errors as joseErrors, generateKeyPair, jwtVerify, SignJWT } from "jose";

/**
 * A fake payment provider's test environment for the calibrate tests: a bare node:http server with
 * the merchant API's routes, answering in the shapes its ProviderSpec gives, issuing JWTs of its
 * own that expire on its own clock. It counts requests and the most it had in flight at once, and
 * can answer 429 to chosen requests, so tests see how calibrate behaves towards a provider.
 */

export type RefusalKind =
  | "bad_credentials"
  | "unknown_key"
  | "missing_secret"
  | "malformed_json"
  | "no_token"
  | "invalid_token"
  | "expired_token"
  | "jwt_on_payment_init"
  | "unknown_payment_token"
  | "bad_login";

export interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface ProviderSpec {
  alg: "RS256" | "ES256" | "HS256";
  typ: string;
  ttlSeconds: number;
  /** The token's claims besides iat, exp and jti. */
  claims: (merchantId: string) => Record<string, unknown>;
  token: (jwt: string, ttlSeconds: number, expSeconds: number) => Answer;
  refusal: (kind: RefusalKind) => Answer;
  paymentInit: (paymentId: string) => Answer;
  /** The deprecated login's success, if the provider has one. */
  login?: (jwt: string) => Answer;
}

export interface Credentials {
  apiKey: string;
  apiSecret: string;
  paymentToken: string;
  email: string;
  password: string;
  merchantId: string;
}

export interface ProviderOptions {
  /** Answer 429 with `Retry-After: <value>` to these request numbers (1-based). */
  rateLimit?: { requests: number[]; retryAfter: string };
}

export interface RunningProvider {
  url: string;
  credentials: Credentials;
  /** Every token it issued: none may reach a profile or calibrate's output. */
  issued: string[];
  requests(): number;
  maxInFlight(): number;
  /** A token that expired a minute ago, for --expired-token. */
  expiredToken(): Promise<string>;
  /** Moves the provider's clock on, so its tokens expire. */
  advanceClock(ms: number): void;
  close(): Promise<void>;
}

export async function startProvider(spec: ProviderSpec, credentials: Credentials, options: ProviderOptions = {}): Promise<RunningProvider> {
  const { privateKey, publicKey } =
    spec.alg === "HS256"
      ? { privateKey: new TextEncoder().encode(randomUUID() + randomUUID()), publicKey: undefined }
      : await generateKeyPair(spec.alg, { extractable: true });
  const verifyKey = publicKey ?? privateKey;
  const kid = `${spec.alg.toLowerCase()}-key-1`;
  let offsetMs = 0;
  const issued: string[] = [];
  const nowSeconds = () => Math.floor((Date.now() + offsetMs) / 1000);

  const sign = async (iat: number) => {
    const jwt = await new SignJWT({ ...spec.claims(credentials.merchantId), jti: randomUUID() })
      .setProtectedHeader({ alg: spec.alg, typ: spec.typ, kid })
      .setIssuedAt(iat)
      .setExpirationTime(iat + spec.ttlSeconds)
      .sign(privateKey);
    issued.push(jwt);
    return jwt;
  };

  const handle = async (req: IncomingMessage, raw: string): Promise<Answer> => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path === "/api/v2/auth/token" && req.method === "POST") {
      let body: Record<string, unknown> = {};
      if (raw.trim() !== "") {
        try {
          body = JSON.parse(raw) as Record<string, unknown>;
        } catch {
          return spec.refusal("malformed_json");
        }
      }
      const key = (body.api_key as string | undefined) ?? header(req, "x-api-key");
      const secret = (body.api_secret as string | undefined) ?? header(req, "x-api-secret");
      if (!key || !secret) return spec.refusal("missing_secret");
      if (key !== credentials.apiKey) return spec.refusal("unknown_key");
      if (secret !== credentials.apiSecret) return spec.refusal("bad_credentials");
      const iat = nowSeconds();
      return spec.token(await sign(iat), spec.ttlSeconds, iat + spec.ttlSeconds);
    }
    if (path === "/api/login_check" && req.method === "POST" && spec.login) {
      const body = JSON.parse(raw || "{}") as Record<string, unknown>;
      if (body.username !== credentials.email || body.password !== credentials.password) return spec.refusal("bad_login");
      return spec.login(await sign(nowSeconds()));
    }
    const bearer = /^Bearer (.+)$/.exec(header(req, "authorization") ?? "")?.[1];
    if (path === "/api/v2/payment/init" && req.method === "POST") {
      if (!bearer) return spec.refusal("no_token");
      if (bearer.split(".").length === 3) return spec.refusal("jwt_on_payment_init");
      if (bearer !== credentials.paymentToken) return spec.refusal("unknown_payment_token");
      return spec.paymentInit(`pay_${randomUUID().replace(/-/g, "").slice(0, 16)}`);
    }
    if (/^\/api\/v2\/(payment|cashout)\//.test(path)) {
      if (!bearer) return spec.refusal("no_token");
      try {
        await jwtVerify(bearer, verifyKey, { algorithms: [spec.alg], currentDate: new Date(nowSeconds() * 1000) });
      } catch (e) {
        return spec.refusal(e instanceof joseErrors.JWTExpired ? "expired_token" : "invalid_token");
      }
      return { status: 200, body: { ok: true, path } };
    }
    return { status: 404, body: { message: "Not Found" } };
  };

  const listening = await listenProvider((req, raw, n) => {
    const limited = options.rateLimit?.requests.includes(n);
    const answer: Promise<Answer> = limited
      ? Promise.resolve({ status: 429, body: { message: "Slow down" }, headers: { "retry-after": options.rateLimit!.retryAfter } })
      : handle(req, raw);
    return answer.then((a) => ({ status: a.status, headers: { "content-type": "application/json", ...a.headers }, body: JSON.stringify(a.body) }));
  });
  return {
    ...listening,
    credentials,
    issued,
    expiredToken: () => sign(nowSeconds() - spec.ttlSeconds - 60),
    advanceClock: (ms) => {
      offsetMs += ms;
    },
  };
}

/** One answer of a fake provider as it goes on the wire: status, headers in order, the body's exact text (none if undefined). */
export interface WireAnswer {
  status: number;
  headers: Record<string, string>;
  body?: string;
}

/**
 * The server of every fake provider (startProvider here, startFrameworkProvider in framework-kit.ts):
 * listens on a free loopback port and answers each request, once its body is read, with `answer`
 * (given the request's number, from 1); a failed answer is a 500 saying so. It counts the requests
 * and the most it had in flight at once.
 */
export async function listenProvider(
  answer: (req: IncomingMessage, body: string, n: number) => Promise<WireAnswer>,
): Promise<Pick<RunningProvider, "url" | "requests" | "maxInFlight" | "close">> {
  let count = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const n = ++count;
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    let body = "";
    req.setEncoding("utf8").on("data", (d: string) => (body += d));
    req.on("end", () => {
      void answer(req, body, n).then(
        (a) => {
          inFlight--;
          res.writeHead(a.status, a.headers);
          res.end(a.body);
        },
        (e: unknown) => {
          inFlight--;
          res.writeHead(500, { "Content-Type": "text/plain" });
          res.end(`fake provider crashed: ${(e as Error).message}`);
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => count,
    maxInFlight: () => maxInFlight,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
