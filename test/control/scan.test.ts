import { generateKeyPair, SignJWT } from "jose";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  createSession,
  DEFAULT_MERCHANT_ID,
  DEFAULT_PAYMENT_TOKEN,
  DEFAULT_SECRET,
  postJson,
  type SessionAnswer,
  serversPerTest,
  startTestServer,
  type TestServer,
} from "../support/server.js";

/** POST /__sandbox/scan over real HTTP: which secrets of this sandbox a log text holds, and where. */

const SCAN = "/__sandbox/scan";
const PASSWORD = "sandbox-password";

describe("POST /__sandbox/scan", () => {
  let t: TestServer;
  let accessToken: string;
  let loginToken: string;
  let session: {
    id: string;
    merchant: { id: string; api_key: string; api_secret: string; payment_token: string; login: { email: string; password: string } };
  };

  beforeAll(async () => {
    t = await startTestServer();
    accessToken = await t.token();
    const login = await t.call("/api/login_check", postJson({ username: "merchant@sandbox.test", password: PASSWORD }));
    expect(login.status).toBe(200);
    loginToken = login.json.token;
    const created = await t.call("/__sandbox/sessions", postJson({}));
    expect(created.status).toBe(201);
    session = created.json;
  });
  afterAll(() => t.close());

  const scan = (text: string) => t.call(SCAN, postJson({ text }));

  it("finds an issued access token, a login token and every kind of merchant secret, at their exact line and column", async () => {
    const text = [
      "2026-01-01T00:00:00Z INFO starting", // 1
      `2026-01-01T00:00:01Z DEBUG GET /api/v2/payment/x authorization=Bearer ${accessToken}`, // 2
      `login ok token=${loginToken}`, // 3
      `config: {"api_key":"sandbox-api-key","api_secret":"${DEFAULT_SECRET}"}`, // 4
      `init with ${DEFAULT_PAYMENT_TOKEN}`, // 5
      `password=${PASSWORD}\r`, // 6 (a CRLF line)
      "nothing here", // 7
    ].join("\n");
    const r = await scan(text);
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.json).toEqual({
      hits: [
        { line: 2, column: 71, kind: "access_token", merchant: DEFAULT_MERCHANT_ID },
        { line: 3, column: 16, kind: "login_token", merchant: DEFAULT_MERCHANT_ID },
        { line: 4, column: 52, kind: "api_secret", merchant: DEFAULT_MERCHANT_ID },
        { line: 5, column: 11, kind: "payment_token", merchant: DEFAULT_MERCHANT_ID },
        { line: 6, column: 10, kind: "password", merchant: DEFAULT_MERCHANT_ID },
      ],
      unverified: [],
    });
    // The columns are where the secrets start.
    const lines = text.split("\n");
    expect(lines[1]!.indexOf(accessToken) + 1).toBe(71);
    expect(lines[3]!.indexOf(DEFAULT_SECRET) + 1).toBe(52);
  });

  it("never echoes a secret or a token in its answer", async () => {
    const r = await scan(`${accessToken} ${loginToken} ${DEFAULT_SECRET} ${DEFAULT_PAYMENT_TOKEN} ${PASSWORD} ${session.merchant.api_secret}`);
    expect(r.json.hits).toHaveLength(6);
    for (const secret of [accessToken, loginToken, DEFAULT_SECRET, DEFAULT_PAYMENT_TOKEN, PASSWORD, session.merchant.api_secret]) {
      expect(r.text).not.toContain(secret);
    }
    for (const part of [...accessToken.split("."), ...loginToken.split(".")]) expect(r.text).not.toContain(part);
  });

  it("knows the merchants of sessions too, and names them", async () => {
    const m = session.merchant;
    const r = await scan(`a ${m.api_secret}\nb ${m.payment_token}\nc ${m.login.password}`);
    expect(r.json.hits).toEqual([
      { line: 1, column: 3, kind: "api_secret", merchant: m.id },
      { line: 2, column: 3, kind: "payment_token", merchant: m.id },
      { line: 3, column: 3, kind: "password", merchant: m.id },
    ]);
    const token = await t.token(m.api_key, m.api_secret);
    expect((await scan(`x ${token}`)).json.hits).toEqual([{ line: 1, column: 3, kind: "access_token", merchant: m.id }]);
  });

  it("flags every token the sandbox signed, expired ones included, but not those that do not verify", async () => {
    const mint = async (variant: string) => (await t.call("/__sandbox/tokens", postJson({ variant }))).json.token as string;
    const signed = { expired: await mint("expired"), wrong_audience: await mint("wrong_audience"), login_token: await mint("login_token") };
    const unsigned = [await mint("foreign_key"), await mint("unknown_kid"), await mint("alg_none"), await mint("bad_signature")];
    const text = [...Object.values(signed), ...unsigned].join("\n");
    expect((await scan(text)).json).toEqual({
      hits: [
        { line: 1, column: 1, kind: "access_token", merchant: DEFAULT_MERCHANT_ID },
        { line: 2, column: 1, kind: "access_token", merchant: DEFAULT_MERCHANT_ID },
        { line: 3, column: 1, kind: "login_token", merchant: DEFAULT_MERCHANT_ID },
      ],
      // The others are JWTs all the same: listed where they stand, for a human to look at.
      unverified: unsigned.map((token, i) => ({ line: 4 + i, column: 1, length: token.length })),
    });
  });

  it("does not flag as ours a JWT signed by another key, even one that claims this sandbox's kid, nor a random eyJ string: they are unverified", async () => {
    const kid = (await t.call("/.well-known/jwks.json")).json.keys[0].kid as string;
    const { privateKey } = await generateKeyPair("RS256");
    const forged = await new SignJWT({ sub: DEFAULT_MERCHANT_ID, scope: "payment cashout" })
      .setProtectedHeader({ alg: "RS256", kid, typ: "at+jwt" })
      .setIssuedAt()
      .sign(privateKey);
    const random = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJub2JvZHkifQ.c2lnbmF0dXJlLW9mLW5vYm9keQ";
    const notJson = "eyJnot-json.eyJnot-json-either.sig";
    const r = await scan(`forged ${forged}\nrandom ${random}\n${notJson}\neyJ alone`);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      hits: [],
      unverified: [
        { line: 1, column: 8, length: forged.length },
        { line: 2, column: 8, length: random.length },
        { line: 3, column: 1, length: notJson.length },
      ],
    });
    for (const token of [forged, random, notJson]) expect(r.text).not.toContain(token);
  });

  it("counts columns in characters and finds a secret glued to other text and repeated on a line", async () => {
    const r = await scan(`é😀 ${DEFAULT_SECRET}|${DEFAULT_SECRET}\nBearer%20${accessToken}`);
    expect(r.json.hits).toEqual([
      { line: 1, column: 4, kind: "api_secret", merchant: DEFAULT_MERCHANT_ID },
      { line: 1, column: 4 + DEFAULT_SECRET.length + 1, kind: "api_secret", merchant: DEFAULT_MERCHANT_ID },
      { line: 2, column: 10, kind: "access_token", merchant: DEFAULT_MERCHANT_ID },
    ]);
  });

  it("places every hit on one long line of secrets at its exact column (issue 10 §5: 64 KB on one line)", async () => {
    // A wide character first, so code points and UTF-16 units differ all along the line.
    const unit = `${DEFAULT_SECRET} `;
    const count = Math.floor(60_000 / unit.length);
    const text = `😀${unit.repeat(count)}\n${PASSWORD}`;
    const r = await scan(text);
    expect(r.status).toBe(200);
    const hits = r.json.hits as Array<{ line: number; column: number; kind: string }>;
    expect(hits).toHaveLength(count + 1);
    expect(hits.slice(0, count).map((h) => h.column)).toEqual(Array.from({ length: count }, (_, i) => 2 + i * unit.length));
    expect(hits[count]).toEqual({ line: 2, column: 1, kind: "password", merchant: DEFAULT_MERCHANT_ID });
  });

  it("answers an empty list for clean text, and for an empty text", async () => {
    expect((await scan("GET /api/v2/payment/x 200 merchant=merchant_sandbox_default jti=abc")).json).toEqual({ hits: [], unverified: [] });
    expect((await scan("")).json).toEqual({ hits: [], unverified: [] });
  });

  it("refuses a body without a text string, other fields, and a body over the size limit", async () => {
    expect(await t.call(SCAN, postJson({}))).toMatchObject({ status: 400, json: { code: "scan_text_missing" } });
    expect(await t.call(SCAN, postJson({ text: 42 }))).toMatchObject({ status: 400, json: { code: "scan_text_invalid" } });
    expect(await t.call(SCAN, postJson({ text: "", lines: [] }))).toMatchObject({ status: 400, json: { code: "unknown_field" } });
    const big = await t.call(SCAN, postJson({ text: `${DEFAULT_SECRET}\n`.repeat(4000) }));
    expect(big.status).toBe(413);
    expect(big.text).not.toContain(DEFAULT_SECRET);
    const get = await t.call(SCAN);
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
  });

  it("does not echo the text in a malformed-JSON refusal", async () => {
    const r = await t.call(SCAN, { method: "POST", headers: { "content-type": "application/json" }, body: `{"text": "${DEFAULT_SECRET}` });
    expect(r.status).toBe(400);
    expect(r.json.code).toBe("body_malformed_json");
    expect(r.text).not.toContain(DEFAULT_SECRET);
  });
});

