import { request as httpRequest } from "node:http";
import { describe, expect, it } from "vitest";
import type { RequestLogEntry } from "../../src/app/sandbox.js";
import {
  DEFAULT_PAYMENT_TOKEN,
  DEFAULT_SECRET,
  postJson,
  type startTestServer,
  type Reply,
  type TestServer,
  serversPerTest,
} from "../support/server.js";

/**
 * Secrets in the URL (issue 10 §4): a JWT or a merchant's api_secret, password or payment token put
 * anywhere in the path or query, in any encoding, appears in clear neither in the log line, nor in
 * the journal, nor in the answer (the 200 placeholder's operation, a 404 detail, a 405 message,
 * a problem's instance).
 */

const PASSWORD = "sandbox-password";
const startServer = serversPerTest();

/** A server for the current test, and the log lines it writes. */
async function start(options: Parameters<typeof startTestServer>[0] = {}): Promise<{ t: TestServer; log: RequestLogEntry[] }> {
  const log: RequestLogEntry[] = [];
  const t = await startServer({ onRequest: (e) => log.push(e), ...options });
  return { t, log };
}

/** The journal as the control plane serves it. */
async function journal(server: TestServer): Promise<string> {
  const r = await server.call("/__sandbox/requests");
  expect(r.status).toBe(200);
  return r.text;
}

/** The secret is nowhere: in clear, nor percent-encoded in any way a reader could undo. */
function expectAbsent(where: string, text: string, secret: string): void {
  for (const form of [secret, encodeURIComponent(secret), secret.slice(4)]) {
    expect(text, `${where} holds ${JSON.stringify(form)}`).not.toContain(form);
  }
}

async function expectNowhere(server: TestServer, log: RequestLogEntry[], reply: Reply, secret: string): Promise<void> {
  expectAbsent("the answer", reply.text + JSON.stringify([...reply.headers]), secret);
  expect(log.length).toBeGreaterThan(0);
  expectAbsent("the log", JSON.stringify(log), secret);
  expectAbsent("the journal", await journal(server), secret);
}

/**
 * A POST to `path` whose headers the server has received and whose 2-byte body is held back:
 * resolves once the server has the request; `finish()` sends the rest and resolves with the answer.
 */
