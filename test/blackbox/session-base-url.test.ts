import { decodeJwt } from "jose";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { RequestLogEntry } from "../../src/app/sandbox.js";
import { redact } from "../../src/core/redact.js";
import {
  DEFAULT_KEY,
  DEFAULT_SECRET,
  T0,
  postJson,
  problem,
  type Reply,
  requestWithRepeatedHeaders,
  serversPerTest,
  type TestServer,
  createSession,
  type SessionAnswer,
  type SessionMerchant,
} from "../support/server.js";
import { expectProblem } from "../support/expect.js";

/**
 * Session base URLs (issue 13): `/s/{session_id}/...` serves the merchant API as the root does, and
 * every request under it lands in that session's journal and report whatever its credentials.
 * Real servers on port 0, real HTTP, exact statuses and bodies; the sandbox clock frozen at T0 and
 * wall-clock time (idle sessions) moved with a fake Date, never slept on.
 */

const ISO_T0 = new Date(T0).toISOString();
const WALL = Date.UTC(2030, 4, 6, 12, 0, 0);
const UNKNOWN_ID = "ses_0000000000000000";
const start = serversPerTest();

afterEach(() => {
  vi.useRealTimers();
});

/** The path of `path` under the session's base URL, as the server is called (the base_url's own host). */
function under(s: SessionAnswer, path: string): string {
  return `/s/${s.id}${path}`;
}

function exchange(t: TestServer, m: Pick<SessionMerchant, "api_key" | "api_secret">, prefix = ""): Promise<Reply> {
  return t.call(`${prefix}/api/v2/auth/token`, postJson({ api_key: m.api_key, api_secret: m.api_secret }));
}

async function accessToken(t: TestServer, m: SessionMerchant, prefix = ""): Promise<string> {
  const r = await exchange(t, m, prefix);
  expect(r.status, r.text).toBe(200);
  return r.json.access_token as string;
}

async function journal(t: TestServer, session?: string): Promise<Array<Record<string, unknown>>> {
  const r = await t.call(`/__sandbox/requests${session ? `?session=${session}` : ""}`);
  expect(r.status, r.text).toBe(200);
  return r.json.requests;
}

async function report(t: TestServer, session: string): Promise<Array<{ code: string; severity: string; message: string; evidence: string[] }>> {
  const r = await t.call(`/__sandbox/sessions/${session}/report`);
  expect(r.status, r.text).toBe(200);
  return r.json.findings;
}

/** A journal entry's fields that vary run to run, matched loosely; the rest exactly. */
function entry(fields: Record<string, unknown>): Record<string, unknown> {
  return {
    id: expect.stringMatching(/^req_\d+$/),
    seq: expect.any(Number),
    time: expect.any(String),
    sandboxTime: ISO_T0,
    query: "",
    durationMs: expect.any(Number),
    scenario: "default",
    ...fields,
  };
}

/** The headers a client acts on, for comparing an answer under a base URL with the root's. */
function significant(r: Reply): Record<string, string | null> {
  const names = ["content-type", "cache-control", "pragma", "www-authenticate", "deprecation", "sunset", "link", "allow"];
  return Object.fromEntries(names.map((n) => [n, r.headers.get(n)]));
}

function unknownSession(id: string, instance: string) {
  return problem(
    404,
    "Not Found",
    "session_url_unknown",
    `There is no session '${id}' for this base URL (/s/{session_id}): it was deleted, reaped after being idle, ended by a reset, or never created. Create a session with POST /__sandbox/sessions and configure the integration with the base_url it answers.`,
    instance,
    "not_found",
  );
}

function mismatch(id: string, whose: "another session's merchant" | "a merchant that belongs to no session", instance: string, error: string) {
  return problem(
    401,
    "Unauthorized",
    "session_credentials_mismatch",
    `This request was sent under the base URL of session '${id}' but carries the credentials of ${whose}. Use this session's credentials (POST /__sandbox/sessions answered them; GET /__sandbox/sessions/${id} shows them again), or send the request to the base_url of the session the credentials belong to.`,
    instance,
    error,
  );
}

