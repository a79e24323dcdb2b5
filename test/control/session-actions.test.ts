import { describe, expect, it } from "vitest";
import { expectNotEchoed, expectProblem } from "../support/expect.js";
import {
  postEmpty,
  postJson,
  problem,
  type Reply,
  serversPerTest,
  T0,
  type TestServer,
  createSession,
  type SessionAnswer,
  type SessionMerchant,
} from "../support/server.js";

/**
 * POST /__sandbox/sessions/{id}/actions ("break it now", issue 14), over real HTTP against the
 * node:http server: each `now` action has its effect on the session's next real request, and on
 * no other session; `next` rules answer the next N matching requests, then are spent; bad bodies
 * are refused word for word and change nothing. The sandbox clock is frozen at T0; delays go
 * through an injected sleep, never slept on.
 */

const start = serversPerTest();

const act = (t: TestServer, s: SessionAnswer, body: unknown): Promise<Reply> => t.call(`/__sandbox/sessions/${s.id}/actions`, postJson(body));

const exchange = (t: TestServer, m: { api_key: string; api_secret: string }): Promise<Reply> =>
  t.call("/api/v2/auth/token", postJson({ api_key: m.api_key, api_secret: m.api_secret }));

async function tokenOf(t: TestServer, m: SessionMerchant): Promise<string> {
  const r = await exchange(t, m);
  expect(r.status, r.text).toBe(200);
  return r.json.access_token as string;
}

const pay = (t: TestServer, token: string): Promise<Reply> => t.call("/api/v2/payment/orders/1", { headers: { authorization: `Bearer ${token}` } });
const payInit = (t: TestServer, m: SessionMerchant): Promise<Reply> =>
  t.call("/api/v2/payment/init", postJson({ amount: 1 }, { authorization: `Bearer ${m.payment_token}` }));
const login = (t: TestServer, m: SessionMerchant): Promise<Reply> =>
  t.call("/api/login_check", postJson({ username: m.login.email, password: m.login.password }));

function expectCode(r: Reply, status: number, code: string): void {
  expect(r.status, r.text).toBe(status);
  expect(r.json.code, r.text).toBe(code);
}

const ISO_T0 = new Date(T0).toISOString();
const TAIL = `They take a scenario rule's actions: "now" the state changes, "next" {"times", "endpoint", "then"}.`;
function invalid(s: SessionAnswer, problems: string): ReturnType<typeof problem> {
  return problem(
    400,
    "Bad Request",
    "session_action_invalid",
    `The session actions are not valid, so nothing was changed: ${problems}. ${TAIL}`,
    `/__sandbox/sessions/${s.id}/actions`,
    "invalid_request",
  );
}

