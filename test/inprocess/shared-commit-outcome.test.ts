import { afterEach, describe, expect, it } from "vitest";
import { createSandbox, MemoryStore, type Sandbox, type StateStore } from "../../src/index.js";
import { StateUnavailable } from "../../src/core/errors.js";
import type { CommitRequest } from "../../src/core/state-store.js";
import { call } from "../support/in-process.js";
import { over } from "../support/state-stores.js";
import { problem } from "../support/server.js";

/**
 * What a client is told always matches what the store holds, whatever became of the commit of its
 * request: applied with its answer lost (a slow link, a connection cut), lost before it applied,
 * refused because another replica changed what it read. Replicas in one process on one
 * MemoryStore, whose commits the tests break on purpose.
 */

const opened: Sandbox[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

const CREDENTIALS = { api_key: "sandbox-api-key", api_secret: "sandbox-api-secret" };
const HEADERS = { "content-type": "application/problem+json", "cache-control": "no-store", "retry-after": "1" };
/** What a client is told when its request's commit is known not to be stored. */
const NOT_STORED =
  "The sandbox's shared state did not answer in time, so this request was not run, or nothing it did was stored. Retry after Retry-After seconds.";

type Fault = "answer lost" | "lost on the way" | "answer lost, settle silent" | "lost, settle held";

/**
 * The store two replicas share, with a fault armed for the next commit that `matches`: its answer
 * lost after it applied, or the commit lost before it reached the store (kept, to deliver late).
 */
function breakable(inner = new MemoryStore()) {
  let armed: { fault: Fault; matches: (r: CommitRequest) => boolean } | undefined;
  const lost: CommitRequest[] = [];
  let silentSettle: string | undefined;
  let heldSettle: string | undefined;
  let letSettle: () => void = () => {};
  const settleLet = new Promise<void>((resolve) => {
    letSettle = resolve;
  });
  let fired: () => void = () => {};
  /** Resolves when the armed fault has happened (the commit it broke reached, or not, the store). */
  let faulted = new Promise<void>((resolve) => {
    fired = resolve;
  });
  const store = over(inner, {
    commit: async (request) => {
      const fault = armed?.matches(request) ? armed.fault : undefined;
      if (fault === undefined) return inner.commit(request);
      armed = undefined;
      if (fault === "lost on the way") lost.push(request);
      else if (fault !== "lost, settle held") await inner.commit(request);
      if (fault === "answer lost, settle silent") silentSettle = request.id;
      if (fault === "lost, settle held") heldSettle = request.id;
      fired();
      throw new StateUnavailable("no answer within 2000 ms");
    },
    settle: async (id, waitMs) => {
      if (id === silentSettle) throw new StateUnavailable("no answer within 2000 ms");
      if (id === heldSettle) await settleLet;
      return inner.settle(id, waitMs);
    },
  });
  return {
    store,
    inner,
    arm(fault: Fault, matches: (r: CommitRequest) => boolean = (r) => r.journal !== undefined || r.writes.length > 0) {
      armed = { fault, matches };
      faulted = new Promise<void>((resolve) => {
        fired = resolve;
      });
    },
    /** Resolves once the fault armed last has happened. */
    faulted: () => faulted,
    /** Lets the held settle answer (the commit lost on the way: not applied). */
    letSettle: () => letSettle(),
    /** The commits lost on the way, delivered now (a slow link that delivers at last). */
    deliverLate: () => Promise.all(lost.splice(0).map((r) => inner.commit(r))),
  };
}

async function replicas(store: StateStore, options: { maxSessions?: number } = {}): Promise<[Sandbox, Sandbox]> {
  // Settling gives up soon: a commit whose outcome stays unknown is answered without a long wait.
  const stateTimings = { tickMs: 60_000, noticeMs: 100, settleMs: 300 };
  const a = await createSandbox({ state: store, algorithm: "ES256", stateTimings, ...options });
  const b = await createSandbox({ state: store, algorithm: "ES256", stateTimings, ...options });
  opened.push(a, b);
  return [a, b];
}

async function journalOf(s: Sandbox, query = ""): Promise<string[]> {
  const { requests } = (await call(s, "GET", `/__sandbox/requests${query}`)).json;
  return requests.map((e: { id: string; path: string; status: number }) => `${e.id} ${e.path} ${e.status}`);
}

async function session(s: Sandbox) {
  const made = (await call(s, "POST", "/__sandbox/sessions", {})).json;
  const token = await call(s, "POST", `/s/${made.id}/api/v2/auth/token`, { api_key: made.merchant.api_key, api_secret: made.merchant.api_secret });
  return { id: made.id as string, merchant: made.merchant, bearer: { authorization: `Bearer ${token.json.access_token}` } };
}

describe("a commit whose answer was lost after it applied", () => {
  it("answers the token exchange 200, journaled once, its token good on the other replica", async () => {
    const broken = breakable();
    const [a, b] = await replicas(broken.store);
    broken.arm("answer lost");
    const exchanged = await call(a, "POST", "/api/v2/auth/token", CREDENTIALS);
    expect(exchanged.status).toBe(200);
    expect((await call(b, "GET", "/api/v2/payment/p_1", undefined, { authorization: `Bearer ${exchanged.json.access_token}` })).status).toBe(200);
    expect(await journalOf(a)).toEqual(["req_1 /api/v2/auth/token 200", "req_2 /api/v2/payment/p_1 200"]);
    expect(await journalOf(b)).toEqual(await journalOf(a));
  });

  it("answers revoke_token 200, and the token is refused on both replicas", async () => {
    const broken = breakable();
    const [a, b] = await replicas(broken.store);
    const s = await session(a);
    broken.arm("answer lost");
    expect((await call(a, "POST", `/__sandbox/sessions/${s.id}/actions`, { now: { revoke_token: "all" } })).status).toBe(200);
    for (const r of [a, b]) {
      const refused = await call(r, "GET", `/s/${s.id}/api/v2/payment/p_1`, undefined, s.bearer);
      expect([refused.status, refused.json.code]).toEqual([401, "token_revoked"]);
    }
  });

  it("answers 503 'not known' when settling finds nothing, and the replica answers from the store next, not from what it undid", async () => {
    const broken = breakable();
    const [a] = await replicas(broken.store);
    const s = await session(a);
    broken.arm("answer lost, settle silent");
    const revoke = await call(a, "POST", `/__sandbox/sessions/${s.id}/actions`, { now: { revoke_token: "all" } });
    expect([revoke.status, revoke.json.code, revoke.json.detail]).toEqual([
      503,
      "state_unavailable",
      "The sandbox's shared state stopped answering while this request's changes were being stored, and whether they were is not known. Read the state (the journal, the session) before you retry.",
    ]);
    // The store holds the revocation; the replica undid it in its objects, so it syncs before it answers again.
    const refused = await call(a, "GET", `/s/${s.id}/api/v2/payment/p_1`, undefined, s.bearer);
    expect([refused.status, refused.json.code]).toEqual([401, "token_revoked"]);
  });

  it("a commit answered while another's outcome was being settled does not carry the replica past the change it undid", async () => {
    const broken = breakable();
    const [a] = await replicas(broken.store);
    const s = await session(a);
    const other = await session(a);
    broken.arm("answer lost, settle silent", (r) => r.writes.length > 0);
    const revoking = call(a, "POST", `/__sandbox/sessions/${s.id}/actions`, { now: { revoke_token: "all" } });
    await broken.faulted();
    // While the revocation is being settled, another request's commit is answered, with the store
    // past the revocation's change (its own, so not sent back).
    expect((await call(a, "GET", `/s/${other.id}/api/v2/payment/p_1`, undefined, other.bearer)).status).toBe(200);
    expect((await revoking).status).toBe(503);
    // The replica undid the revocation; the store holds it: the next request is answered from the store.
    const refused = await call(a, "GET", `/s/${s.id}/api/v2/payment/p_1`, undefined, s.bearer);
    expect([refused.status, refused.json.code]).toEqual([401, "token_revoked"]);
  });

  it("a request run beside a change that is then undone is answered from the store, not from the undone change", async () => {
    const broken = breakable();
    const [a] = await replicas(broken.store);
    const s = await session(a);
    broken.arm("lost, settle held", (r) => r.writes.length > 0);
    const revoking = call(a, "POST", `/__sandbox/sessions/${s.id}/actions`, { now: { revoke_token: "all" } });
    await broken.faulted();
    // Runs while the revocation, held by its settle, is in this replica's objects only.
    const paying = call(a, "GET", `/s/${s.id}/api/v2/payment/p_1`, undefined, s.bearer);
    await new Promise((resolve) => setImmediate(resolve));
    broken.letSettle();
    expect((await revoking).status).toBe(503);
    const paid = await paying;
    expect(paid.status, JSON.stringify(paid.json)).toBe(200);
  });

  it("answers a session's DELETE 204, and the session is gone on both replicas", async () => {
    const broken = breakable();
    const [a, b] = await replicas(broken.store);
    const s = await session(a);
    broken.arm("answer lost");
    expect((await call(b, "DELETE", `/__sandbox/sessions/${s.id}`)).status).toBe(204);
    for (const r of [a, b]) expect((await call(r, "GET", `/__sandbox/sessions/${s.id}`)).status).toBe(404);
  });

  it("answers a reset 200, and every replica's journal is empty", async () => {
    const broken = breakable();
    const [a, b] = await replicas(broken.store);
    expect((await call(a, "POST", "/api/v2/auth/token", CREDENTIALS)).status).toBe(200);
    broken.arm("answer lost");
    expect((await call(b, "POST", "/__sandbox/reset", {})).status).toBe(200);
    expect(await broken.inner.journal()).toEqual([]);
    expect(await journalOf(a)).toEqual([]);
    expect(await journalOf(b)).toEqual([]);
  });
});

describe("a commit lost before it reached the store", () => {
  it("answers 503 with nothing changed anywhere, and the commit is refused when it arrives after all", async () => {
    const broken = breakable();
    const [a, b] = await replicas(broken.store);
    const s = await session(a);
    broken.arm("lost on the way");
    const path = `/__sandbox/sessions/${s.id}/actions`;
    expect(await call(a, "POST", path, { now: { revoke_token: "all" } })).toEqual({
      status: 503,
      headers: HEADERS,
      json: problem(503, "Service Unavailable", "state_unavailable", NOT_STORED, path, "temporarily_unavailable"),
    });
    const [late] = await broken.deliverLate();
    expect(late).toEqual({ ok: false, reason: "late" });
    for (const r of [a, b]) expect((await call(r, "GET", `/s/${s.id}/api/v2/payment/p_1`, undefined, s.bearer)).status).toBe(200);
  });

  it("answers a reset 503 and leaves every journal and session as it was", async () => {
    const broken = breakable();
    const [a, b] = await replicas(broken.store);
    expect((await call(a, "POST", "/api/v2/auth/token", CREDENTIALS)).status).toBe(200);
    const made = (await call(b, "POST", "/__sandbox/sessions", {})).json;
    expect((await call(a, "GET", `/__sandbox/sessions/${made.id}`)).status).toBe(200);
    broken.arm("lost on the way");
    expect(await call(a, "POST", "/__sandbox/reset", {})).toEqual({
      status: 503,
      headers: HEADERS,
      json: problem(503, "Service Unavailable", "state_unavailable", NOT_STORED, "/__sandbox/reset", "temporarily_unavailable"),
    });
    for (const r of [a, b]) expect(await journalOf(r)).toEqual(["req_1 /api/v2/auth/token 200"]);
    // The sessions the refused reset ended here are back, as stored.
    for (const r of [a, b]) expect((await call(r, "GET", `/__sandbox/sessions/${made.id}`)).status).toBe(200);
  });

  it("leaves a one-shot rule unspent: the next request on the same replica fires it", async () => {
    const broken = breakable();
    const [a] = await replicas(broken.store);
    const s = await session(a);
    const rule = { next: { endpoint: "payment", times: 1, then: { respond: { status: 418 } } } };
    expect((await call(a, "POST", `/__sandbox/sessions/${s.id}/actions`, rule)).status).toBe(200);
    broken.arm("lost on the way");
    expect((await call(a, "GET", `/s/${s.id}/api/v2/payment/p_1`, undefined, s.bearer)).status).toBe(503);
    const fired = await call(a, "GET", `/s/${s.id}/api/v2/payment/p_2`, undefined, s.bearer);
    expect([fired.status, fired.headers["x-sandbox-rule"]]).toEqual([418, "default/action-1"]);
    expect(await journalOf(a, `?session=${s.id}`)).toEqual([expect.stringMatching(/auth\/token 200$/), expect.stringMatching(/p_2 418$/)]);
  });
});

describe("a commit settled after a sync brought a later version of its part", () => {
  it("keeps the later version: the replica's next change of that part is not refused", async () => {
    const inner = new MemoryStore();
    let gate: Promise<void> | undefined;
    let settling = false;
    const broken = breakable(inner);
    const store = over(broken.store, {
      settle: async (id, waitMs) => {
        settling = true;
        await gate;
        return inner.settle(id, waitMs);
      },
    });
    const [a, b] = await replicas(store);
    const s = await session(a);
    let open!: () => void;
    gate = new Promise((resolve) => {
      open = resolve;
    });
    // A's clock move is applied, its answer lost; while A settles it, B moves the clock again and A syncs that.
    broken.arm("answer lost");
    // Frozen: the clocks compared below read the same, whatever time passes.
    const first = call(a, "POST", `/__sandbox/sessions/${s.id}/clock`, { freeze: true, advance: "1h" });
    while (!settling) await new Promise((resolve) => setImmediate(resolve));
    expect((await call(b, "POST", `/__sandbox/sessions/${s.id}/clock`, { freeze: true, advance: "1h" })).status).toBe(200);
    expect((await call(a, "GET", "/__sandbox/health")).status).toBe(200);
    open();
    expect((await first).status).toBe(200);
    gate = undefined;
    const third = await call(a, "POST", `/__sandbox/sessions/${s.id}/clock`, { freeze: true, advance: "1h" });
    expect(third.status).toBe(200);
    expect((await call(b, "GET", `/__sandbox/sessions/${s.id}/clock`)).json).toEqual(third.json);
  });
});

describe("a request that read what another replica changed before its commit", () => {
  it("runs again on the new state: a rule added meanwhile answers it", async () => {
    const inner = new MemoryStore();
    let hold: Promise<void> | undefined;
    let held = false;
    const store = over(inner, {
      commit: async (request) => {
        if (hold && request.journal?.includes("/api/v2/payment/held")) {
          held = true;
          await hold;
          hold = undefined;
        }
        return inner.commit(request);
      },
    });
    const [a, b] = await replicas(store);
    const s = await session(a);
    // A rule that does not match this call (another endpoint): its run reads the session's part and changes nothing.
    const other = { next: { endpoint: "cashout", times: 1, then: { respond: { status: 418 } } } };
    expect((await call(a, "POST", `/__sandbox/sessions/${s.id}/actions`, other)).status).toBe(200);
    let release!: () => void;
    hold = new Promise((resolve) => {
      release = resolve;
    });
    const answer = call(a, "GET", `/s/${s.id}/api/v2/payment/held`, undefined, s.bearer);
    while (!held) await new Promise((resolve) => setImmediate(resolve));
    const rule = { next: { endpoint: "payment", times: 1, then: { respond: { status: 418 } } } };
    expect((await call(b, "POST", `/__sandbox/sessions/${s.id}/actions`, rule)).status).toBe(200);
    release();
    const answered = await answer;
    expect([answered.status, answered.headers["x-sandbox-rule"]]).toEqual([418, "default/action-2"]);
    expect(await journalOf(b, `?session=${s.id}`)).toEqual([expect.stringMatching(/auth\/token 200$/), expect.stringMatching(/held 418$/)]);
  });

  it("is answered 503 once it lost the race 25 times in a row, with nothing stored", async () => {
    const inner = new MemoryStore();
    let tries = 0;
    let racing = false;
    const store = over(inner, {
      commit: (request) => {
        if (racing && request.writes.length > 0) {
          tries++;
          return Promise.resolve({ ok: false, reason: "conflict" });
        }
        return inner.commit(request);
      },
    });
    const [a] = await replicas(store);
    const s = await session(a);
    racing = true;
    const path = `/__sandbox/sessions/${s.id}/clock`;
    const answered = await call(a, "POST", path, { advance: "1h" });
    expect([answered.status, answered.json.code]).toEqual([503, "state_unavailable"]);
    expect(answered.json.detail).toBe(
      "This request lost the race for the state it changes 25 times in a row: other requests change the same session at the same time. Retry it.",
    );
    expect(tries).toBe(25);
    racing = false;
    const clock = (await call(a, "GET", path)).json;
    expect(Math.abs(Date.parse(clock.now) - Date.now())).toBeLessThan(60_000);
  });
});

describe("--max-sessions across replicas", () => {
  it("holds for the deployment: of 12 creations at once on two replicas, exactly 3 are made", async () => {
    const [a, b] = await replicas(new MemoryStore(), { maxSessions: 3 });
    const made = await Promise.all(Array.from({ length: 12 }, (_, i) => call(i % 2 ? a : b, "POST", "/__sandbox/sessions", {})));
    const statuses = made.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, ...Array(9).fill(429)]);
    // Refused by the replica's own count, or by the store's when replicas raced past it.
    const full = (detail: string) => problem(429, "Too Many Requests", "too_many_sessions", detail, "/__sandbox/sessions", "rate_limited");
    const bodies = [
      full("This sandbox already holds 3 sessions. DELETE /__sandbox/sessions/{id} when a test is done, or wait for idle sessions to be reaped."),
      full(
        "This sandbox already holds 3 sessions across its replicas. DELETE /__sandbox/sessions/{id} when a test is done, or wait for idle sessions to be reaped.",
      ),
    ];
    for (const refused of made.filter((r) => r.status === 429)) expect(bodies).toContainEqual(refused.json);
    expect((await call(a, "GET", "/__sandbox/sessions")).json.sessions).toHaveLength(3);
    expect((await call(b, "GET", "/__sandbox/sessions")).json.sessions).toHaveLength(3);
  });
});