describe("base_url in the session answers", () => {
  it("is http://<the request's Host>/s/<id>, in POST /__sandbox/sessions and GET /__sandbox/sessions/{id}", async () => {
    const t = await start();
    const s = await createSession(t);
    expect(s.base_url).toBe(`${t.url}/s/${s.id}`);
    const one = await t.call(`/__sandbox/sessions/${s.id}`);
    expect(one.status).toBe(200);
    expect(one.json.base_url).toBe(`${t.url}/s/${s.id}`);
  });

  it("uses the Host sent: a docker service name with a port, a name allowed with allowedHosts", async () => {
    const t = await start({ allowedHosts: ["sandbox.ci.example"] });
    const created = await requestWithRepeatedHeaders(
      t.url,
      "/__sandbox/sessions",
      { host: "sandbox:4010", "content-type": "application/json" },
      { method: "POST", body: "{}" },
    );
    expect(created.status, created.text).toBe(201);
    const id = created.json.id as string;
    expect(created.json.base_url).toBe(`http://sandbox:4010/s/${id}`);

    const shown = await requestWithRepeatedHeaders(t.url, `/__sandbox/sessions/${id}`, { host: "sandbox.ci.example" });
    expect(shown.status, shown.text).toBe(200);
    expect(shown.json.base_url).toBe(`http://sandbox.ci.example/s/${id}`);

    // The base_url works as given: the path under it is the session's.
    const viaBase = await t.call(`${new URL(created.json.base_url).pathname}/api/v2/auth/token`, postJson(created.json.merchant));
    expect(viaBase.status, viaBase.text).toBe(200);
    expect(decodeJwt(viaBase.json.access_token).sub).toBe(created.json.merchant.id);
  });
});