async function bodyHeldBack(t: TestServer, path: string): Promise<{ finish(): Promise<{ status: number; text: string }> }> {
  const arrived = new Promise<void>((resolve) => t.server.server.once("request", () => resolve()));
  const upload = httpRequest(`${t.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "content-length": "2" } });
  const answered = new Promise<{ status: number; text: string }>((resolve, reject) => {
    upload.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode!, text }));
    });
    upload.on("error", reject);
  });
  upload.write("{");
  await arrived;
  return {
    finish() {
      upload.end("}");
      return answered;
    },
  };
}

describe("secrets in the URL are redacted in the log, the journal and the answer", () => {
  it("regression: a JWT after Bearer%20 in a query value (?h=Bearer%20<JWT>) is redacted", async () => {
    const { t, log } = await start();
    const jwt = await t.token();
    const r = await t.call(`/api/v2/payment/status?h=Bearer%20${jwt}`, { headers: { authorization: `Bearer ${jwt}` } });
    expect(r.status).toBe(200);
    expect(log.at(-1)!.query).toMatch(/^h=Bearer eyJh\.\.\.\(\d+ chars, sha256:[0-9a-f]{8}\)$/);
    await expectNowhere(t, log, r, jwt);
  });

  it("regression: a JWT followed by a comma in a query value (?h=<JWT>,) is redacted", async () => {
    const { t, log } = await start();
    const jwt = await t.token();
    const r = await t.call(`/api/v2/payment/status?h=${jwt},`, { headers: { authorization: `Bearer ${jwt}` } });
    expect(r.status).toBe(200);
    expect(log.at(-1)!.query).toMatch(/^h=eyJh\.\.\.\(\d+ chars, sha256:[0-9a-f]{8}\),$/);
    await expectNowhere(t, log, r, jwt);
  });

  it.each([
    ["a matrix parameter after it (/payment/<JWT>;v=1)", (jwt: string) => `${jwt};v=1`, /^eyJh\.\.\.\(\d+ chars, sha256:[0-9a-f]{8}\);v=1$/],
    ["a prefix (/payment/t=<JWT>)", (jwt: string) => `t=${jwt}`, /^t=eyJh\.\.\.\(\d+ chars, sha256:[0-9a-f]{8}\)$/],
    ["an encoded '#' before it (/payment/x%23<JWT>)", (jwt: string) => `x%23${jwt}`, /^x#eyJh\.\.\.\(\d+ chars, sha256:[0-9a-f]{8}\)$/],
  ])("regression: a JWT inside a path segment with %s is redacted in the log, journal and the 200 operation", async (_, segment, shown) => {
    const { t, log } = await start();
    const jwt = await t.token();
    const r = await t.call(`/api/v2/payment/${segment(jwt)}`, { headers: { authorization: `Bearer ${jwt}` } });
    expect(r.status).toBe(200);
    expect(r.json.operation).toMatch(/^GET \/api\/v2\/payment\//);
    expect(r.json.operation.slice("GET /api/v2/payment/".length)).toMatch(shown);
    expect(log.at(-1)!.path.slice("/api/v2/payment/".length)).toMatch(shown);
    await expectNowhere(t, log, r, jwt);
  });

  it("regression: an api_secret as a path segment (/cashout/<api_secret>) is redacted, in the 200 operation too", async () => {
    const { t, log } = await start();
    const jwt = await t.token();
    const r = await t.call(`/api/v2/cashout/${DEFAULT_SECRET}`, { headers: { authorization: `Bearer ${jwt}` } });
    expect(r.status).toBe(200);
    expect(r.json.operation).toBe("GET /api/v2/cashout/sand...(18 chars, sha256:27872975)");
    expect(log.at(-1)!.path).toBe("/api/v2/cashout/sand...(18 chars, sha256:27872975)");
    await expectNowhere(t, log, r, DEFAULT_SECRET);
  });

  it("regression: an api_secret in a query value with an innocent name (?q=<api_secret>) is redacted", async () => {
    const { t, log } = await start();
    const jwt = await t.token();
    const r = await t.call(`/api/v2/payment/status?q=${DEFAULT_SECRET}&page=2`, { headers: { authorization: `Bearer ${jwt}` } });
    expect(r.status).toBe(200);
    expect(log.at(-1)!.query).toBe("q=sand...(18 chars, sha256:27872975)&page=2");
    await expectNowhere(t, log, r, DEFAULT_SECRET);
  });

  it("regression: a payment token in a query value (?ref=<payment token>), percent-encoded in mixed case, is redacted", async () => {
    const { t, log } = await start();
    const jwt = await t.token();
    const r = await t.call(`/api/v2/payment/status?ref=sandbox%2dpayment%2Dtoken`, { headers: { authorization: `Bearer ${jwt}` } });
    expect(r.status).toBe(200);
    expect(log.at(-1)!.query).toBe("ref=sand...(21 chars, sha256:dde768bd)");
    await expectNowhere(t, log, r, DEFAULT_PAYMENT_TOKEN);
  });

  it("regression: a password in the path of the login (/api/login_check/<password>) is redacted in the 404 detail", async () => {
    const { t, log } = await start();
    const r = await t.call(`/api/login_check/${PASSWORD}`, { method: "POST" });
    expect(r.status).toBe(404);
    expect(r.json.instance).toBe("/api/login_check/sand...(16 chars, sha256:5369724f)");
    expect(r.json.detail).toMatch(/^No endpoint at POST \/api\/login_check\/sand\.\.\.\(16 chars, sha256:5369724f\)\. /);
    await expectNowhere(t, log, r, PASSWORD);
  });

  it("regression: a secret double-encoded in a 404 path (%2573andbox...) is redacted in the detail", async () => {
    const { t, log } = await start();
    const r = await t.call(`/nothing/%2573andbox-api-secret`);
    expect(r.status).toBe(404);
    expect(r.json.instance).toBe("/nothing/sand...(18 chars, sha256:27872975)");
    await expectNowhere(t, log, r, DEFAULT_SECRET);
  });

  it("regression: a secret in the path of a control-plane 405 is redacted in its message", async () => {
    const { t, log } = await start();
    const r = await t.call(`/__sandbox/sessions/${DEFAULT_SECRET}`, { method: "POST" });
    expect(r.status).toBe(405);
    expect(r.json.detail).toBe("POST is not allowed on /__sandbox/sessions/sand...(18 chars, sha256:27872975). Use GET, HEAD or DELETE.");
    expectAbsent("the answer", r.text, DEFAULT_SECRET);
    expectAbsent("the log", JSON.stringify(log), DEFAULT_SECRET);
  });

  it("regression: the secrets of a session's merchant are redacted while the session lives", async () => {
    const { t, log } = await start();
    const created = await t.call("/__sandbox/sessions", postJson({}));
    expect(created.status).toBe(201);
    const m = created.json.merchant as { api_secret: string; payment_token: string; login: { password: string } };
    for (const secret of [m.api_secret, m.payment_token, m.login.password]) {
      const r = await t.call(`/somewhere/x${secret}y?v=${encodeURIComponent(encodeURIComponent(secret))}`);
      expect(r.status).toBe(404);
      expectAbsent("the answer", r.text, secret);
      expectAbsent("the log", JSON.stringify(log), secret);
      expectAbsent("the journal", await journal(t), secret);
    }
  });

  it("regression: a session's secret in the URL of a request whose body was still uploading when the session ended is redacted", async () => {
    const { t, log } = await start();
    const created = await t.call("/__sandbox/sessions", postJson({}));
    expect(created.status).toBe(201);
    const secret = (created.json.merchant as { api_secret: string }).api_secret;
    // The headers arrive and the body is held back until the session has ended.
    const upload = await bodyHeldBack(t, `/somewhere/${secret}`);
    expect((await t.call(`/__sandbox/sessions/${created.json.id}`, { method: "DELETE" })).status).toBe(204);
    const r = await upload.finish();
    expect(r.status).toBe(404);
    expect(log.at(-1)!.path).toMatch(/^\/somewhere\/.{4}\.\.\.\(\d+ chars, sha256:[0-9a-f]{8}\)$/);
    expectAbsent("the answer", r.text, secret);
    expectAbsent("the log", JSON.stringify(log), secret);
    expectAbsent("the journal", await journal(t), secret);
  });

  it("regression: a secret set while a request's body was still uploading (a length no secret had) is redacted in that request's URL", async () => {
    const { t, log } = await start();
    const created = await t.call("/__sandbox/sessions", postJson({}));
    expect(created.status).toBe(201);
    // 41 characters: no secret the sandbox made has that length.
    const secret = "NewlyChosenSecret-abcdefghijklmnopqrstuvw";
    const upload = await bodyHeldBack(t, `/somewhere?k=${secret}`);
    const rotated = await t.call(`/__sandbox/sessions/${created.json.id}/actions`, postJson({ now: { rotate_secret: secret } }));
    expect(rotated.status).toBe(200);
    const r = await upload.finish();
    expect(r.status).toBe(404);
    expect(log.at(-1)!.query).toMatch(/^k=Newl\.\.\.\(41 chars, sha256:[0-9a-f]{8}\)$/);
    expectAbsent("the answer", r.text, secret);
    expectAbsent("the log", JSON.stringify(log), secret);
    expectAbsent("the journal", await journal(t), secret);
  });

  it("regression: a rotated api_secret (scenario rotate_secret) is redacted too", async () => {
    const { t, log } = await start({ scenarios: ["secret-rotated"] });
    const scenario = t.sandbox.scenario("secret-rotated")!;
    const merchant = scenario.merchants[0]!;
    const before = merchant.apiSecret;
    // The rule rotates the secret on the second token exchange of this merchant.
    for (let i = 0; i < 2; i++) await t.call("/api/v2/auth/token", postJson({ api_key: merchant.apiKey, api_secret: before }));
    const rotated = merchant.apiSecret;
    expect(rotated).not.toBe(before);
    for (const secret of [before, rotated]) {
      const r = await t.call(`/nothing/${secret}`);
      expect(r.status).toBe(404);
      expectAbsent("the answer", r.text, secret);
    }
    expectAbsent("the log", JSON.stringify(log), rotated);
    expectAbsent("the log", JSON.stringify(log), before);
  });

  it("regression: a secret as a session id is redacted in the control plane's 404 detail", async () => {
    const { t } = await start();
    const r = await t.call(`/__sandbox/sessions/${DEFAULT_SECRET}`);
    expect(r.status).toBe(404);
    expect(r.json.detail).toMatch(/^There is no session 'sand\.\.\.\(18 chars, sha256:27872975\)': /);
    expectAbsent("the answer", r.text, DEFAULT_SECRET);
  });

  it("regression: a secret as an unknown query key of GET /__sandbox/requests is redacted in the 400 detail", async () => {
    const { t } = await start();
    const r = await t.call(`/__sandbox/requests?${DEFAULT_PAYMENT_TOKEN}=1`);
    expect(r.status).toBe(400);
    expect(r.json.detail).toMatch(/^GET \/__sandbox\/requests does not take 'sand\.\.\.\(21 chars, sha256:dde768bd\)'; /);
    expectAbsent("the answer", r.text, DEFAULT_PAYMENT_TOKEN);
  });
});

describe("the admin token is redacted wherever a URL or an echoed value carries it (issue 23 §7)", () => {
  const ADMIN = "the-admin-token-0123456789";
  const admin = { "x-admin-token": ADMIN };

  it("regression: GET /api/v2/payment/<T>, /nothing/<T>, a session, events and actions named <T>, ?since=<T>: T in clear nowhere", async () => {
    const { t, log } = await start({ adminToken: ADMIN });
    const session = await t.call("/__sandbox/sessions", postJson({}, admin));
    expect(session.status).toBe(201);
    const replies = [
      await t.call(`/api/v2/payment/${ADMIN}`),
      await t.call(`/nothing/${ADMIN}`),
      await t.call(`/api/v2/payment/status?q=${ADMIN}`),
      await t.call(`/__sandbox/sessions/${ADMIN}`, { headers: admin }),
      await t.call(`/__sandbox/events?session=${ADMIN}`, { headers: admin }),
      await t.call(`/__sandbox/requests?since=${ADMIN}`, { headers: admin }),
      await t.call(`/__sandbox/sessions/${session.json.id}/actions`, postJson({ merchant: ADMIN, now: { login_gone: true } }, admin)),
    ];
    expect(replies.map((r) => r.status)).toEqual([401, 404, 401, 404, 404, 400, 400]);
    const shown = /the-\.\.\.\(26 chars, sha256:[0-9a-f]{8}\)/;
    expect(replies[3]!.json.detail).toMatch(new RegExp(`^There is no session '${shown.source}'`));
    expect(replies[4]!.json.detail).toMatch(new RegExp(`^There is no session '${shown.source}'`));
    expect(replies[6]!.json.detail).toMatch(new RegExp(`merchant: '${shown.source}' is not a merchant of session`));
    for (const r of replies) expectAbsent("the answer", r.text + JSON.stringify([...r.headers]), ADMIN);
    // Six of them carry it in the URL (the actions in the body): each log line shows it redacted.
    expect(log.map((e) => e.path + e.query).filter((shownUrl) => shown.test(shownUrl))).toHaveLength(6);
    expectAbsent("the log", JSON.stringify(log), ADMIN);
    const journal = await t.call("/__sandbox/requests", { headers: admin });
    expect(journal.status).toBe(200);
    expectAbsent("the journal", journal.text, ADMIN);
  });
});