describe("now: each action has its effect on the session's next request, and on no other session", () => {
  it("revoke_token all: the session's tokens are refused token_revoked; another session's still work", async () => {
    const t = await start();
    const [a, b] = [await createSession(t), await createSession(t)];
    const [ta, tb] = [await tokenOf(t, a.merchant), await tokenOf(t, b.merchant)];
    const r = await act(t, a, { now: { revoke_token: "all" } });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({
      session: a.id,
      merchants: [a.merchant.id],
      applied: ["revoke_token"],
      pending: [],
      state: "started",
      clock: { now: ISO_T0, frozen: true },
    });
    expectCode(await pay(t, ta), 401, "token_revoked");
    expect((await pay(t, tb)).status).toBe(200);
    // A token issued after the action is good.
    expect((await pay(t, await tokenOf(t, a.merchant))).status).toBe(200);
  });

  it("expire_token all: the session's tokens are refused token_expired", async () => {
    const t = await start();
    const s = await createSession(t);
    const token = await tokenOf(t, s.merchant);
    expect((await act(t, s, { now: { expire_token: "all" } })).status).toBe(200);
    expectCode(await pay(t, token), 401, "token_expired");
  });

  it("rotate_signing_key: old tokens get an unknown kid; with keep_old they are still accepted", async () => {
    // Session key rotation as it runs outside the tests: the rotated-in keys are generated.
    const t = await start({ generateKeys: true });
    const [a, b] = [await createSession(t), await createSession(t)];
    const [ta, tb] = [await tokenOf(t, a.merchant), await tokenOf(t, b.merchant)];
    expect((await act(t, a, { now: { rotate_signing_key: true } })).json.applied).toEqual(["rotate_signing_key"]);
    expectCode(await pay(t, ta), 401, "token_unknown_kid");
    expect((await pay(t, await tokenOf(t, a.merchant))).status).toBe(200);
    expect((await pay(t, tb)).status).toBe(200);

    const kept = await tokenOf(t, b.merchant);
    expect((await act(t, b, { now: { rotate_signing_key: { keep_old: true } } })).status).toBe(200);
    expect((await pay(t, kept)).status).toBe(200);
    const fresh = await tokenOf(t, b.merchant);
    expect(JSON.parse(Buffer.from(fresh.split(".")[0]!, "base64url").toString()).kid).not.toBe(
      JSON.parse(Buffer.from(kept.split(".")[0]!, "base64url").toString()).kid,
    );
  });

  it("disable_merchant, then enable_merchant: the token exchange is refused, then works again", async () => {
    const t = await start();
    const [a, b] = [await createSession(t), await createSession(t)];
    expect((await act(t, a, { now: { disable_merchant: true } })).status).toBe(200);
    expectCode(await exchange(t, a.merchant), 401, "merchant_disabled");
    expect((await exchange(t, b.merchant)).status).toBe(200);
    expect((await act(t, a, { now: { enable_merchant: true } })).status).toBe(200);
    expect((await exchange(t, a.merchant)).status).toBe(200);
  });

  it("rotate_secret true: a new random api_secret, shown by GET of the session and never in the answer", async () => {
    const t = await start();
    const s = await createSession(t);
    const r = await act(t, s, { now: { rotate_secret: true } });
    expect(r.json.applied).toEqual(["rotate_secret"]);
    const fresh = (await t.call(`/__sandbox/sessions/${s.id}`)).json.merchant as SessionMerchant;
    expect(fresh.api_secret).toMatch(/^ss_[0-9a-f]{24}$/);
    expect(fresh.api_secret).not.toBe(s.merchant.api_secret);
    expectNotEchoed(r, [fresh.api_secret, s.merchant.api_secret]);
    expectCode(await exchange(t, s.merchant), 401, "wrong_api_secret");
    expect((await exchange(t, fresh)).status).toBe(200);
  });

  it("rotate_secret with a value: that is the api_secret from now on, and the answer does not echo it", async () => {
    const t = await start();
    const s = await createSession(t);
    const r = await act(t, s, { now: { rotate_secret: "ss_chosen_by_the_test_0001" } });
    expect(r.status).toBe(200);
    expectNotEchoed(r, ["ss_chosen_by_the_test_0001"]);
    expect((await exchange(t, { api_key: s.merchant.api_key, api_secret: "ss_chosen_by_the_test_0001" })).status).toBe(200);
  });

  it("expire_payment_token and revoke_payment_token: payment/init refuses the payment token", async () => {
    const t = await start();
    const [a, b] = [await createSession(t), await createSession(t)];
    expect((await payInit(t, a.merchant)).status).toBe(201);
    await act(t, a, { now: { expire_payment_token: true } });
    expectCode(await payInit(t, a.merchant), 401, "payment_token_expired");
    await act(t, b, { now: { revoke_payment_token: true } });
    expectCode(await payInit(t, b.merchant), 401, "payment_token_revoked");
  });

  it("login_gone: the session's login answers 410; another session's still logs in", async () => {
    const t = await start();
    const [a, b] = [await createSession(t), await createSession(t)];
    await act(t, a, { now: { login_gone: true } });
    expectCode(await login(t, a.merchant), 410, "login_gone");
    expect((await login(t, b.merchant)).status).toBe(200);
  });

  it("advance_clock: the session's clock moves and its tokens expire; the other session's clock does not", async () => {
    const t = await start();
    const [a, b] = [await createSession(t), await createSession(t)];
    const token = await tokenOf(t, a.merchant);
    const r = await act(t, a, { now: { advance_clock: "61m", set_state: "late" } });
    expect(r.json).toMatchObject({
      applied: ["advance_clock", "set_state"],
      state: "late",
      clock: { now: "2026-01-01T01:01:00.000Z", frozen: true },
    });
    expectCode(await pay(t, token), 401, "token_expired");
    expect((await t.call(`/__sandbox/sessions/${b.id}/clock`)).json).toEqual({ now: ISO_T0, frozen: true });
    expect((await t.call(`/__sandbox/sessions/${a.id}`)).json.state).toBe("late");
  });

  it("merchant names one merchant, by the session's id or the scenario's", async () => {
    const t = await start();
    const s = await createSession(t);
    const r = await act(t, s, { merchant: "merchant_sandbox_default", now: { disable_merchant: true } });
    expect(r.json.merchants).toEqual([s.merchant.id]);
    expect((await act(t, s, { merchant: s.merchant.id, now: { enable_merchant: true } })).json.merchants).toEqual([s.merchant.id]);
  });
});