describe("every route under a session's base URL answers as at the root", () => {
  it("token exchange, payment, cashout, payment/init, login, JWKS, a refusal and a 404", async () => {
    const t = await start();
    const s = await createSession(t);
    const m = s.merchant;

    const rootToken = await exchange(t, m);
    const baseToken = await exchange(t, m, `/s/${s.id}`);
    expect(baseToken.status).toBe(200);
    expect(significant(baseToken)).toEqual(significant(rootToken));
    expect(baseToken.json).toEqual({ access_token: expect.any(String), token_type: "Bearer", expires_in: 3600 });
    const { jti: _a, ...rootClaims } = decodeJwt(rootToken.json.access_token);
    const { jti: _b, ...baseClaims } = decodeJwt(baseToken.json.access_token);
    expect(baseClaims).toEqual(rootClaims);
    const jwt = baseToken.json.access_token as string;

    for (const path of ["/api/v2/payment/orders/42", "/api/v2/cashout/payouts"]) {
      const init = { method: "POST", headers: { authorization: `Bearer ${jwt}` } };
      const [root, base] = [await t.call(path, init), await t.call(under(s, path), init)];
      expect(base.status, base.text).toBe(200);
      expect(significant(base)).toEqual(significant(root));
      expect(base.json).toEqual(root.json);
      expect(base.json.operation).toBe(`POST ${path}`);
    }

    const initCall = postJson({ amount: 1999, currency: "EUR" }, { authorization: `Bearer ${m.payment_token}` });
    const [rootInit, baseInit] = [await t.call("/api/v2/payment/init", initCall), await t.call(under(s, "/api/v2/payment/init"), initCall)];
    expect(baseInit.status).toBe(201);
    expect(significant(baseInit)).toEqual(significant(rootInit));
    const { payment_id: _p, checkout_url: _c, ...initRest } = rootInit.json;
    expect(baseInit.json).toEqual({ ...initRest, payment_id: expect.stringMatching(/^pay_/), checkout_url: expect.any(String) });
    // The new payment's Location keeps the client under its session's base URL, as the provider's stays on its host.
    expect(rootInit.headers.get("location")).toBe(`/api/v2/payment/${rootInit.json.payment_id}`);
    expect(baseInit.headers.get("location")).toBe(`/s/${s.id}/api/v2/payment/${baseInit.json.payment_id}`);

    const credentials = postJson({ username: m.login.email, password: m.login.password });
    const [rootLogin, baseLogin] = [await t.call("/api/login_check", credentials), await t.call(under(s, "/api/login_check"), credentials)];
    expect(baseLogin.status).toBe(200);
    // So does the login's Link to its successor.
    expect(rootLogin.headers.get("link")).toBe('</api/v2/auth/token>; rel="successor-version"');
    expect(significant(baseLogin)).toEqual({ ...significant(rootLogin), link: `</s/${s.id}/api/v2/auth/token>; rel="successor-version"` });
    expect(decodeJwt(baseLogin.json.token).sub).toBe(m.id);

    const [rootJwks, baseJwks] = [await t.call("/.well-known/jwks.json"), await t.call(under(s, "/.well-known/jwks.json"))];
    expect(baseJwks.status).toBe(200);
    expect(significant(baseJwks)).toEqual(significant(rootJwks));
    expect(baseJwks.json).toEqual(rootJwks.json);

    // A refusal (no credentials) and a mistyped path: the same answers, `instance` the path under the base.
    for (const path of ["/api/v2/payment/orders", "/api/v1/auth/token", "/api/v2/auth/token/"]) {
      const [root, base] = [await t.call(path), await t.call(under(s, path))];
      expect(base.status, path).toBe(root.status);
      expect(significant(base), path).toEqual(significant(root));
      expect(base.json, path).toEqual(root.json);
    }
    expect((await t.call(under(s, "/api/v1/auth/token"))).json.code).toBe("not_found");
    // The root sends a browser to the QA page; a base URL's root is the merchant API's, where `/` is an unknown path.
    const [root, baseRoot] = [await t.call("/"), await t.call(under(s, "/"))];
    expect([root.status, root.headers.get("location")]).toEqual([302, "/__sandbox/ui/"]);
    expect([baseRoot.status, baseRoot.json.code, baseRoot.json.instance, baseRoot.headers.get("location")]).toEqual([404, "not_found", "/", null]);
    // `/s/<id>` alone is the root of the base URL.
    expect((await t.call(`/s/${s.id}`)).json).toEqual(baseRoot.json);
  });

  it("journals each request in the session: session, the path under the base URL, viaSessionUrl; a control-plane path is not served there", async () => {
    const t = await start();
    const s = await createSession(t);
    await t.call(under(s, "/api/v2/payment/orders"));
    await t.call(under(s, "/api/v1/auth/token"), postJson({ api_key: s.merchant.api_key, api_secret: s.merchant.api_secret }));
    const jwt = await accessToken(t, s.merchant, `/s/${s.id}`);
    const control = await t.call(under(s, "/__sandbox/sessions"));
    expectProblem(
      control,
      problem(
        404,
        "Not Found",
        "not_found",
        "The control plane is not served under a session's base URL: call GET /__sandbox/sessions at the root of the sandbox, without /s/{session_id}.",
        "/__sandbox/sessions",
        "not_found",
      ),
    );

    const tokenId = decodeJwt(jwt).jti;
    expect(await journal(t, s.id)).toEqual([
      entry({
        method: "GET",
        path: "/api/v2/payment/orders",
        status: 401,
        endpoint: "payment",
        session: s.id,
        code: "credentials_missing",
        viaSessionUrl: true,
      }),
      entry({ method: "POST", path: "/api/v1/auth/token", status: 404, endpoint: "unknown", session: s.id, code: "not_found", viaSessionUrl: true }),
      entry({
        method: "POST",
        path: "/api/v2/auth/token",
        status: 200,
        endpoint: "token",
        session: s.id,
        merchant: s.merchant.id,
        tokenId,
        tokenExpiresAt: "2026-01-01T01:00:00.000Z",
        credentialSources: { apiKey: "body", apiSecret: "body" },
        viaSessionUrl: true,
      }),
      entry({ method: "GET", path: "/__sandbox/sessions", status: 404, endpoint: "unknown", session: s.id, code: "not_found", viaSessionUrl: true }),
    ]);
    // The requests at the root are not marked.
    await t.call("/api/v2/payment/orders");
    expect((await journal(t)).at(-1)).toEqual(
      entry({ method: "GET", path: "/api/v2/payment/orders", status: 401, endpoint: "payment", code: "credentials_missing" }),
    );
  });

  it("logs the session and the path under the base URL", async () => {
    const log: RequestLogEntry[] = [];
    const t = await start({ onRequest: (e) => log.push(e) });
    const s = await createSession(t);
    await t.call(under(s, "/api/v2/payment/orders"));
    expect(log.at(-1)).toEqual({
      time: expect.any(String),
      method: "GET",
      path: "/api/v2/payment/orders",
      query: "",
      status: 401,
      durationMs: expect.any(Number),
      endpoint: "payment",
      scenario: "default",
      session: s.id,
      code: "credentials_missing",
    });
  });
});

