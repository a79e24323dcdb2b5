import { internalsOf } from "../../src/app/internals.js";
import { decodeProtectedHeader } from "jose";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { ScenarioKeys } from "../../src/core/scenario-keys.js";
import { postJson, problem, type Reply, type TestServer, serversPerTest } from "../support/server.js";
import { bearer, expectProblem, RENEW_HINT } from "../support/expect.js";

/**
 * Session churn must not grow the sandbox (issue 10 §5): a session of a rotating scenario brings
 * keys of its own and, once reset, a "revoke all" cutoff in the token ledger; both go when the
 * session ends, while its tokens keep getting the answer they got when nothing was dropped. Real
 * HTTP against the real server; the counts are read from the sandbox (ring size, ledger cutoffs).
 */

const ROTATING = "signing-key-rotation";
const ORDERS = "/api/v2/payment/orders";

// About the keys sessions make and give back: generated, not the run's (test/support/keys.ts).
const start = serversPerTest({ generateKeys: true });
/** A server with the rotating scenario loaded, for the current test. */
const server = () => start({ scenarios: [ROTATING] });

interface Session {
  id: string;
  merchant: { id: string; api_key: string; api_secret: string; login: { email: string; password: string } };
}

async function createSession(t: TestServer): Promise<Session> {
  const r = await t.call("/__sandbox/sessions", postJson({ scenario: ROTATING }));
  expect(r.status, r.text).toBe(201);
  return r.json as Session;
}

async function tokenOf(t: TestServer, s: Session): Promise<string> {
  const r = await t.call("/api/v2/auth/token", postJson({ api_key: s.merchant.api_key, api_secret: s.merchant.api_secret }));
  expect(r.status, r.text).toBe(200);
  return r.json.access_token as string;
}

const pay = (t: TestServer, token: string): Promise<Reply> => t.call(ORDERS, bearer(token));

/** Three payment calls: the third rotates the session's key away (signing-key-rotation). */
async function rotate(t: TestServer, token: string): Promise<void> {
  expect((await pay(t, token)).status).toBe(200);
  expect((await pay(t, token)).status).toBe(200);
  expect((await pay(t, token)).json.code).toBe("token_unknown_kid");
}

async function jwksKids(t: TestServer): Promise<string[]> {
  return ((await t.call("/.well-known/jwks.json")).json.keys as Array<{ kid: string }>).map((k) => k.kid).sort();
}

const counts = (t: TestServer) => ({ keys: internalsOf(t.sandbox).ring.size, cutoffs: internalsOf(t.sandbox).ledger.merchantCutoffs });

const UNKNOWN_MERCHANT = problem(
  401,
  "Unauthorized",
  "token_unknown_merchant",
  `The token's subject is not a merchant of this sandbox. ${RENEW_HINT}`,
  ORDERS,
  "invalid_token",
);

function unknownKid(kid: string) {
  return problem(
    401,
    "Unauthorized",
    "token_unknown_kid",
    `The token's signing key (kid '${kid}') is not one of this sandbox's keys: the key was rotated, or the token comes from another sandbox or environment. ${RENEW_HINT}`,
    ORDERS,
    "invalid_token",
  );
}

