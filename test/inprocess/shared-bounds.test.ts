import { afterEach, describe, expect, it } from "vitest";
import { createSandbox, MemoryStore, type Sandbox } from "../../src/index.js";
import type { CommitRequest } from "../../src/core/state-store.js";
import { generateSigningKey } from "../../src/core/keys.js";
import { call } from "../support/in-process.js";
import { over } from "../support/state-stores.js";

/**
 * What a replica sends its store is bounded before it is sent: a client without credentials
 * cannot grow the shared state past the journal's bounds, however long its paths.
 */

const opened: Sandbox[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

/** A MemoryStore whose commits are kept, to see what each request sent. */
function recording(inner = new MemoryStore()) {
  const sent: CommitRequest[] = [];
  const store = over(inner, {
    commit: (request) => {
      sent.push(request);
      return inner.commit(request);
    },
  });
  return { store, sent, inner };
}

describe("what a control-plane write sends, beside many sessions", () => {
  it("writes only the parts it changed: the sandbox's for a clock move, the new session's for a creation, one session's for its action", async () => {
    const { store, sent } = recording();
    const a = await createSandbox({ state: store, algorithm: "ES256" });
    opened.push(a);
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push((await call(a, "POST", "/__sandbox/sessions", {})).json.id);
    const written = async (method: string, path: string, body: unknown) => {
      sent.length = 0;
      expect((await call(a, method, path, body)).status).toBeLessThan(300);
      return sent.flatMap((c) => c.writes.map((w) => w.name)).sort();
    };
    expect(await written("POST", "/__sandbox/clock", { advance: "1h" })).toEqual(["sandbox"]);
    const made = await written("POST", "/__sandbox/sessions", {});
    expect(made).toHaveLength(1);
    expect(made[0]).toMatch(/^s:ses_[0-9a-f]{16}$/);
    expect(await written("POST", `/__sandbox/sessions/${ids[3]}/clock`, { advance: "5m" })).toEqual([`s:${ids[3]}`]);
    expect(await written("DELETE", `/__sandbox/sessions/${ids[4]}`, undefined)).toEqual([`s:${ids[4]}`]);
    // A sandbox clock move is every session's clock move all the same.
    const clocks = await Promise.all(ids.slice(0, 3).map(async (id) => (await call(a, "GET", `/__sandbox/sessions/${id}/clock`)).json.now));
    for (const now of clocks) expect(Date.parse(now) - Date.now()).toBeGreaterThan(59 * 60_000);
  });

  it("resets more sessions than one commit may write one by one", async () => {
    const { store, sent, inner } = recording();
    const [a, b] = [
      await createSandbox({ state: store, algorithm: "ES256", maxSessions: 2100 }),
      await createSandbox({ state: store, algorithm: "ES256", maxSessions: 2100 }),
    ];
    opened.push(a, b);
    for (let i = 0; i < 2050; i++) expect((await call(i % 2 ? a : b, "POST", "/__sandbox/sessions", {})).status).toBe(201);
    sent.length = 0;
    expect((await call(a, "POST", "/__sandbox/reset", {})).status).toBe(200);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.writes.length).toBeLessThan(5);
    expect((await inner.sync("")).parts.map((p) => p.name)).toEqual(["ledger", "sandbox"]);
    for (const r of [a, b]) expect((await call(r, "GET", "/__sandbox/sessions")).json.sessions).toEqual([]);
    expect((await call(b, "POST", "/__sandbox/sessions", {})).status).toBe(201);
  }, 60_000);
});

describe("slow work a replica does not do", () => {
  it("generates no key to adopt another replica's session of a key-rotating scenario", async () => {
    const generated = { a: 0, b: 0 };
    const source = (who: "a" | "b") => (alg: "ES256" | "RS256" | "HS256") => {
      generated[who]++;
      return generateSigningKey(alg, { extractable: true });
    };
    const store = new MemoryStore();
    const a = await createSandbox({ state: store, algorithm: "ES256", keySource: source("a"), scenarios: ["signing-key-rotation"] });
    const b = await createSandbox({ state: store, algorithm: "ES256", keySource: source("b"), scenarios: ["signing-key-rotation"] });
    opened.push(a, b);
    const before = { ...generated };
    const made = await call(a, "POST", "/__sandbox/sessions", { scenario: "signing-key-rotation" });
    expect(made.status).toBe(201);
    expect(generated.a).toBe(before.a + 1);
    const shown = await call(b, "GET", `/__sandbox/sessions/${made.json.id}`);
    expect(shown.status).toBe(200);
    expect(generated.b).toBe(before.b);
    const { api_key, api_secret } = made.json.merchant;
    const token = await call(b, "POST", `/s/${made.json.id}/api/v2/auth/token`, { api_key, api_secret });
    expect(
      (await call(a, "GET", `/s/${made.json.id}/api/v2/payment/p_1`, undefined, { authorization: `Bearer ${token.json.access_token}` })).status,
    ).toBe(200);
  });
});

describe("journal records on their way to the store", () => {
  it("carry paths and queries cut to the journal's cap, so a flood of 15 KB paths stores at most journalSize small records", async () => {
    const { store, sent, inner } = recording(new MemoryStore({ journalSize: 20 }));
    const a = await createSandbox({ state: store, algorithm: "ES256", journalSize: 20 });
    opened.push(a);
    const long = `/api/v2/payment/${"p".repeat(15_000)}`;
    for (let i = 0; i < 40; i++) expect((await call(a, "GET", `${long}?q=${"v".repeat(15_000)}`)).status).toBe(401);
    const records = sent.flatMap((c) => (c.journal === undefined ? [] : [JSON.parse(c.journal) as { path: string; query: string }]));
    expect(records).toHaveLength(40);
    for (const record of records) {
      expect(record.path).toBe(`${long.slice(0, 1024)}…(${long.length - 1024} more chars)`);
      expect(record.query.length).toBeLessThanOrEqual(1024 + "…(99999 more chars)".length);
    }
    const kept = await inner.journal();
    expect(kept).toHaveLength(20);
    expect(kept.reduce((total, e) => total + e.json.length, 0)).toBeLessThan(20 * 3_000);
  });
});