describe("an unknown or ended session's base URL", () => {
  it("answers 404 session_url_unknown, exactly, and journals it in no session", async () => {
    const t = await start();
    const r = await t.call(`/s/${UNKNOWN_ID}/api/v2/payment/orders`, { headers: { authorization: "Bearer x" } });
    expectProblem(r, unknownSession(UNKNOWN_ID, `/s/${UNKNOWN_ID}/api/v2/payment/orders`));
    const empty = await t.call("/s/");
    expectProblem(
      empty,
      problem(
        404,
        "Not Found",
        "session_url_unknown",
        "There is no session for this base URL (/s/{session_id}): it was deleted, reaped after being idle, ended by a reset, or never created. Create a session with POST /__sandbox/sessions and configure the integration with the base_url it answers.",
        "/s/",
        "not_found",
      ),
    );
    expect(await journal(t)).toEqual([
      entry({
        method: "GET",
        path: `/s/${UNKNOWN_ID}/api/v2/payment/orders`,
        status: 404,
        endpoint: "payment",
        code: "session_url_unknown",
        viaSessionUrl: true,
      }),
      entry({ method: "GET", path: "/s/", status: 404, endpoint: "unknown", code: "session_url_unknown", viaSessionUrl: true }),
    ]);
  });

  it("answers 404 once the session is deleted, and once it was reaped after being idle", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(WALL);
    const t = await start({ sessionIdleTtl: "10m" });
    const [ended, idle] = [await createSession(t), await createSession(t)];
    expect((await exchange(t, ended.merchant, `/s/${ended.id}`)).status).toBe(200);
    expect((await t.call(`/__sandbox/sessions/${ended.id}`, { method: "DELETE" })).status).toBe(204);
    const afterDelete = await exchange(t, ended.merchant, `/s/${ended.id}`);
    expectProblem(afterDelete, unknownSession(ended.id, `/s/${ended.id}/api/v2/auth/token`));

    vi.setSystemTime(WALL + 10 * 60_000 + 1);
    const afterIdle = await exchange(t, idle.merchant, `/s/${idle.id}`);
    expectProblem(afterIdle, unknownSession(idle.id, `/s/${idle.id}/api/v2/auth/token`));
    expect((await t.call(`/__sandbox/sessions/${idle.id}`)).status).toBe(404);
  });

  it("redacts a secret written where the session id goes", async () => {
    const t = await start();
    const r = await t.call(`/s/${DEFAULT_SECRET}/api/v2/payment/orders`);
    const shown = redact(DEFAULT_SECRET);
    expectProblem(r, unknownSession(shown, `/s/${shown}/api/v2/payment/orders`));
    expect(JSON.stringify(await journal(t))).not.toContain(DEFAULT_SECRET);
  });
});

