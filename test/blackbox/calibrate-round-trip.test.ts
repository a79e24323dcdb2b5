import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { BUILT_IN_PROFILES } from "../../src/profiles/builtins.js";
import { MAX_PROBES } from "../../src/cli/calibrate/probe.js";
import { runCliToEnd, startCliServer } from "../support/cli.js";

/**
 * The round trip on ourselves: `calibrate` against the sandbox serving a built-in profile writes a
 * profile under which the sandbox answers every request calibrate probes (and the expired token)
 * exactly as that built-in does: status, headers, challenge, body or no body, texts. Per-request
 * values (tokens, ids, times) are compared by shape. The one header that differs by design is
 * X-Sandbox-Explanation, which every profile-shaped refusal carries and the `oauth` built-in (no
 * renderer at all) does not.
 */

const MERCHANT = {
  apiKey: "sandbox-api-key",
  apiSecret: "sandbox-api-secret",
  paymentToken: "sandbox-payment-token",
  email: "merchant@sandbox.test",
  password: "sandbox-password",
};
const PROTECTED = "/api/v2/payment/status";

type Server = Awaited<ReturnType<typeof startCliServer>>;

const cli = (args: string[]) => runCliToEnd(args);

async function stop(server: Server): Promise<void> {
  server.child.kill();
  await server.exited;
}

async function mintExpired(url: string): Promise<string> {
  const r = await fetch(`${url}/__sandbox/tokens`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ variant: "expired" }),
  });
  expect(r.status).toBe(201);
  return ((await r.json()) as { token: string }).token;
}

/** A value as a client compares it across runs: tokens, ids and times by their shape. */
function shape(text: string): string {
  return text
    .replace(/eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g, "<jwt>")
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?(Z|\+00:00)/g, "<time>")
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<uuid>")
    .replace(/pay_[a-z0-9]+/g, "<payment>")
    .replace(/"token_id":"[^"]+"/g, '"token_id":"<jti>"');
}

const IGNORED = new Set(["date", "connection", "keep-alive", "content-length", "transfer-encoding", "x-sandbox-explanation", "x-sandbox-rule"]);

