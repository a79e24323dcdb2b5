import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_KEY, DEFAULT_PAYMENT_TOKEN, DEFAULT_SECRET, postJson, type Reply, startTestServer, type TestServer } from "../support/server.js";

/**
 * The built-in profiles copied from real frameworks (src/profiles/builtins.ts names the files and
 * revisions), over real HTTP: every answer whole — status, the headers a client reads, the exact
 * body bytes or no body at all — so a client written for that framework's texts and challenges
 * meets them here. The sandbox's own explanation travels in X-Sandbox-Explanation.
 */

const TOKEN = "/api/v2/auth/token";
const PROTECTED = "/api/v2/payment/orders";
const LOGIN = "/api/login_check";
const RFC6750 = "https://tools.ietf.org/html/rfc6750#section-3.1";

/** What a client of the framework reads of an answer. */
interface Seen {
  status: number;
  contentType: string | null;
  challenge: string | null;
  body: string;
}

function seen(r: Reply): Seen {
  return { status: r.status, contentType: r.headers.get("content-type"), challenge: r.headers.get("www-authenticate"), body: r.text };
}

const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

/** An access token for the default merchant, from the token answer of whichever profile serves. */
async function tokenOf(t: TestServer): Promise<string> {
  const r = await t.call(TOKEN, postJson({ api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET }));
  expect(r.status).toBe(200);
  return r.json.token ?? r.json.access_token;
}

/** The situations every framework profile answers, each one request on a reset sandbox. */
const SITUATIONS = {
  wrongSecret: (t: TestServer) => t.call(TOKEN, postJson({ api_key: DEFAULT_KEY, api_secret: "wrong-secret-1234" })),
  missingSecret: (t: TestServer) => t.call(TOKEN, postJson({ api_key: DEFAULT_KEY })),
  noToken: (t: TestServer) => t.call(PROTECTED),
  basicScheme: (t: TestServer) => t.call(PROTECTED, { headers: { authorization: "Basic dXNlcjpwYXNz" } }),
  garbageToken: (t: TestServer) => t.call(PROTECTED, bearer("not-a-jwt")),
  expiredToken: async (t: TestServer) => {
    const token = await tokenOf(t);
    expect((await t.call("/__sandbox/clock", postJson({ advance: "2h" }))).status).toBe(200);
    return t.call(PROTECTED, bearer(token));
  },
  wrongLogin: (t: TestServer) => t.call(LOGIN, postJson({ username: "merchant@sandbox.test", password: "wrong-password" })),
  wrongMethod: (t: TestServer) => t.call(TOKEN),
  jwtOnPaymentInit: async (t: TestServer) => t.call("/api/v2/payment/init", { ...postJson({ amount: 1 }), ...bearer(await tokenOf(t)) }),
} as const;

type Situation = keyof typeof SITUATIONS;

const lexikFailure = (message: string): Seen => ({
  status: 401,
  contentType: "application/json",
  challenge: "Bearer",
  body: JSON.stringify({ code: 401, message }),
});
const symfonyProblem = (status: number, detail: string): Seen => ({
  status,
  contentType: "application/json",
  challenge: null,
  body: JSON.stringify({ type: "https://tools.ietf.org/html/rfc2616#section-10", title: "An error occurred", status, detail }),
});
const springChallenge = (status: number, challenge: string): Seen => ({ status, contentType: null, challenge, body: "" });
const springDecode = (reason: string) =>
  springChallenge(
    401,
    `Bearer error="invalid_token", error_description="An error occurred while attempting to decode the Jwt: ${reason}", error_uri="${RFC6750}"`,
  );
const bootError = (status: number, error: string, path: string, at: string): Seen => ({
  status,
  contentType: "application/json",
  challenge: null,
  body: JSON.stringify({ timestamp: at, status, error, path }),
});
const laravel = (status: number, body: unknown, challenge: string | null = null): Seen => ({
  status,
  contentType: "application/json",
  challenge,
  body: JSON.stringify(body),
});