describe("another merchant's credentials under a session's base URL", () => {
  it("are refused 401 session_credentials_mismatch on every endpoint that reads credentials, with the endpoint's challenge", async () => {
    const t = await start();
    const [a, b] = [await createSession(t), await createSession(t)];
    const bJwt = await accessToken(t, b.merchant, `/s/${b.id}`);

    const token = await exchange(t, b.merchant, `/s/${a.id}`);
    expectProblem(token, mismatch(a.id, "another session's merchant", "/api/v2/auth/token", "invalid_client"), {
      headers: { "www-authenticate": 'ApiKey realm="merchant-api", error="invalid_client"' },
      notEchoed: [b.merchant.api_secret],
    });

    const paid = await t.call(under(a, "/api/v2/payment/orders"), { headers: { authorization: `Bearer ${bJwt}` } });
    expectProblem(paid, mismatch(a.id, "another session's merchant", "/api/v2/payment/orders", "invalid_token"), { notEchoed: [bJwt] });

    const init = await t.call(under(a, "/api/v2/payment/init"), postJson({}, { authorization: `Bearer ${b.merchant.payment_token}` }));
    expectProblem(init, mismatch(a.id, "another session's merchant", "/api/v2/payment/init", "invalid_token"), {
      notEchoed: [b.merchant.payment_token],
    });

    const login = await t.call(under(a, "/api/login_check"), postJson({ username: b.merchant.login.email, password: b.merchant.login.password }));
    expectProblem(login, mismatch(a.id, "another session's merchant", "/api/login_check", "invalid_client"), {
      headers: { "www-authenticate": null },
      notEchoed: [b.merchant.login.password],
    });
    expect(login.headers.get("deprecation")).toMatch(/^@\d+$/);

    // The published default merchant belongs to no session.
    const root = await exchange(t, { api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET }, `/s/${a.id}`);
    expectProblem(root, mismatch(a.id, "a merchant that belongs to no session", "/api/v2/auth/token", "invalid_client"), {
      headers: { "www-authenticate": 'ApiKey realm="merchant-api", error="invalid_client"' },
    });
    // Even a wrong secret: the api_key names another merchant, so it is refused as such.
    const named = await exchange(t, { api_key: b.merchant.api_key, api_secret: "wrong" }, `/s/${a.id}`);
    expect(named.json.code).toBe("session_credentials_mismatch");
  });

  it("regression: are refused when the token endpoint's precedence reads another merchant than attribution did (X-Api-Key of this session, body of another)", async () => {
    const t = await start({ credentialPrecedence: "body" });
    const [a, b] = [await createSession(t), await createSession(t)];
    // Attribution reads the header's api_key first (this session's merchant, unproven: no secret of
    // its own); the endpoint, with precedence 'body', would have issued a token to the other session's.
    const sent = await t.call(
      under(a, "/api/v2/auth/token"),
      postJson({ api_key: b.merchant.api_key, api_secret: b.merchant.api_secret }, { "x-api-key": a.merchant.api_key }),
    );
    expectProblem(sent, mismatch(a.id, "another session's merchant", "/api/v2/auth/token", "invalid_client"), {
      headers: { "www-authenticate": 'ApiKey realm="merchant-api", error="invalid_client"' },
      notEchoed: [b.merchant.api_secret],
    });
    // Nothing was issued to the other session's merchant, and nothing landed in its journal.
    expect(t.sandbox.journal.list({ session: b.id })).toEqual([]);
    // In this session's journal it names the merchant its X-Api-Key named, unproven.
    expect(t.sandbox.journal.list({ session: a.id }).map((e) => [e.code, e.merchant, e.unverified, e.tokenId])).toEqual([
      ["session_credentials_mismatch", a.merchant.id, true, undefined],
    ]);
  });

  it("are journaled and reported in the base URL's session, not in the other's, and change nothing in the other (no rule fires, no call counts)", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(WALL);
    const t = await start();
    const a = await createSession(t);
    // token-endpoint-outage: the first two exchanges of its merchant answer 503.
    const b = await createSession(t, "token-endpoint-outage");
    const bStarted = (await t.call(`/__sandbox/sessions/${b.id}`)).json.expires_at;

    vi.setSystemTime(WALL + 60_000);
    for (let i = 0; i < 3; i++) expect((await exchange(t, b.merchant, `/s/${a.id}`)).status).toBe(401);

    const aEntries = await journal(t, a.id);
    expect(aEntries).toEqual(
      [1, 2, 3].map(() =>
        entry({
          method: "POST",
          path: "/api/v2/auth/token",
          status: 401,
          endpoint: "token",
          session: a.id,
          code: "session_credentials_mismatch",
          viaSessionUrl: true,
        }),
      ),
    );
    expect(await journal(t, b.id)).toEqual([]);
    const aFindings = await report(t, a.id);
    // The session's client, not a merchant (the credentials were not this session's): both mistakes.
    const ids = aEntries.map((e) => e.id);
    expect(aFindings.map((f) => [f.code, f.severity, f.evidence, f.message.startsWith(`The client of session '${a.id}' `)])).toEqual([
      ["hammering_after_error", "error", ids, true],
      ["credentials_of_other_session", "error", ids, true],
    ]);
    expect(await report(t, b.id)).toEqual([]);

    // Neither session's idle time moved: the requests were another client's.
    expect((await t.call(`/__sandbox/sessions/${a.id}`)).json.expires_at).toBe(a.expires_at);
    expect((await t.call(`/__sandbox/sessions/${b.id}`)).json.expires_at).toBe(bStarted);
    // b's rules counted none of them: its own client still gets the scripted 503, twice, then 200.
    expect((await exchange(t, b.merchant, `/s/${b.id}`)).status).toBe(503);
    expect((await exchange(t, b.merchant, `/s/${b.id}`)).status).toBe(503);
    expect((await exchange(t, b.merchant, `/s/${b.id}`)).status).toBe(200);
  });
});

