import { afterEach, describe, expect, it } from "vitest";
import { createSandbox, MemoryStore, type Sandbox, type StateStore } from "../../src/index.js";
import { StateUnavailable } from "../../src/core/errors.js";
import { call } from "../support/in-process.js";
import { over } from "../support/state-stores.js";
import { problem } from "../support/server.js";

/**
 * Two sandboxes in one process given one MemoryStore behave as two replicas behind a balancer: what
 * one changes, the other answers from at once. (The Redis store is the same contract:
 * test/contract/; the real cluster is test/cluster/.)
 */

const opened: Sandbox[] = [];

afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

async function replicas(store: StateStore = new MemoryStore(), sleep?: (ms: number) => Promise<void>): Promise<[Sandbox, Sandbox]> {
  const a = await createSandbox({ state: store, algorithm: "ES256", ...(sleep && { sleep }) });
  const b = await createSandbox({ state: store, algorithm: "ES256", ...(sleep && { sleep }) });
  opened.push(a, b);
  return [a, b];
}

describe("two sandboxes sharing one MemoryStore", () => {
  it("sign with the same key and publish the same JWKS", async () => {
    const [a, b] = await replicas();
    const jwksA = await call(a, "GET", "/.well-known/jwks.json");
    const jwksB = await call(b, "GET", "/.well-known/jwks.json");
    expect(jwksA.status).toBe(200);
    expect(jwksB.json).toEqual(jwksA.json);
    expect(a.state).toBe("memory");
  });

  it("share a session: made on one, used on the other, revoked on one, refused on both", async () => {
    const [a, b] = await replicas();
    const made = await call(a, "POST", "/__sandbox/sessions", {});
    expect(made.status).toBe(201);
    const { id, merchant } = made.json;
    const tokenOnB = await call(b, "POST", `/s/${id}/api/v2/auth/token`, { api_key: merchant.api_key, api_secret: merchant.api_secret });
    expect(tokenOnB.status).toBe(200);
    const bearer = { authorization: `Bearer ${tokenOnB.json.access_token}` };
    expect((await call(a, "GET", `/s/${id}/api/v2/payment/p_1`, undefined, bearer)).status).toBe(200);
    const revoked = await call(a, "POST", `/__sandbox/sessions/${id}/actions`, { now: { revoke_token: "all" } });
    expect(revoked.status).toBe(200);
    const onB = await call(b, "GET", `/s/${id}/api/v2/payment/p_2`, undefined, bearer);
    expect([onB.status, onB.json.code]).toEqual([401, "token_revoked"]);
    const journalA = await call(a, "GET", `/__sandbox/requests?session=${id}`);
    const journalB = await call(b, "GET", `/__sandbox/requests?session=${id}`);
    expect(journalA.json.requests.map((e: { path: string; status: number }) => `${e.path} ${e.status}`)).toEqual([
      "/api/v2/auth/token 200",
      "/api/v2/payment/p_1 200",
      "/api/v2/payment/p_2 401",
    ]);
    expect(journalB.json).toEqual(journalA.json);
    const ended = await call(b, "DELETE", `/__sandbox/sessions/${id}`);
    expect(ended.status).toBe(204);
    expect((await call(a, "GET", `/__sandbox/sessions/${id}`)).status).toBe(404);
  });

  it("move one clock for both", async () => {
    const [a, b] = await replicas();
    const moved = await call(a, "POST", "/__sandbox/clock", { freeze: true, set: "2030-01-01T00:00:00Z" });
    expect(moved.status).toBe(200);
    const seen = await call(b, "GET", "/__sandbox/clock");
    expect(seen.json).toEqual(moved.json);
  });

  it("fire a one-shot rule once among concurrent calls on both", async () => {
    const [a, b] = await replicas();
    const made = await call(a, "POST", "/__sandbox/sessions", {});
    const { id, merchant } = made.json;
    const token = await call(a, "POST", `/s/${id}/api/v2/auth/token`, { api_key: merchant.api_key, api_secret: merchant.api_secret });
    const bearer = { authorization: `Bearer ${token.json.access_token}` };
    const next = await call(b, "POST", `/__sandbox/sessions/${id}/actions`, {
      next: { endpoint: "payment", times: 1, then: { respond: { status: 503 } } },
    });
    expect(next.status).toBe(200);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call(i % 2 ? a : b, "GET", `/s/${id}/api/v2/payment/x_${i}`, undefined, bearer)),
    );
    expect(answers.map((r) => [r.status, r.json?.code, r.headers["x-sandbox-rule"]]).filter(([s]) => s !== 200)).toEqual([
      [503, "service_unavailable", "default/action-1"],
    ]);
    expect(answers.filter((r) => r.status === 200)).toHaveLength(19);
  });

  it("reset through one: sessions, journal and clock start again on both", async () => {
    const [a, b] = await replicas();
    const made = await call(a, "POST", "/__sandbox/sessions", {});
    const { id, merchant } = made.json;
    expect((await call(b, "POST", `/s/${id}/api/v2/auth/token`, { api_key: merchant.api_key, api_secret: merchant.api_secret })).status).toBe(200);
    expect((await call(a, "POST", "/__sandbox/clock", { advance: "1h" })).status).toBe(200);
    const reset = await call(b, "POST", "/__sandbox/reset", {});
    expect(reset.status).toBe(200);
    expect((await call(a, "GET", `/__sandbox/sessions/${id}`)).status).toBe(404);
    expect((await call(a, "GET", "/__sandbox/requests")).json.requests).toEqual([]);
    // The hour moved through A is gone on both: each reads its wall clock again.
    for (const replica of [a, b]) {
      const clock = (await call(replica, "GET", "/__sandbox/clock")).json;
      expect(clock.frozen).toBe(false);
      expect(Math.abs(Date.parse(clock.now) - Date.now())).toBeLessThan(60_000);
    }
  });

  it("agree on a session's expires_at, whichever replica its client used", async () => {
    const [a, b] = await replicas();
    const made = await call(a, "POST", "/__sandbox/sessions", {});
    const { id, merchant } = made.json;
    expect((await call(b, "POST", `/s/${id}/api/v2/auth/token`, { api_key: merchant.api_key, api_secret: merchant.api_secret })).status).toBe(200);
    const onA = await call(a, "GET", `/__sandbox/sessions/${id}`);
    const onB = await call(b, "GET", `/__sandbox/sessions/${id}`);
    expect(onA.json.expires_at).toBe(onB.json.expires_at);
    expect(Date.parse(onA.json.expires_at)).toBeGreaterThan(Date.parse(made.json.expires_at) - 1);
  });

  it("start a new replica however many keys rotated away since: a part carries the keys it names", async () => {
    const store = new MemoryStore({ keysSize: 3 });
    const [a] = await replicas(store);
    for (let i = 0; i < 4; i++) {
      const { id } = (await call(a, "POST", "/__sandbox/sessions", {})).json;
      expect((await call(a, "POST", `/__sandbox/sessions/${id}/actions`, { now: { rotate_signing_key: true } })).status).toBe(200);
      expect((await call(a, "DELETE", `/__sandbox/sessions/${id}`)).status).toBe(204);
    }
    const late = await createSandbox({ state: store, algorithm: "ES256" });
    opened.push(late);
    expect((await call(late, "GET", "/.well-known/jwks.json")).json).toEqual((await call(a, "GET", "/.well-known/jwks.json")).json);
  });

  it("wait out a rule's delay after the commit: other changes on the replica go on meanwhile", async () => {
    const waiting: Array<() => void> = [];
    const held = (_ms: number) => new Promise<void>((resolve) => waiting.push(resolve));
    const [a] = await replicas(new MemoryStore(), held);
    const { id, merchant } = (await call(a, "POST", "/__sandbox/sessions", {})).json;
    const token = await call(a, "POST", `/s/${id}/api/v2/auth/token`, { api_key: merchant.api_key, api_secret: merchant.api_secret });
    const bearer = { authorization: `Bearer ${token.json.access_token}` };
    await call(a, "POST", `/__sandbox/sessions/${id}/actions`, { next: { endpoint: "payment", times: 1, then: { delay: "3s" } } });
    const slow = call(a, "GET", `/s/${id}/api/v2/payment/slow`, undefined, bearer);
    // The slow call's rule has fired and its delay is owed; the replica still makes a session.
    while (waiting.length === 0) await new Promise((resolve) => setImmediate(resolve));
    expect((await call(a, "POST", "/__sandbox/sessions", {})).status).toBe(201);
    waiting.shift()!();
    const answered = await slow;
    expect([answered.status, answered.headers["x-sandbox-rule"]]).toEqual([200, "default/action-1"]);
  });

  it("journal a request object handled twice at once twice: each handling is a run of its own", async () => {
    const [a] = await replicas();
    const body = Buffer.from(JSON.stringify({ api_key: "sandbox-api-key", api_secret: "sandbox-api-secret" }));
    const request = {
      method: "POST",
      path: "/api/v2/auth/token",
      query: "",
      headers: { host: "localhost", "content-type": "application/json" },
      body,
    };
    const answers = await Promise.all([a.handle(request), a.handle(request)]);
    expect(answers.map((r) => r.status)).toEqual([200, 200]);
    expect((await call(a, "GET", "/__sandbox/requests")).json.requests).toHaveLength(2);
  });

  it("count a deferred rule delay in the journal's durationMs", async () => {
    const [a] = await replicas(new MemoryStore(), () => Promise.resolve());
    const { id, merchant } = (await call(a, "POST", "/__sandbox/sessions", {})).json;
    await call(a, "POST", `/__sandbox/sessions/${id}/actions`, { next: { endpoint: "token", times: 1, then: { delay: "300ms" } } });
    expect((await call(a, "POST", `/s/${id}/api/v2/auth/token`, { api_key: merchant.api_key, api_secret: merchant.api_secret })).status).toBe(200);
    const [entry] = (await call(a, "GET", `/__sandbox/requests?session=${id}`)).json.requests;
    expect(entry.durationMs).toBeGreaterThanOrEqual(300);
  });

  it("keep a request committed while a starting replica reads the journal", async () => {
    const inner = new MemoryStore();
    const [a] = await replicas(inner);
    let releaseJournal!: () => void;
    const journalRead = new Promise<void>((resolve) => {
      releaseJournal = resolve;
    });
    let asked = false;
    let fed = false;
    // The same store, but its journal answers only when the test says, and it tells when the feed brought something.
    const slow = over(inner, {
      journal: async () => {
        const rows = await inner.journal();
        asked = true;
        await journalRead;
        return rows;
      },
      feed: async (after, limit, waitMs) => {
        const entries = await inner.feed(after, limit, waitMs);
        if (asked && entries.length > 0) fed = true;
        return entries;
      },
    });
    const starting = createSandbox({ state: slow, algorithm: "ES256" });
    while (!asked) await new Promise((resolve) => setTimeout(resolve, 5));
    expect((await call(a, "POST", "/api/v2/auth/token", { api_key: "sandbox-api-key", api_secret: "sandbox-api-secret" })).status).toBe(200);
    while (!fed) await new Promise((resolve) => setTimeout(resolve, 5));
    releaseJournal();
    const b = await starting;
    opened.push(b);
    const onB = (await call(b, "GET", "/__sandbox/requests")).json.requests;
    expect(onB).toEqual((await call(a, "GET", "/__sandbox/requests")).json.requests);
    expect(onB).toHaveLength(1);
  });

  it("answer 503 state_unavailable with Retry-After while the store fails, and recover by themselves", async () => {
    let down = false;
    const refuse = () => Promise.reject(new StateUnavailable("the test's store is down"));
    const inner = new MemoryStore();
    const [a] = await replicas(
      over(inner, {
        sync: (cursor) => (down ? refuse() : inner.sync(cursor)),
        commit: (request) => (down ? refuse() : inner.commit(request)),
      }),
    );
    const { id, merchant } = (await call(a, "POST", "/__sandbox/sessions", {})).json;
    const { access_token } = (await call(a, "POST", `/s/${id}/api/v2/auth/token`, { api_key: merchant.api_key, api_secret: merchant.api_secret }))
      .json;
    const paying = [`/s/${id}/api/v2/payment/status`, undefined, { authorization: `Bearer ${access_token}` }] as const;
    const headers = { "content-type": "application/problem+json", "cache-control": "no-store", "retry-after": "1" };
    down = true;
    expect(await call(a, "GET", ...paying)).toEqual({
      status: 503,
      headers,
      json: problem(503, "Service Unavailable", "state_unavailable", CLIENT_DETAIL, paying[0], "temporarily_unavailable"),
    });
    // The health check is the operator's: it names the store and says what failed.
    expect(await call(a, "GET", "/__sandbox/health")).toEqual({
      status: 503,
      headers,
      json: problem(
        503,
        "Service Unavailable",
        "state_unavailable",
        "The shared state at memory is not usable from this replica: the test's store is down",
        "/__sandbox/health",
        "temporarily_unavailable",
      ),
    });
    down = false;
    expect((await call(a, "GET", "/__sandbox/health")).status).toBe(200);
    expect((await call(a, "GET", ...paying)).status).toBe(200);
  });
});

/** What a client is told when the store failed (never the store's own message). */
const CLIENT_DETAIL =
  "The sandbox's shared state did not answer in time, so this request was not run, or nothing it did was stored. Retry after Retry-After seconds.";