interface Seen {
  request: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The requests calibrate probes, sent to one sandbox, each answer as a client sees it. */
async function transcript(url: string, foreign: string, unprobed: boolean): Promise<Seen[]> {
  const token = await firstToken(url);
  const expired = await mintExpired(url);
  const json = (body: unknown) => ({ "content-type": "application/json", body: JSON.stringify(body) });
  const requests: Array<[string, string, string, Record<string, string>]> = [
    ["token by body", "POST", "/api/v2/auth/token", json({ api_key: MERCHANT.apiKey, api_secret: MERCHANT.apiSecret })],
    ["token by headers", "POST", "/api/v2/auth/token", { "x-api-key": MERCHANT.apiKey, "x-api-secret": MERCHANT.apiSecret }],
    ["wrong secret", "POST", "/api/v2/auth/token", json({ api_key: MERCHANT.apiKey, api_secret: "wrong-secret" })],
    ["unknown key", "POST", "/api/v2/auth/token", json({ api_key: "calibrate-unknown-key", api_secret: "x-secret" })],
    ["missing secret", "POST", "/api/v2/auth/token", json({ api_key: MERCHANT.apiKey })],
    ["missing key", "POST", "/api/v2/auth/token", json({ api_secret: "calibrate-unknown-secret" })],
    ["malformed json", "POST", "/api/v2/auth/token", { "content-type": "application/json", body: '{"api_key": ' }],
    ["protected", "GET", PROTECTED, { authorization: `Bearer ${token}` }],
    ["no authorization", "GET", PROTECTED, {}],
    ["basic", "GET", PROTECTED, { authorization: "Basic Y2FsaWJyYXRlOmNhbGlicmF0ZQ==" }],
    ["empty bearer", "GET", PROTECTED, { authorization: "Bearer" }],
    ["payment token as bearer", "GET", PROTECTED, { authorization: `Bearer ${MERCHANT.paymentToken}` }],
    ["not a jwt", "GET", PROTECTED, { authorization: "Bearer calibrate-not-a-jwt" }],
    ["foreign jwt", "GET", PROTECTED, { authorization: `Bearer ${foreign}` }],
    ["expired", "GET", PROTECTED, { authorization: `Bearer ${expired}` }],
    ["init with jwt", "POST", "/api/v2/payment/init", { authorization: `Bearer ${token}`, "content-type": "application/json", body: "{}" }],
    [
      "init unknown token",
      "POST",
      "/api/v2/payment/init",
      { authorization: "Bearer calibrate-unknown-payment-token", "content-type": "application/json", body: "{}" },
    ],
    [
      "init",
      "POST",
      "/api/v2/payment/init",
      {
        authorization: `Bearer ${MERCHANT.paymentToken}`,
        "content-type": "application/json",
        body: JSON.stringify({ amount: 100, currency: "EUR", order_id: "o-1" }),
      },
    ],
    ["login", "POST", "/api/login_check", json({ username: MERCHANT.email, password: MERCHANT.password })],
    ["wrong password", "POST", "/api/login_check", json({ username: MERCHANT.email, password: "wrong-password" })],
  ];
  // Not probed: the token route's refusal template, filled with this refusal's own values (the type,
  // error, text and instance of the wrong secret must not stick to it). What an unprobed code of
  // another shape looks like (Lexik's kernel 405 on payment/init) no probe shows: docs/profiles.md.
  if (unprobed) requests.push(["wrong method on the token route", "GET", "/api/v2/auth/token", {}]);
  const seen: Seen[] = [];
  for (const [request, method, path, { body, ...headers }] of requests) {
    const r = await fetch(url + path, { method, headers: { accept: "application/json", ...headers }, body });
    const kept: Record<string, string> = {};
    for (const [name, value] of r.headers) if (!IGNORED.has(name)) kept[name] = shape(value);
    seen.push({ request, status: r.status, headers: kept, body: shape(await r.text()) });
  }
  return seen;
}

async function firstToken(url: string): Promise<string> {
  const r = await fetch(`${url}/api/v2/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ api_key: MERCHANT.apiKey, api_secret: MERCHANT.apiSecret }),
  });
  const text = await r.text();
  const jwt = /eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/.exec(text)?.[0];
  expect(jwt, text).toBeDefined();
  return jwt!;
}

const dir = mkdtempSync(join(tmpdir(), "calibrate-round-trip-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let foreign: string;
beforeAll(async () => {
  const { privateKey } = await generateKeyPair("RS256");
  const now = Math.floor(Date.now() / 1000);
  foreign = await new SignJWT({ sub: "merchant_sandbox_default", iat: now, exp: now + 300 })
    .setProtectedHeader({ alg: "RS256", kid: "merchant-sandbox-calibrate-foreign-key" })
    .sign(privateKey);
});

async function calibrate(builtIn: Server, out: string, extra: string[] = []): Promise<{ code: number | string; stdout: string; stderr: string }> {
  return cli([
    "calibrate",
    "--url",
    builtIn.url,
    "--api-key",
    MERCHANT.apiKey,
    "--api-secret",
    MERCHANT.apiSecret,
    "--payment-token",
    MERCHANT.paymentToken,
    "--login",
    `${MERCHANT.email}:${MERCHANT.password}`,
    "--expired-token",
    await mintExpired(builtIn.url),
    "--allow-writes",
    ...extra,
    out.startsWith("--check") ? "--check" : "--out",
    out.replace(/^--check /, ""),
  ]);
}

describe.each(["oauth", "lexik", "spring", "laravel"])("round trip: calibrate against the sandbox serving the %s profile", (name) => {
  const file = join(dir, `${name}-calibrated.yaml`);
  let builtIn: Server;
  let written: { code: number | string; stdout: string; stderr: string };
  beforeAll(async () => {
    builtIn = await startCliServer(["--profile", name]);
    written = await calibrate(builtIn, file);
  });
  afterAll(() => stop(builtIn));

  it("writes a profile (exit 0) in at most MAX_PROBES probes, the requests counted", () => {
    expect(written.stderr).toBe("");
    expect(written.code).toBe(0);
    const sent = Number(/\((\d+) requests sent\)/.exec(written.stdout)?.[1]);
    expect(sent).toBeGreaterThanOrEqual(24);
    expect(sent).toBeLessThanOrEqual(MAX_PROBES);
    for (const secret of [MERCHANT.apiSecret, MERCHANT.paymentToken, MERCHANT.password]) expect(readFileSync(file, "utf8")).not.toContain(secret);
    expect(readFileSync(file, "utf8")).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}/);
  });

  it("values that track the code, the message or the path are placeholders: the sandbox serving it answers every probe as the built-in does", async () => {
    const calibrated = await startCliServer(["--profile", file]);
    try {
      // Laravel's 405 text names the route and the methods: a text no probe saw, so not learnt.
      const expected = await transcript(builtIn.url, foreign, name !== "laravel");
      const actual = await transcript(calibrated.url, foreign, name !== "laravel");
      for (let i = 0; i < expected.length; i++) expect(actual[i], expected[i]!.request).toEqual(expected[i]);
    } finally {
      await stop(calibrated);
    }
  });

  it("--check against the same sandbox is clean (exit 0): per-request values are compared by shape", async () => {
    const check = await calibrate(builtIn, `--check ${file}`);
    expect(check.stderr).toBe("");
    expect(check.stdout).toMatch(/^The provider still answers as .* says \(\d+ requests sent\)\.$/m);
    expect(check.code).toBe(0);
  });
});

// biome-ignore lint/suspicious/noExplicitAny: a built-in profile changed member by member, as a provider's drift would
type Loose = any;

describe("calibrate --check against a sandbox whose profile drifted", () => {
  const base = structuredClone(BUILT_IN_PROFILES.lexik!) as Loose;
  // A Laravel-style request id on every answer and in the protected body, to be learnt as per-request.
  base.name = "drift-base";
  base.headers = { ...base.headers, "X-Request-Id": "{{request_id}}" };
  base.protected = { body: { success: true, data: "{{sandbox}}", request_id: "{{request_id}}" } };
  const drifted = structuredClone(base);
  drifted.codes.token_expired = { ...drifted.codes.token_expired, message: "JWT Token expired" };
  drifted.codes.credentials_missing = { status: 401, empty: true, wwwAuthenticate: "Bearer" };
  drifted.codes.wrong_api_secret = { ...drifted.codes.wrong_api_secret, status: 403 };
  drifted.token = { body: { jwt: "{{access_token}}" } };
  drifted.protected = { headers: { "X-RateLimit-Remaining": "99" }, body: base.protected.body };
  const baseFile = join(dir, "drift-base.yaml");
  const driftedFile = join(dir, "drift-drifted.yaml");
  const learnt = join(dir, "drift-learnt.yaml");
  let before: Server;
  let after: Server;
  beforeAll(async () => {
    writeFileSync(baseFile, YAML.stringify(base));
    writeFileSync(driftedFile, YAML.stringify(drifted));
    before = await startCliServer(["--profile", baseFile]);
    after = await startCliServer(["--profile", driftedFile]);
    const run = await calibrate(before, learnt);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
  });
  afterAll(async () => {
    await stop(before);
    await stop(after);
  });

  it("learns the request id as {{request_id}} (uuid) in the header and the body", () => {
    const profile = YAML.parse(readFileSync(learnt, "utf8"));
    expect(profile.requestId).toBe("uuid");
    expect(profile.headers["X-Request-Id"]).toBe("{{request_id}}");
    expect(profile.protected.body).toEqual({ success: true, data: "{{sandbox}}", request_id: "{{request_id}}" });
  });

  it("exits 0 against the unchanged sandbox: new request ids every call are no difference", async () => {
    const check = await calibrate(before, `--check ${learnt}`);
    expect(check.stdout).toMatch(/^The provider still answers as .* says/m);
    expect(check.code).toBe(0);
  });

  it("exits 1 on a message text, a body become empty, a status, a renamed field and a header that appeared: one line each", async () => {
    const check = await calibrate(after, `--check ${learnt}`);
    expect(check.stderr).toBe("");
    expect(check.code).toBe(1);
    const lines = check.stdout.split("\n");
    const line = (re: RegExp) =>
      expect(
        lines.filter((l) => re.test(l)),
        String(re),
      ).toHaveLength(1);
    line(/^codes\.token_expired\.message +Expired JWT Token +JWT Token expired$/);
    line(/^codes\.credentials_missing\.body +a body +no body \(empty\)$/);
    line(/^codes\.wrong_api_secret\.status +401 +403$/);
    line(/^token\.body: token +token: \{\{access_token\}\} +renamed to jwt$/);
    line(/^protected\.headers: x-ratelimit-remaining +\(absent\) +appeared: 99$/);
    expect(check.stdout).toMatch(/\n5 differences: recalibrate/);
  });
});