describe("POST /__sandbox/scan with many sessions", () => {
  it("finds every session's secrets when there are hundreds of them (the indexed pass)", async () => {
    const t = await startTestServer();
    try {
      const sessions: Array<{ merchant: { id: string; api_secret: string; payment_token: string; login: { password: string } } }> = [];
      for (let i = 0; i < 110; i++) sessions.push((await t.call("/__sandbox/sessions", postJson({}))).json);
      const [a, b] = [sessions[7]!.merchant, sessions[103]!.merchant];
      const text = `x\n  ${b.payment_token} ${a.api_secret}\n${DEFAULT_SECRET}${b.login.password}`;
      expect((await t.call(SCAN, postJson({ text }))).json.hits).toEqual([
        { line: 2, column: 3, kind: "payment_token", merchant: b.id },
        { line: 2, column: 4 + b.payment_token.length, kind: "api_secret", merchant: a.id },
        { line: 3, column: 1, kind: "api_secret", merchant: DEFAULT_MERCHANT_ID },
        { line: 3, column: 1 + DEFAULT_SECRET.length, kind: "password", merchant: b.id },
      ]);
    } finally {
      await t.close();
    }
  });
});

describe.each(["RS256", "ES256", "HS256"])("POST /__sandbox/scan with %s tokens", (algorithm) => {
  it("finds a token glued to more base64url characters, and not one with a cut signature (unverified)", async () => {
    const t = await startTestServer({ algorithm });
    try {
      const token = await t.token();
      const cut = token.slice(0, -2);
      const r = await t.call(SCAN, postJson({ text: `a=${token}XYZ_-09\nb=${token}\nc=${cut}` }));
      expect(r.json).toEqual({
        hits: [
          { line: 1, column: 3, kind: "access_token", merchant: DEFAULT_MERCHANT_ID },
          { line: 2, column: 3, kind: "access_token", merchant: DEFAULT_MERCHANT_ID },
        ],
        unverified: [{ line: 3, column: 3, length: cut.length }],
      });
    } finally {
      await t.close();
    }
  });
});