const EXPECTED: Record<string, Record<Situation, Seen>> = {
  lexik: {
    wrongSecret: lexikFailure("Invalid credentials."),
    missingSecret: symfonyProblem(400, "Bad Request"),
    noToken: lexikFailure("JWT Token not found"),
    basicScheme: lexikFailure("JWT Token not found"),
    garbageToken: lexikFailure("Invalid JWT Token"),
    expiredToken: lexikFailure("Expired JWT Token"),
    wrongLogin: lexikFailure("Invalid credentials."),
    wrongMethod: symfonyProblem(405, "Method Not Allowed"),
    jwtOnPaymentInit: lexikFailure("Invalid credentials."),
  },
  spring: {
    wrongSecret: bootError(401, "Unauthorized", TOKEN, "2026-01-01T00:00:00.000+00:00"),
    missingSecret: bootError(400, "Bad Request", TOKEN, "2026-01-01T00:00:00.000+00:00"),
    noToken: springChallenge(401, "Bearer"),
    basicScheme: springChallenge(401, "Bearer"),
    garbageToken: springDecode("Malformed token"),
    expiredToken: springDecode("Jwt expired at 2026-01-01T01:00:00Z"),
    wrongLogin: bootError(401, "Unauthorized", LOGIN, "2026-01-01T00:00:00.000+00:00"),
    wrongMethod: bootError(405, "Method Not Allowed", TOKEN, "2026-01-01T00:00:00.000+00:00"),
    jwtOnPaymentInit: bootError(401, "Unauthorized", "/api/v2/payment/init", "2026-01-01T00:00:00.000+00:00"),
  },
  laravel: {
    wrongSecret: laravel(401, { error: "Unauthorized" }),
    missingSecret: laravel(422, { message: "The api secret field is required.", errors: { api_secret: ["The api secret field is required."] } }),
    noToken: laravel(401, { message: "Token not provided" }, "jwt-auth"),
    basicScheme: laravel(401, { message: "Token not provided" }, "jwt-auth"),
    garbageToken: laravel(401, { message: "Wrong number of segments" }, "jwt-auth"),
    expiredToken: laravel(401, { message: "Token has expired" }, "jwt-auth"),
    wrongLogin: laravel(401, { error: "Unauthorized" }),
    wrongMethod: laravel(405, { message: "The GET method is not supported for route api/v2/auth/token. Supported methods: POST." }),
    jwtOnPaymentInit: laravel(401, { message: "Unauthorized" }),
  },
};

describe.each(Object.keys(EXPECTED))("the %s built-in profile answers as its framework does", (name) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ profile: name });
  });
  afterAll(() => t.close());

  it.each(
    Object.keys(SITUATIONS) as Situation[],
  )("%s: the framework's status, challenge and body, the sandbox's explanation beside them", async (situation) => {
    t.sandbox.reset();
    try {
      const r = await SITUATIONS[situation](t);
      expect(seen(r)).toEqual(EXPECTED[name]![situation]);
      // The fix-it text is never lost: a header a client written for the framework does not read.
      expect(r.headers.get("x-sandbox-explanation")).toMatch(/^[\x20-\x7e]{20,}$/);
      // The code the journal and the report see stays the sandbox's (the login answers its
      // refusal itself, as Lexik's body under every profile, and journals its status only).
      if (situation !== "wrongLogin") expect(t.sandbox.journal.list({}).at(-1)?.code).toMatch(/^[a-z_]+$/);
    } finally {
      t.sandbox.reset();
    }
  });

  it("a success carries no explanation header, and the token works on a protected call", async () => {
    const token = await tokenOf(t);
    const r = await t.call(PROTECTED, bearer(token));
    expect(r.status).toBe(200);
    expect(r.headers.get("x-sandbox-explanation")).toBeNull();
    const init = await t.call("/api/v2/payment/init", { ...postJson({ amount: 1 }), ...bearer(DEFAULT_PAYMENT_TOKEN) });
    expect(init.status).toBe(201);
  });
});

describe("the laravel profile's protected answer and the spring profile's headers", () => {
  it("laravel wraps a protected call's 200 in {success, data}", async () => {
    const t = await startTestServer({ profile: "laravel" });
    try {
      const r = await t.call(PROTECTED, bearer(await tokenOf(t)));
      expect(r.status).toBe(200);
      expect(r.json.success).toBe(true);
      expect(r.json.data.merchant_id).toBe("merchant_sandbox_default");
      expect(Object.keys(r.json)).toEqual(["success", "data"]);
    } finally {
      await t.close();
    }
  });

  it("spring sends Spring Security's default headers on every answer, refusals included", async () => {
    const t = await startTestServer({ profile: "spring" });
    try {
      for (const r of [await t.call(PROTECTED), await t.call(TOKEN, postJson({ api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET }))]) {
        expect(r.headers.get("cache-control")).toBe("no-cache, no-store, max-age=0, must-revalidate");
        expect(r.headers.get("x-content-type-options")).toBe("nosniff");
        expect(r.headers.get("x-frame-options")).toBe("DENY");
      }
    } finally {
      await t.close();
    }
  });
});