describe("requests the root could not attribute are the session's under its base URL", () => {
  it("no credentials, an unknown api_key and a mistyped path: in the session's journal and report; each use keeps the session alive", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(WALL);
    const t = await start();
    const s = await createSession(t);
    vi.setSystemTime(WALL + 60_000);
    const calls = [
      await t.call(under(s, "/api/v2/payment/orders")),
      await t.call(under(s, "/api/v2/payment/init"), { method: "POST" }),
      await exchange(t, { api_key: "nobody", api_secret: "x" }, `/s/${s.id}`),
      await t.call(under(s, "/api/v2/api/v2/auth/token"), { method: "POST" }),
    ];
    expect(calls.map((r) => r.json.code)).toEqual(["credentials_missing", "credentials_missing", "unknown_api_key", "not_found"]);
    const entries = await journal(t, s.id);
    expect(entries.map((e) => [e.path, e.session, e.viaSessionUrl, e.merchant])).toEqual([
      ["/api/v2/payment/orders", s.id, true, undefined],
      ["/api/v2/payment/init", s.id, true, undefined],
      ["/api/v2/auth/token", s.id, true, undefined],
      ["/api/v2/api/v2/auth/token", s.id, true, undefined],
    ]);
    const findings = await report(t, s.id);
    // The unknown api_key names no merchant and is no missing credential: only the other two count.
    expect(findings.map((f) => [f.code, f.severity, f.evidence, f.message.startsWith(`The client of session '${s.id}' `)])).toEqual([
      ["missing_credentials", "error", [entries[0]!.id, entries[1]!.id], true],
      ["wrong_base_path", "error", [entries[3]!.id], true],
    ]);
    // A request under its base URL is its client's: the session's idle time starts again.
    expect((await t.call(`/__sandbox/sessions/${s.id}`)).json.expires_at).toBe(new Date(WALL + 60_000 + 30 * 60_000).toISOString());
    // The same requests at the root are no session's.
    await t.call("/api/v2/payment/orders");
    expect(await journal(t, s.id)).toHaveLength(4);
  });

  it("takes the session's settings for a request with no credentials: its profile shapes the refusal", async () => {
    const t = await start();
    const r = await t.call("/__sandbox/sessions", postJson({ profile: "lexik" }));
    expect(r.status).toBe(201);
    const s = r.json as SessionAnswer;
    // The answer a sandbox started with the lexik profile gives at its root, not this sandbox's problem+json.
    const lexik = await start({ profile: "lexik" });
    const [expected, root, base] = [
      await lexik.call("/api/v2/payment/orders"),
      await t.call("/api/v2/payment/orders"),
      await t.call(under(s, "/api/v2/payment/orders")),
    ];
    expect(root.headers.get("content-type")).toBe("application/problem+json");
    expect(expected.headers.get("content-type")).not.toBe("application/problem+json");
    expect(base.status).toBe(expected.status);
    expect(significant(base)).toEqual(significant(expected));
    expect(base.text).toBe(expected.text);
  });
});

describe("a token in the query string is attributed when a sandbox key signed it", () => {
  it("at the root and under the base URL: still refused token_in_query, journaled as the merchant's, in its session's report", async () => {
    const t = await start();
    const s = await createSession(t);
    const jwt = await accessToken(t, s.merchant);
    const shown = redact(jwt);
    const atRoot = await t.call(`/api/v2/payment/orders?access_token=${jwt}`);
    const underBase = await t.call(under(s, `/api/v2/payment/orders?token=${jwt}`));
    const init = await t.call(`/api/v2/payment/init?jwt=${jwt}`, { method: "POST" });
    for (const [r, name] of [
      [atRoot, "access_token"],
      [underBase, "token"],
      [init, "jwt"],
    ] as const) {
      expect(r.status, r.text).toBe(400);
      expect(r.json.code).toBe("token_in_query");
      expect(r.json.detail).toBe(
        `A token was sent in the query string ('${name}='), where it ends up in logs and browser history. Remove it from the URL and send it as 'Authorization: Bearer <token>'.`,
      );
    }
    const entries = await journal(t, s.id);
    const fields = { status: 400, session: s.id, merchant: s.merchant.id, code: "token_in_query", secretInQuery: true };
    expect(entries.slice(1)).toEqual([
      entry({ ...fields, method: "GET", path: "/api/v2/payment/orders", query: `access_token=${shown}`, endpoint: "payment" }),
      entry({ ...fields, method: "GET", path: "/api/v2/payment/orders", query: `token=${shown}`, endpoint: "payment", viaSessionUrl: true }),
      entry({ ...fields, method: "POST", path: "/api/v2/payment/init", query: `jwt=${shown}`, endpoint: "payment-init" }),
    ]);
    const inQuery = (await report(t, s.id)).find((f) => f.code === "credentials_in_query");
    expect(inQuery?.evidence).toEqual(entries.slice(1).map((e) => e.id));
  });

  it("fires none of the merchant's rules: the calls in the query count for nothing", async () => {
    const t = await start();
    // token-revoked-mid-session revokes every token on the merchant's 2nd payment or cashout call.
    const s = await createSession(t, "token-revoked-mid-session");
    const jwt = await accessToken(t, s.merchant);
    for (let i = 0; i < 3; i++) expect((await t.call(`/api/v2/payment/orders?access_token=${jwt}`)).json.code).toBe("token_in_query");
    const headers = { authorization: `Bearer ${jwt}` };
    expect((await t.call("/api/v2/payment/orders", { headers })).status).toBe(200);
    expect((await t.call("/api/v2/payment/orders", { headers })).json.code).toBe("token_revoked");
  });

  it("names nobody when no sandbox key signed it (a forged sub)", async () => {
    const t = await start();
    const s = await createSession(t);
    const forged = `eyJhbGciOiJub25lIn0.${Buffer.from(JSON.stringify({ sub: s.merchant.id })).toString("base64url")}.`;
    const r = await t.call(`/api/v2/payment/orders?access_token=${forged}`);
    expect(r.json.code).toBe("token_in_query");
    expect(await journal(t, s.id)).toEqual([]);
    const [only] = await journal(t);
    expect(only!.merchant).toBeUndefined();
    expect(only!.session).toBeUndefined();
  });
});