describe("POST /__sandbox/scan with an admin token", () => {
  it("wants the admin token like the rest of the control plane", async () => {
    const t = await startTestServer({ adminToken: "admin-t0ken-of-16+" });
    try {
      const body = postJson({ text: DEFAULT_SECRET });
      const refused = await t.call(SCAN, body);
      expect(refused.status).toBe(401);
      expect(refused.json.code).toBe("admin_token_required");
      const ok = await t.call(SCAN, postJson({ text: DEFAULT_SECRET }, { authorization: "Bearer admin-t0ken-of-16+" }));
      expect(ok.json).toEqual({ hits: [{ line: 1, column: 1, kind: "api_secret", merchant: DEFAULT_MERCHANT_ID }], unverified: [] });
    } finally {
      await t.close();
    }
  });

  it("is absent with the control plane off", async () => {
    const t = await startTestServer({ controlPlane: false });
    try {
      const r = await t.call(SCAN, postJson({ text: DEFAULT_SECRET }));
      expect(r.status).toBe(404);
      expect(r.text).not.toContain(DEFAULT_SECRET);
    } finally {
      await t.close();
    }
  });
});

describe("POST /__sandbox/scan remembers what ended (issue 25 §2)", () => {
  const start = serversPerTest();
  afterEach(() => {
    vi.useRealTimers();
  });

  const scanOf = async (t: TestServer, text: string) => (await t.call(SCAN, postJson({ text }))).json;
  const act = async (t: TestServer, s: SessionAnswer, now: Record<string, unknown>) =>
    expect((await t.call(`/__sandbox/sessions/${s.id}/actions`, postJson({ now }))).status).toBe(200);
  /** The secrets and a token of a session, one per line, and the hits they are. */
  const leaks = (m: SessionAnswer["merchant"], token: string) => ({
    text: [`a ${m.api_secret}`, `b ${m.payment_token}`, `c ${m.login.password}`, `d Bearer ${token}`].join("\n"),
    hits: [
      { line: 1, column: 3, kind: "api_secret", merchant: m.id },
      { line: 2, column: 3, kind: "payment_token", merchant: m.id },
      { line: 3, column: 3, kind: "password", merchant: m.id },
      { line: 4, column: 10, kind: "access_token", merchant: m.id },
    ],
  });

  it("remembers ended sessions: the secrets and tokens of a DELETEd session, its own rotated key included, are still found", async () => {
    const t = await start();
    const s = await createSession(t);
    // A key of the session's own (rotate_key): it leaves the ring when the session ends.
    await act(t, s, { rotate_signing_key: true });
    const token = await t.token(s.merchant.api_key, s.merchant.api_secret);
    const { text, hits } = leaks(s.merchant, token);
    expect((await scanOf(t, text)).hits).toEqual(hits);
    expect((await t.call(`/__sandbox/sessions/${s.id}`, { method: "DELETE" })).status).toBe(204);
    const r = await t.call(SCAN, postJson({ text }));
    // The hits first: before the fix, the session's secrets and token were no longer found.
    expect(r.json.hits).toEqual(hits);
    expect(r.json.unverified).toEqual([]);
    for (const secret of [s.merchant.api_secret, s.merchant.payment_token, s.merchant.login.password, token]) expect(r.text).not.toContain(secret);
  });

  it("remembers ended sessions: a session reaped after being idle", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.UTC(2026, 0, 1));
    const t = await start();
    const s = await createSession(t);
    const token = await t.token(s.merchant.api_key, s.merchant.api_secret);
    vi.setSystemTime(Date.UTC(2026, 0, 1, 1)); // an hour: past the 30 minutes of idle time
    expect((await t.call(`/__sandbox/sessions/${s.id}`)).status).toBe(404);
    const { text, hits } = leaks(s.merchant, token);
    const answer = await scanOf(t, text);
    expect(answer.hits).toEqual(hits);
    expect(answer.unverified).toEqual([]);
  });

  it("remembers former secrets and rotated-out keys: an api_secret rotated away five times, a token of a key rotated out", async () => {
    const t = await start();
    const s = await createSession(t);
    const first = s.merchant.api_secret;
    await act(t, s, { rotate_signing_key: true });
    const token = await t.token(s.merchant.api_key, first);
    // Its key is dropped by the next rotation (no keep_old): the sandbox no longer accepts the token.
    await act(t, s, { rotate_signing_key: true });
    const refused = await t.call("/api/v2/payment/orders", { headers: { authorization: `Bearer ${token}` } });
    expect(refused.status).toBe(401);
    // A merchant keeps 4 former secrets as proof of identity; the fifth rotation forgets the first.
    for (let i = 0; i < 5; i++) await act(t, s, { rotate_secret: true });
    const r = await t.call(SCAN, postJson({ text: `old=${first}\n${token}` }));
    expect(r.json.hits).toEqual([
      { line: 1, column: 5, kind: "api_secret", merchant: s.merchant.id },
      { line: 2, column: 1, kind: "access_token", merchant: s.merchant.id },
    ]);
    expect(r.json.unverified).toEqual([]);
    expect(r.text).not.toContain(first);
  });
});