describe("session churn", () => {
  it("regression: keys and ledger cutoffs grew with every session cycle; they are back to baseline after create/rotate/reset/delete cycles", async () => {
    const t = await server();
    const baseline = counts(t);
    const baselineKids = await jwksKids(t);
    // The sandbox's own start key and the loaded rotating scenario's key.
    expect(baseline).toEqual({ keys: 2, cutoffs: 0 });

    for (let cycle = 0; cycle < 2; cycle++) {
      const s = await createSession(t);
      expect(counts(t).keys).toBe(baseline.keys + 1); // the session's own start key
      await rotate(t, await tokenOf(t, s));
      // The rotated-away key left the ring at once; the new one is in.
      expect(counts(t).keys).toBe(baseline.keys + 2);
      expect((await pay(t, await tokenOf(t, s))).status).toBe(200);
      expect((await t.call(`/__sandbox/sessions/${s.id}/reset`, postJson({}))).status).toBe(200);
      // Reset: back to the session's start key alone, and one "revoke all" cutoff.
      expect(counts(t)).toEqual({ keys: baseline.keys + 1, cutoffs: 1 });
      expect((await t.call(`/__sandbox/sessions/${s.id}`, { method: "DELETE" })).status).toBe(204);
      expect(counts(t)).toEqual(baseline);
    }
    expect(await jwksKids(t)).toEqual(baselineKids);
  });

  it("regression: a reaped or deleted session's keys leave the ring; the loaded scenario's and the shared start key stay", async () => {
    const t = await server();
    const loadedToken = await t.token("signing-key-rotation-key", "signing-key-rotation-secret");
    const defaultToken = await t.token();
    const before = await jwksKids(t);
    const s = await createSession(t);
    const kid = decodeProtectedHeader(await tokenOf(t, s)).kid!;
    expect(await jwksKids(t)).toEqual([...before, kid].sort());
    t.sandbox.sessions.deleteAll();
    expect(internalsOf(t.sandbox).ring.find(kid)).toBeUndefined();
    expect(await jwksKids(t)).toEqual(before);
    expect((await pay(t, loadedToken)).status).toBe(200);
    expect((await pay(t, defaultToken)).status).toBe(200);
  });

  it("a token of an ended session whose key left the ring gets the same answer as before: token_unknown_merchant", async () => {
    const t = await server();
    const s = await createSession(t);
    const first = await tokenOf(t, s);
    await rotate(t, first);
    const second = await tokenOf(t, s); // signed with the key rotated in
    expect((await pay(t, second)).status).toBe(200);
    const unused = await tokenOf(t, s); // never verified, so not in the verified-token cache
    const login = await t.call("/api/login_check", postJson({ username: s.merchant.login.email, password: s.merchant.login.password }));
    expect(login.status, login.text).toBe(200);
    expect((await t.call(`/__sandbox/sessions/${s.id}`, { method: "DELETE" })).status).toBe(204);

    expectProblem(await pay(t, second), UNKNOWN_MERCHANT);
    expectProblem(await pay(t, unused), UNKNOWN_MERCHANT);
    // The deprecated login's token, accepted by default (loginToken), is judged as an access token is: its merchant is gone.
    expectProblem(await pay(t, login.json.token as string), UNKNOWN_MERCHANT);
  });

  it("a forged token naming an ended session's key and a live merchant is refused token_unknown_kid, never accepted", async () => {
    const t = await server();
    const s = await createSession(t);
    const token = await tokenOf(t, s);
    const kid = decodeProtectedHeader(token).kid!;
    expect((await t.call(`/__sandbox/sessions/${s.id}`, { method: "DELETE" })).status).toBe(204);
    // The session token's header and signature, with a payload naming the default merchant.
    const [header, payload, signature] = token.split(".") as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Record<string, unknown>;
    const forgedPayload = Buffer.from(JSON.stringify({ ...claims, sub: "merchant_sandbox_default" })).toString("base64url");
    expectProblem(await pay(t, `${header}.${forgedPayload}.${signature}`), unknownKid(kid));
  });
});