describe("next: a rule for the next N requests, then spent", () => {
  it("answers the next 3 token exchanges 503 with Retry-After, marked by its rule; then the exchange works", async () => {
    const t = await start();
    const s = await createSession(t);
    const token = await tokenOf(t, s.merchant);
    const r = await act(t, s, { next: { endpoint: "token", times: 3, then: { respond: { status: 503, retry_after: "30s" } } } });
    const rule = { name: "default/action-1", endpoint: "token", times: 3, remaining: 3, actions: ["respond"] };
    expect(r.json).toEqual({
      session: s.id,
      merchants: [s.merchant.id],
      applied: [],
      rule,
      pending: [rule],
      state: "started",
      clock: { now: ISO_T0, frozen: true },
    });
    for (let i = 0; i < 3; i++) {
      const e = await exchange(t, s.merchant);
      expectCode(e, 503, "service_unavailable");
      expect(e.headers.get("retry-after")).toBe("30");
      expect(e.headers.get("x-sandbox-rule")).toBe("default/action-1");
      // The endpoint filter: payment calls are not the rule's.
      if (i === 0) expect((await pay(t, token)).headers.get("x-sandbox-rule")).toBeNull();
      if (i === 0) expect((await act(t, s, { now: { set_state: "started" } })).json.pending).toEqual([{ ...rule, remaining: 2 }]);
    }
    const after = await exchange(t, s.merchant);
    expect(after.status).toBe(200);
    expect(after.headers.get("x-sandbox-rule")).toBeNull();
    const journal = (await t.call(`/__sandbox/requests?session=${s.id}`)).json.requests as Array<{ endpoint: string; rules?: string[] }>;
    expect(journal.filter((e) => e.endpoint === "token").map((e) => e.rules ?? [])).toEqual([
      [],
      ["default/action-1"],
      ["default/action-1"],
      ["default/action-1"],
      [],
    ]);
    // Spent: no longer pending.
    expect((await act(t, s, { now: { set_state: "started" } })).json.pending).toEqual([]);
  });

  it("delay: the next 2 calls of any endpoint wait (the injected sleep), the third does not", async () => {
    const slept: number[] = [];
    const t = await start({ sleep: async (ms) => void slept.push(ms) });
    const s = await createSession(t);
    await act(t, s, { next: { times: 2, then: { delay: "2s" } } });
    const token = await tokenOf(t, s.merchant);
    expect((await pay(t, token)).status).toBe(200);
    expect(slept).toEqual([2000, 2000]);
    expect((await pay(t, token)).status).toBe(200);
    expect(slept).toEqual([2000, 2000]);
  });

  it("pending rules that match one request all fire, as a file's rules do: the first added answers; another session never matches", async () => {
    const t = await start();
    const [a, b] = [await createSession(t), await createSession(t)];
    await act(t, a, { next: { endpoint: "token", times: 1, then: { respond: { status: 503 } } } });
    const second = await act(t, a, { next: { endpoint: ["token", "payment"], times: 2, then: { respond: { status: 429, retry_after: 5 } } } });
    expect(second.json.pending.map((p: { name: string; endpoint: unknown }) => [p.name, p.endpoint])).toEqual([
      ["default/action-1", "token"],
      ["default/action-2", ["token", "payment"]],
    ]);
    expect((await exchange(t, b.merchant)).status).toBe(200);
    const both = await exchange(t, a.merchant);
    expect([both.status, both.headers.get("x-sandbox-rule")]).toEqual([503, "default/action-1, default/action-2"]);
    const limited = await exchange(t, a.merchant);
    expect([limited.status, limited.headers.get("x-sandbox-rule"), limited.headers.get("retry-after")]).toEqual([429, "default/action-2", "5"]);
    expect((await exchange(t, a.merchant)).status).toBe(200);
  });

  it("with merchant, only that merchant's requests match; without, every merchant of the session", async () => {
    const two = {
      name: "two-merchants",
      description: "two merchants",
      merchants: ["m_one", "m_two"].map((id) => ({ id, api_key: `${id}-key`, api_secret: `${id}-secret`, payment_token: `${id}-pt` })),
    };
    const t = await start({ scenarios: [two] });
    const r = await t.call("/__sandbox/sessions", postJson({ scenario: "two-merchants" }));
    const s = r.json as SessionAnswer & { merchants: SessionMerchant[] };
    const [one, other] = s.merchants as [SessionMerchant, SessionMerchant];
    const limited = await act(t, s, { merchant: "m_two", next: { endpoint: "token", times: 1, then: { respond: { status: 503 } } } });
    expect(limited.json.rule).toEqual({
      name: "two-merchants/action-1",
      endpoint: "token",
      merchant: other.id,
      times: 1,
      remaining: 1,
      actions: ["respond"],
    });
    expect((await exchange(t, one)).status).toBe(200);
    expect((await exchange(t, other)).status).toBe(503);
    await act(t, s, { now: { disable_merchant: true } });
    expectCode(await exchange(t, one), 401, "merchant_disabled");
    expectCode(await exchange(t, other), 401, "merchant_disabled");
  });

  it("a session reset removes the pending rules, and their numbering starts again", async () => {
    const t = await start();
    const s = await createSession(t);
    await act(t, s, { next: { endpoint: "token", times: 5, then: { respond: { status: 503 } } } });
    expect((await t.call(`/__sandbox/sessions/${s.id}/reset`, postEmpty())).status).toBe(200);
    expect((await exchange(t, s.merchant)).status).toBe(200);
    const again = await act(t, s, { next: { times: 1, then: { delay: "1ms" } } });
    expect(again.json.rule.name).toBe("default/action-1");
  });

  it("a session holds at most 100 pending rules: the 101st is refused 429 and changes nothing", async () => {
    const t = await start();
    const s = await createSession(t);
    for (let i = 0; i < 100; i++) expect((await act(t, s, { next: { endpoint: "jwks", times: 1, then: { delay: "1ms" } } })).status).toBe(200);
    const r = await act(t, s, { now: { login_gone: true }, next: { times: 1, then: { delay: "1ms" } } });
    expect(r.status).toBe(429);
    expect(r.json).toEqual(
      problem(
        429,
        "Too Many Requests",
        "session_action_rules_full",
        `Session ${s.id} already holds 100 pending next rules; nothing was changed. Wait for them to be spent, or reset the session (POST /__sandbox/sessions/${s.id}/reset).`,
        `/__sandbox/sessions/${s.id}/actions`,
        "rate_limited",
      ),
    );
    expect((await login(t, s.merchant)).status).toBe(200);
  });
});

