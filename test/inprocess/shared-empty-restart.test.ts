import { afterEach, describe, expect, it } from "vitest";
import { createSandbox, MemoryStore, type Sandbox, type StateStore } from "../../src/index.js";
import { call } from "../support/in-process.js";
import { following, unreachable } from "../support/state-stores.js";

/**
 * A store that loses its data (a Redis restarted without persistence) never brings back state from
 * before a change: the replica that saw the most of the lost epoch writes its state back, and a
 * replica that was behind, or started since, adopts it. In process: replicas on one MemoryStore
 * that the test replaces with an empty one, each replica reaching it through a link the test can cut.
 */

const opened: Sandbox[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

/** One store the test can empty, and a link to it per replica that the test can cut. */
function restartable() {
  let inner = new MemoryStore();
  const cutOff = unreachable("the test cut this replica's link");
  const link = (): StateStore & { cut: boolean } => {
    let cut = false;
    const store = following(() => (cut ? cutOff : inner));
    // An accessor, not a copy: the link reads `cut` at each call.
    return Object.defineProperty(store, "cut", {
      get: () => cut,
      set: (value: boolean) => {
        cut = value;
      },
    }) as StateStore & { cut: boolean };
  };
  return {
    link,
    empty() {
      inner = new MemoryStore();
    },
  };
}

async function replica(store: StateStore): Promise<Sandbox> {
  const s = await createSandbox({
    state: store,
    algorithm: "ES256",
    frozenAt: "2030-01-01T00:00:00Z",
    stateTimings: { tickMs: 1000, noticeMs: 100 },
  });
  opened.push(s);
  return s;
}

/** Replicas A and B on links the test can cut, a session made on A, and a token of it B issued (B synced since). */
async function twoReplicasAndASession() {
  const store = restartable();
  const [linkA, linkB] = [store.link(), store.link()];
  const a = await replica(linkA);
  const b = await replica(linkB);
  const s = (await call(a, "POST", "/__sandbox/sessions", {})).json;
  const { api_key, api_secret } = s.merchant;
  const token = (await call(b, "POST", `/s/${s.id}/api/v2/auth/token`, { api_key, api_secret })).json.access_token;
  expect((await call(b, "GET", "/__sandbox/health")).status).toBe(200);
  return { store, linkA, linkB, a, b, s, bearer: { authorization: `Bearer ${token}` } };
}

describe("a store emptied under running replicas", () => {
  it("takes back the state of the replica that saw most, though one that was behind wrote first", async () => {
    const { store, linkA, linkB, a, b, s, bearer } = await twoReplicasAndASession();
    // B is cut off: it never hears of the revocation A makes next.
    linkB.cut = true;
    expect((await call(a, "POST", `/__sandbox/sessions/${s.id}/actions`, { now: { revoke_token: "all" } })).status).toBe(200);
    expect((await call(a, "POST", "/__sandbox/clock", { advance: "10m" })).status).toBe(200);
    // A is cut off too while the store is emptied (its timer's sync must not come first).
    linkA.cut = true;
    store.empty();
    // B comes back first and writes what it holds: the state from before the revocation.
    linkB.cut = false;
    expect((await call(b, "GET", "/__sandbox/health")).status).toBe(200);
    expect((await call(b, "GET", `/s/${s.id}/api/v2/payment/p_1`, undefined, bearer)).status).toBe(200);
    // A saw more of the lost epoch: its state replaces B's, and B adopts it.
    linkA.cut = false;
    expect((await call(a, "GET", "/__sandbox/health")).status).toBe(200);
    expect((await call(b, "GET", "/__sandbox/health")).status).toBe(200);
    for (const r of [a, b]) {
      const refused = await call(r, "GET", `/s/${s.id}/api/v2/payment/p_2`, undefined, bearer);
      expect([refused.status, refused.json.code]).toEqual([401, "token_revoked"]);
      expect((await call(r, "GET", "/__sandbox/clock")).json.now).toBe("2030-01-01T00:10:00.000Z");
    }
    // Both list one journal, the requests from before the restart first, numbers rising and never
    // given twice. (B's request on its short-lived state is kept when A's feed brought it before A
    // wrote its state back: A catches up first, yet under load the race is not closed.)
    const journal = (await call(a, "GET", `/__sandbox/requests?session=${s.id}`)).json.requests;
    expect((await call(b, "GET", `/__sandbox/requests?session=${s.id}`)).json.requests).toEqual(journal);
    const lines = journal.map((e: { id: string; path: string; status: number }) => `${e.id} ${e.path} ${e.status}`);
    expect(lines[0]).toBe("req_1 /api/v2/auth/token 200");
    expect(lines.filter((l: string) => l.endsWith("/api/v2/payment/p_2 401"))).toHaveLength(2);
    const ids: number[] = journal.map((e: { id: string }) => Number(e.id.slice(4)));
    expect(ids).toEqual([...new Set(ids)].sort((x, y) => x - y));
  });

  it("answers the first merchant request after the store was emptied from the state written back, with no health check before", async () => {
    const { store, a, s, bearer } = await twoReplicasAndASession();
    expect((await call(a, "POST", `/__sandbox/sessions/${s.id}/actions`, { now: { revoke_token: "all" } })).status).toBe(200);
    store.empty();
    // Its commit is of the lost epoch (a conflict): the replica syncs, writes its state back and runs it again.
    const refused = await call(a, "GET", `/s/${s.id}/api/v2/payment/p_1`, undefined, bearer);
    expect([refused.status, refused.json.code]).toEqual([401, "token_revoked"]);
    const fresh = (await call(a, "POST", `/s/${s.id}/api/v2/auth/token`, { api_key: s.merchant.api_key, api_secret: s.merchant.api_secret })).json;
    expect((await call(a, "GET", `/s/${s.id}/api/v2/payment/p_2`, undefined, { authorization: `Bearer ${fresh.access_token}` })).status).toBe(200);
  });

  it("keeps the state of the replica that saw most when one that was behind comes back after it", async () => {
    const { store, linkB, a, b, s, bearer } = await twoReplicasAndASession();
    linkB.cut = true;
    expect((await call(a, "POST", `/__sandbox/sessions/${s.id}/actions`, { now: { revoke_token: "all" } })).status).toBe(200);
    store.empty();
    expect((await call(a, "GET", "/__sandbox/health")).status).toBe(200);
    linkB.cut = false;
    expect((await call(b, "GET", "/__sandbox/health")).status).toBe(200);
    const refused = await call(b, "GET", `/s/${s.id}/api/v2/payment/p_1`, undefined, bearer);
    expect([refused.status, refused.json.code]).toEqual([401, "token_revoked"]);
  });

  it("gives way to the running replicas when a replica started after the restart wrote its fresh state first", async () => {
    const store = restartable();
    const linkA = store.link();
    const a = await replica(linkA);
    const rule = { next: { endpoint: "token", times: 1, then: { respond: { status: 503 } } } };
    const s = (await call(a, "POST", "/__sandbox/sessions", {})).json;
    expect((await call(a, "POST", `/__sandbox/sessions/${s.id}/actions`, rule)).status).toBe(200);
    // A is cut off while the store is emptied and the late replica starts (its timer's sync must not come first).
    linkA.cut = true;
    store.empty();
    const late = await replica(store.link());
    expect((await call(late, "GET", `/__sandbox/sessions/${s.id}`)).status).toBe(404);
    linkA.cut = false;
    expect((await call(a, "GET", "/__sandbox/health")).status).toBe(200);
    expect((await call(late, "GET", "/__sandbox/health")).status).toBe(200);
    const { api_key, api_secret } = s.merchant;
    const answers = [
      await call(late, "POST", `/s/${s.id}/api/v2/auth/token`, { api_key, api_secret }),
      await call(a, "POST", `/s/${s.id}/api/v2/auth/token`, { api_key, api_secret }),
    ];
    expect(answers.map((r) => r.status)).toEqual([503, 200]);
    expect((await call(late, "GET", "/.well-known/jwks.json")).json).toEqual((await call(a, "GET", "/.well-known/jwks.json")).json);
  });
});