describe("key ring bounded against rotations", () => {
  const rotateNow = (t: TestServer, id: string, keepOld = false) =>
    t.call(`/__sandbox/sessions/${id}/actions`, postJson({ now: { rotate_signing_key: keepOld ? { keep_old: true } : true } }));
  const noSession = (id: string) =>
    problem(
      404,
      "Not Found",
      "not_found",
      `There is no session '${id}': it was deleted, reaped after being idle, or never created. Create one with POST /__sandbox/sessions.`,
      `/__sandbox/sessions/${id}/actions`,
      "not_found",
    );

  it("bounded memory: a session deleted while its rotate_signing_key makes the key: the key leaves the ring, the rotation answers 404", async () => {
    const t = await start();
    const ring = internalsOf(t.sandbox).ring;
    const before = ring.size;
    const s = await createSession(t);
    // Holds the rotation's key generation until the DELETE is answered: the race, every time.
    const generate = ring.generate.bind(ring);
    let generating!: () => void;
    const started = new Promise<void>((resolve) => {
      generating = resolve;
    });
    let deleted!: () => void;
    const afterDelete = new Promise<void>((resolve) => {
      deleted = resolve;
    });
    const spy = vi.spyOn(ring, "generate").mockImplementation(async (alg) => {
      generating();
      await afterDelete;
      return generate(alg);
    });
    onTestFinished(() => spy.mockRestore());
    const rotation = rotateNow(t, s.id);
    await started;
    expect((await t.call(`/__sandbox/sessions/${s.id}`, { method: "DELETE" })).status).toBe(204);
    deleted();
    expectProblem(await rotation, noSession(s.id));
    expect(ring.size).toBe(before);
    expect((await t.call(`/__sandbox/sessions/${s.id}`)).status).toBe(404);
  });

  it("bounded memory: keep_old rotations keep at most 10 keys of a session, the oldest retired first", async () => {
    // ES256: a key in a millisecond, and published in the JWKS (the ring's growth shows there).
    const t = await start({ algorithm: "ES256" });
    const before = { ring: internalsOf(t.sandbox).ring.size, jwks: await jwksKids(t) };
    const s = await createSession(t);
    const token = await tokenOf(t, s);
    const kids: string[] = [];
    for (let i = 0; i < 3 * ScenarioKeys.MAX_ACCEPTED; i++) {
      const r = await rotateNow(t, s.id, true);
      expect(r.status, r.text).toBe(200);
      kids.push(decodeProtectedHeader(await tokenOf(t, s)).kid!);
    }
    expect(ScenarioKeys.MAX_ACCEPTED).toBe(10);
    const kept = kids.slice(-ScenarioKeys.MAX_ACCEPTED);
    // The session's own start key plus its kept keys: the oldest rotated ones left the ring.
    expect(internalsOf(t.sandbox).ring.size).toBe(before.ring + 1 + ScenarioKeys.MAX_ACCEPTED);
    expect(await jwksKids(t)).toEqual([...before.jwks, ...kept].sort());
    for (const kid of kids.slice(0, -ScenarioKeys.MAX_ACCEPTED)) expect(internalsOf(t.sandbox).ring.find(kid)).toBeUndefined();
    // The session's first token, signed with its start key, is no longer accepted (oldest first).
    expectProblem(await pay(t, token), unknownKid(decodeProtectedHeader(token).kid!));
    expect((await t.call(`/__sandbox/sessions/${s.id}`, { method: "DELETE" })).status).toBe(204);
    expect({ ring: internalsOf(t.sandbox).ring.size, jwks: await jwksKids(t) }).toEqual(before);
  });
});

describe("5,000 sessions, created and ended", () => {
  /** What the sandbox holds per session; all of it must go back to where it was when they end. */
  const held = (t: TestServer) => ({
    sessions: t.sandbox.sessions.size,
    scenarios: t.sandbox.scenarios.length,
    merchants: internalsOf(t.sandbox).merchants.all().length,
    keys: internalsOf(t.sandbox).ring.size,
    cutoffs: internalsOf(t.sandbox).ledger.merchantCutoffs,
  });

  /** `count` calls of `call`, 10 at a time, as a CI fleet would make them. */
  async function tenAtATime(count: number, call: (i: number) => Promise<void>): Promise<void> {
    let next = 0;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (next < count) await call(next++);
      }),
    );
  }

  it(
    "regression: every registry (sessions, scenarios, merchants, their secrets, keys, ledger) is back to its start once they end",
    { timeout: 180_000 },
    async () => {
      const t = await start({ maxSessions: 5000 });
      const baseline = held(t);
      const ids: string[] = [];
      const secrets: string[] = [];
      await tenAtATime(5000, async () => {
        const r = await t.call("/__sandbox/sessions", postJson({}));
        expect(r.status, r.text).toBe(201);
        ids.push(r.json.id);
        secrets.push(r.json.merchant.api_secret, r.json.merchant.payment_token, r.json.merchant.login.password);
      });
      expect(held(t)).toEqual({ ...baseline, sessions: 5000, scenarios: 5001, merchants: 5001 });
      expect(secrets.every((s) => internalsOf(t.sandbox).merchants.secrets.has(s))).toBe(true);

      await tenAtATime(5000, async (i) => {
        const r = await t.call(`/__sandbox/sessions/${ids[i]}`, { method: "DELETE" });
        expect(r.status, r.text).toBe(204);
      });
      expect(held(t)).toEqual(baseline);
      expect(secrets.some((s) => internalsOf(t.sandbox).merchants.secrets.has(s))).toBe(false);
      // The redaction's tables keep at most as many secrets of ended merchants as are held (3 here).
      expect(internalsOf(t.sandbox).merchants.secrets.leftoverCount).toBeLessThanOrEqual(3);
      expect((await t.call("/__sandbox/sessions")).json).toEqual({ sessions: [] });
    },
  );
});