describe("secrets in a path under a session's base URL", () => {
  it("are redacted in the answer, the log and the journal", async () => {
    const log: RequestLogEntry[] = [];
    const t = await start({ onRequest: (e) => log.push(e) });
    const s = await createSession(t);
    const jwt = await accessToken(t, s.merchant, `/s/${s.id}`);
    const r = await t.call(under(s, `/api/v2/cashout/${s.merchant.api_secret}`), { headers: { authorization: `Bearer ${jwt}` } });
    expect(r.status).toBe(200);
    const shown = `/api/v2/cashout/${redact(s.merchant.api_secret)}`;
    expect(r.json.operation).toBe(`GET ${shown}`);
    expect(log.at(-1)!.path).toBe(shown);
    const [, last] = await journal(t, s.id);
    expect(last!.path).toBe(shown);
    for (const text of [r.text, JSON.stringify(log), JSON.stringify(await journal(t))]) expect(text).not.toContain(s.merchant.api_secret);
  });
});

describe("the OpenAPI document", () => {
  it("lists the base URL as a server of every merchant path, and its refusals in their operations", async () => {
    const t = await start();
    const doc = (await t.call("/__sandbox/openapi.json")).json;
    const refs = doc.components.responses;
    // biome-ignore lint/suspicious/noExplicitAny: an OpenAPI response object or its $ref
    const resolve = (r: any) => (r.$ref ? refs[r.$ref.split("/").at(-1)] : r);
    // biome-ignore lint/suspicious/noExplicitAny: an OpenAPI response object
    const codes = (r: any) => Object.values(resolve(r).content ?? {}).flatMap((c: any) => c.schema?.allOf?.[1]?.properties?.code?.enum ?? []);
    // `/` (the redirect to the QA page) is no merchant path, and is not served under a base URL.
    const merchantPaths = Object.keys(doc.paths).filter((p) => !p.startsWith("/__sandbox/") && p !== "/");
    expect(doc.paths["/"].servers).toBeUndefined();
    // The six routes, and the two groups' prefixes themselves (/api/v2/payment, /api/v2/cashout).
    expect(merchantPaths).toHaveLength(8);
    for (const path of merchantPaths) {
      expect(
        doc.paths[path].servers.map((x: { url: string }) => x.url),
        path,
      ).toEqual(["/", "/s/{session_id}"]);
      for (const [method, op] of Object.entries(doc.paths[path]).filter(([k]) => k !== "servers" && k !== "parameters" && k !== "summary")) {
        // biome-ignore lint/suspicious/noExplicitAny: an OpenAPI operation
        const responses = (op as any).responses;
        if (method === "head") continue;
        expect(codes(responses["404"]), `${method} ${path}`).toContain("session_url_unknown");
        if (path !== "/.well-known/jwks.json") expect(codes(responses["401"]), `${method} ${path}`).toContain("session_credentials_mismatch");
      }
    }
  });
});