describe("the pending rules' size", () => {
  it("is bounded per session: a rule that would pass 256 KiB together is refused 429 and changes nothing", async () => {
    const t = await start();
    const s = await createSession(t);
    // Each rule's `then` is 60,000 characters of body and its JSON around it.
    const big = (i: number) => ({
      next: { endpoint: "payment", times: 1, then: { respond: { status: 200, body: { pad: "x".repeat(60_000), i } } } },
    });
    const thenBytes = JSON.stringify(big(0).next.then).length;
    for (let i = 0; i < 4; i++) expect((await act(t, s, big(i))).status).toBe(200);
    const r = await act(t, s, { now: { login_gone: true }, ...big(4) });
    expect(r.status).toBe(429);
    expect(r.json).toEqual(
      problem(
        429,
        "Too Many Requests",
        "session_action_rules_full",
        `Session ${s.id}'s pending next rules hold ${4 * thenBytes} bytes, and this one's ${thenBytes} would pass the 262144 a session may hold; nothing was changed. Give it a smaller respond body, wait for the pending rules to be spent, or reset the session (POST /__sandbox/sessions/${s.id}/reset).`,
        `/__sandbox/sessions/${s.id}/actions`,
        "rate_limited",
      ),
    );
    expect((await login(t, s.merchant)).status).toBe(200);
    const small = await act(t, s, { next: { endpoint: "payment", times: 1, then: { respond: { status: 418 } } } });
    expect(small.status).toBe(200);
    expect(small.json.pending).toHaveLength(5);
  });
});

describe("refusals: word for word, and nothing changes", () => {
  it("unknown keys with the nearest allowed one, per-request actions under now, bad values, a foreign merchant", async () => {
    const t = await start();
    const [s, other] = [await createSession(t), await createSession(t)];
    const token = await tokenOf(t, s.merchant);
    const NOW_KEYS =
      "disable_merchant, enable_merchant, rotate_secret, revoke_token, expire_token, rotate_signing_key, expire_payment_token, revoke_payment_token, login_gone, advance_clock, set_state";
    const cases: Array<[unknown, string]> = [
      [{ now: { revoke_tokens: "all" } }, `now.revoke_tokens: unknown key 'revoke_tokens'; did you mean 'revoke_token'? (allowed here: ${NOW_KEYS})`],
      [{ nxt: { times: 1 } }, "nxt: unknown key 'nxt'; did you mean 'next'? (allowed here: merchant, now, next)"],
      [
        { now: { respond: { status: 503 } } },
        `now.respond: 'respond' acts on a request, and now has none: put it under next.then, e.g. {"next": {"times": 1, "then": {"respond": …}}}`,
      ],
      [
        { now: { revoke_token: "presented" } },
        "now.revoke_token: now takes only revoke_token: all (there is no presented token without a request); for the token a request presents, use next.then.revoke_token: presented",
      ],
      [{}, 'needs "now", "next" or both'],
      [{ next: { times: 0, then: {} } }, "next.times: must be at least 1; next.then: then needs at least one action"],
      [{ next: { times: 1001, then: { delay: "1s" } } }, "next.times: must be at most 1000"],
      [
        { next: { endpoint: "tokn", times: 3, then: { respond: { status: 503 } } } },
        "next.endpoint: 'tokn' is not an endpoint; did you mean 'token'? (use one of: token, login, payment, cashout, payment-init, jwks, any)",
      ],
      [
        { next: { times: 1, then: { respnd: { status: 503 } } } },
        "next.then.respnd: unknown key 'respnd'; did you mean 'respond'? (allowed here: respond, delay, drop_connection, reject_credentials, disable_merchant, enable_merchant, rotate_secret, revoke_token, expire_token, issue_token, rotate_signing_key, expire_payment_token, revoke_payment_token, login_gone, advance_clock, set_state)",
      ],
      [{ now: { advance_clock: "soon" } }, "now.advance_clock: must be a duration such as 90s, 59m, 1h, 1h30m or -2h"],
      [
        { merchant: other.merchant.id, now: { disable_merchant: true } },
        `merchant: '${other.merchant.id}' is not a merchant of session ${s.id} (its merchants: ${s.merchant.id})`,
      ],
    ];
    for (const [body, problems] of cases) {
      const r = await act(t, s, body);
      expect(r.json, JSON.stringify(body)).toEqual(invalid(s, problems));
      expect(r.status).toBe(400);
    }
    // Nothing changed: the token, the merchants, the state, the clock, no rule.
    expect((await pay(t, token)).status).toBe(200);
    expect((await exchange(t, other.merchant)).status).toBe(200);
    const detail = (await t.call(`/__sandbox/sessions/${s.id}`)).json;
    expect([detail.state, detail.clock]).toEqual(["started", { now: ISO_T0, frozen: true }]);
    expect((await exchange(t, s.merchant)).headers.get("x-sandbox-rule")).toBeNull();
  });

  it("refused request changes nothing: a rotate_secret shorter than 16, longer than 256 or with other characters is refused with the rule and the fix (issue 23 §6)", async () => {
    const t = await start();
    const s = await createSession(t);
    const FIX = "use rotate_secret: true for a random one, or a value such as `openssl rand -hex 16` prints";
    const SHORT = `must be at least 16 characters: a shorter secret would be redacted out of every session's URLs; ${FIX}`;
    const cases: Array<[unknown, string]> = [
      [{ now: { rotate_secret: "payment" } }, `now.rotate_secret: ${SHORT}`],
      [{ now: { rotate_secret: "a".repeat(257) } }, `now.rotate_secret: must be at most 256 characters; ${FIX}`],
      [{ now: { rotate_secret: "sixteen+chars/and=more" } }, `now.rotate_secret: may use only the characters A-Z a-z 0-9 . _ ~ -; ${FIX}`],
      [{ next: { times: 1, then: { rotate_secret: "v2" } } }, `next.then.rotate_secret: ${SHORT}`],
    ];
    for (const [body, problems] of cases) {
      const r = await act(t, s, body);
      expect(r.json, JSON.stringify(body)).toEqual(invalid(s, problems));
      expect(r.status).toBe(400);
    }
    // The secret is the one it was, and the bounds themselves are taken.
    expect((await exchange(t, s.merchant)).status).toBe(200);
    expect((await act(t, s, { now: { rotate_secret: "b".repeat(256) } })).status).toBe(200);
    expect((await act(t, s, { now: { rotate_secret: "0123456789abcdef" } })).status).toBe(200);
    expect((await exchange(t, { api_key: s.merchant.api_key, api_secret: "0123456789abcdef" })).status).toBe(200);
  });

  it("no session garbles another's URLs: rotations to api, v2 and payment are refused, and the other session's journal reads its path in clear", async () => {
    const t = await start();
    const [attacker, victim] = [await createSession(t), await createSession(t)];
    for (const secret of ["api", "v2", "payment"]) expect((await act(t, attacker, { now: { rotate_secret: secret } })).status).toBe(400);
    const token = await tokenOf(t, victim.merchant);
    const r = await t.call(`/s/${victim.id}/api/v2/payment/orders/1`, { headers: { authorization: `Bearer ${token}` } });
    expect(r.status).toBe(200);
    expect(r.json.operation).toBe("GET /api/v2/payment/orders/1");
    const journal = (await t.call(`/__sandbox/requests?session=${victim.id}`)).json as { requests: Array<{ path: string }> };
    expect(journal.requests.map((e) => e.path)).toEqual(["/api/v2/auth/token", "/api/v2/payment/orders/1"]);
  });

  it("refused request changes nothing: framing and hop-by-hop headers in next.then.respond.headers are refused 400, and no rule is added", async () => {
    const t = await start();
    const s = await createSession(t);
    const headers = { "X-Ok": "fine", "content-length": "777", "Transfer-Encoding": "chunked", Connection: "close" };
    const r = await act(t, s, { next: { endpoint: "token", times: 1, then: { respond: { status: 200, headers, body: "x" } } } });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      invalid(
        s,
        [
          "next.then.respond.headers.content-length: 'content-length' cannot be scripted: the server sets it from the body. Remove it from the headers",
          "next.then.respond.headers.Transfer-Encoding: 'Transfer-Encoding' cannot be scripted: the server frames every answer with Content-Length. Remove it from the headers",
          "next.then.respond.headers.Connection: 'Connection' cannot be scripted: a hop-by-hop header: the server manages its connections. Remove it from the headers",
        ].join("; "),
      ),
    );
    // No rule: the exchange is the endpoint's own answer, with one Content-Length.
    const exchanged = await exchange(t, s.merchant);
    expect([exchanged.status, exchanged.headers.get("x-sandbox-rule"), exchanged.headers.get("content-length")]).toEqual([
      200,
      null,
      String(Buffer.byteLength(exchanged.text)),
    ]);
  });

  it("no 500 on bad input: a response body nested 30,000 deep is refused 400 at the level that crosses the limit, and no rule is added", async () => {
    const t = await start();
    const s = await createSession(t);
    const deep = "[".repeat(30_000) + "]".repeat(30_000);
    const r = await t.call(`/__sandbox/sessions/${s.id}/actions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `{"next": {"endpoint": "token", "times": 1, "then": {"respond": {"status": 200, "body": ${deep}}}}}`,
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      invalid(
        s,
        `next.then.respond.body${"[0]".repeat(64 - 4)}: this value nests mappings and lists more than 64 levels deep, the most a scenario, a profile or a session action may: flatten it`,
      ),
    );
    expect((await exchange(t, s.merchant)).headers.get("x-sandbox-rule")).toBeNull();
  });

  it("a valid now with an invalid next is refused whole: the now part is not applied", async () => {
    const t = await start();
    const s = await createSession(t);
    const token = await tokenOf(t, s.merchant);
    const r = await act(t, s, { now: { revoke_token: "all" }, next: { times: 1, then: {} } });
    expect(r.json).toEqual(invalid(s, "next.then: then needs at least one action"));
    expect((await pay(t, token)).status).toBe(200);
  });

  it("an advance_clock out of range is refused 400 clock_out_of_range, with nothing changed", async () => {
    const t = await start();
    const s = await createSession(t);
    const token = await tokenOf(t, s.merchant);
    const r = await act(t, s, { now: { revoke_token: "all", advance_clock: "-999999d" } });
    expectCode(r, 400, "clock_out_of_range");
    expect(r.json.detail).toMatch(
      /^now\.advance_clock would move the session's clock outside the dates tokens can carry: .*\. Advance it by less; nothing was changed\.$/,
    );
    expect((await pay(t, token)).status).toBe(200);
  });

  it("unbounded durations: a delay past 5m and a retry_after past a day or not whole seconds are refused 400, with nothing changed", async () => {
    const slept: number[] = [];
    const t = await start({ sleep: async (ms) => void slept.push(ms) });
    const s = await createSession(t);
    const refused = [
      [{ next: { times: 1, then: { delay: "100000h" } } }, "next.then.delay: must be at most 5m"],
      [
        { next: { times: 1, then: { respond: { status: 503, retry_after: 1e30 } } } },
        "next.then.respond.retry_after: must be at most 1d (86400 seconds)",
      ],
      [
        { next: { times: 1, then: { respond: { status: 503, retry_after: "1500ms" } } } },
        "next.then.respond.retry_after: must be whole seconds (the header carries an integer), such as 30s, 2m or 30",
      ],
      [
        { next: { times: 1, then: { issue_token: { not_before: "99999d" } } } },
        "next.then.issue_token.not_before: must be at most 3650d (ten years)",
      ],
    ] as const;
    for (const [body, message] of refused) expectProblem(await act(t, s, body), invalid(s, message));
    // Nothing was added: the next exchange is the endpoint's own, at once.
    const r = await exchange(t, s.merchant);
    expect([r.status, r.headers.get("retry-after"), slept]).toEqual([200, null, []]);

    // At the limits: accepted, and the header carries the integer.
    expect((await act(t, s, { next: { times: 1, then: { delay: "5m", respond: { status: 503, retry_after: 86400 } } } })).status).toBe(200);
    const limited = await exchange(t, s.merchant);
    expect([limited.status, limited.headers.get("retry-after"), slept]).toEqual([503, "86400", [300_000]]);
  });

  it("an unknown session is 404; the admin token is needed when set", async () => {
    const t = await start({ adminToken: "an-admin-token-of-16+" });
    const r = await t.call(
      "/__sandbox/sessions/ses_0000000000000000/actions",
      postJson({ now: { login_gone: true } }, { "x-admin-token": "an-admin-token-of-16+" }),
    );
    expect(r.json).toEqual(
      problem(
        404,
        "Not Found",
        "not_found",
        "There is no session 'ses_0000000000000000': it was deleted, reaped after being idle, or never created. Create one with POST /__sandbox/sessions.",
        "/__sandbox/sessions/ses_0000000000000000/actions",
        "not_found",
      ),
    );
    expectCode(await t.call("/__sandbox/sessions/ses_0000000000000000/actions", postJson({})), 401, "admin_token_required");
  });
});
