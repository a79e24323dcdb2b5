import { afterEach, describe, expect, it } from "vitest";
import { createSandbox, MemoryStore, type Sandbox } from "../../src/index.js";
import { StateUnavailable } from "../../src/core/errors.js";
import type { CommitRequest } from "../../src/core/state-store.js";
import { call } from "../support/in-process.js";
import { following, over } from "../support/state-stores.js";

/**
 * A randomized history over three replicas in this process on one store, with faults injected
 * into its commits (an answer lost after applying, a commit lost on the way and delivered late, a
 * storm of conflicts, the store emptied), checked against what a single sandbox would do: one-shot
 * and counted rules answer exactly as often as scripted, a revoked token is never accepted after
 * the revocation was answered, every answered request is journaled once with the status its client
 * saw (none refused for the store is), and no journal id repeats. Seeded and bounded: a seed that
 * ever fails is added to SEEDS as a regression case.
 */

/**
 * Seeds run every time; a failing seed found by `HISTORY_SEEDS=…` stays here. 1234 fired a counted
 * rule a fourth time after two empty restarts in a row (reseeds compared by one epoch only); 113,
 * 136, 142, 143 and 160 accepted a revoked token, fired a one-shot rule twice or split the journals
 * while a state written back was answered from before the replica that saw more offered its own.
 * 552 fired a counted rule a fourth time: a replica's journal-only commit had raised its position
 * past changes of others it never applied, so its older state won a reseed.
 */
const SEEDS = [1, 2, 3, 7, 42, 1234, 113, 136, 142, 143, 160, 552];
/** Operations per seed, in batches run at once. */
const OPERATIONS = 90;
const BATCH = 6;
/** Short ticks, so replicas notice an emptied store within the time they get to offer their state. */
const TIMINGS = { tickMs: 40, noticeMs: 150 };

const opened: Sandbox[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

/** mulberry32: a small seeded generator, the same sequence for the same seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Fault = "answer lost" | "lost on the way" | "conflict storm" | "empty restart";

/** One store behind a link that breaks commits as told; `empty()` replaces it with an empty one. */
function faultyStore() {
  let inner = new MemoryStore();
  const armed: Fault[] = [];
  let storm = 0;
  const late: Array<{ request: CommitRequest; store: MemoryStore }> = [];
  const counts: Record<Fault, number> = { "answer lost": 0, "lost on the way": 0, "conflict storm": 0, "empty restart": 0 };
  // Every operation goes to the store of the moment: `empty()` replaces it.
  const store = over(
    following(() => inner),
    {
      commit: async (request) => {
        if (storm > 0) {
          storm--;
          return { ok: false, reason: "conflict" };
        }
        const fault = request.journal !== undefined || request.writes.length > 0 ? armed.shift() : undefined;
        if (fault === "answer lost") {
          await inner.commit(request);
          throw new StateUnavailable("no answer within 2000 ms");
        }
        if (fault === "lost on the way") {
          late.push({ request, store: inner });
          throw new StateUnavailable("no answer within 2000 ms");
        }
        return inner.commit(request);
      },
    },
  );
  return {
    store,
    counts,
    arm(fault: Fault) {
      counts[fault]++;
      if (fault === "conflict storm") storm += 8;
      else if (fault === "empty restart") inner = new MemoryStore();
      else armed.push(fault);
    },
    /** Commits lost on the way reach their store at last: each must be refused. */
    async deliverLate() {
      return Promise.all(late.splice(0).map(({ request, store: s }) => s.commit(request)));
    },
  };
}

interface Seen {
  path: string;
  status: number;
  code: string | undefined;
  rule: string | undefined;
  token: "old" | "new" | undefined;
  startedAfterRevoke: boolean;
}

async function history(seed: number, faults: readonly Fault[]) {
  const next = random(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const link = faultyStore();
  const replicas: Sandbox[] = [];
  for (let i = 0; i < 3; i++)
    replicas.push(await createSandbox({ state: link.store, algorithm: "ES256", frozenAt: "2030-01-01T00:00:00Z", stateTimings: TIMINGS }));
  opened.push(...replicas);
  const [a] = replicas;
  const session = (await call(a!, "POST", "/__sandbox/sessions", {})).json;
  const { api_key, api_secret } = session.merchant;
  const base = `/s/${session.id}`;
  const tokenOf = async (r: Sandbox) => {
    for (;;) {
      const answer = await call(r, "POST", `${base}/api/v2/auth/token`, { api_key, api_secret });
      if (answer.status === 200) return answer.json.access_token as string;
    }
  };
  const oldToken = await tokenOf(a!);
  const act = async (body: unknown) => {
    for (;;) if ((await call(pick(replicas), "POST", `/__sandbox/sessions/${session.id}/actions`, body)).status === 200) return;
  };
  await act({ next: { endpoint: "payment", times: 1, then: { respond: { status: 418 } } } });
  await act({ next: { endpoint: "cashout", times: 3, then: { respond: { status: 429 } } } });
  const seen: Seen[] = [];
  let revokedAt: number | undefined;
  let newToken: string | undefined;
  let n = 0;
  const operation = async (): Promise<void> => {
    const roll = next();
    const replica = pick(replicas);
    if (roll < 0.1 && faults.length > 0) {
      link.arm(pick(faults));
      return;
    }
    if (roll < 0.15 && revokedAt === undefined && n > OPERATIONS / 3) {
      const revoke = await call(replica, "POST", `/__sandbox/sessions/${session.id}/actions`, { now: { revoke_token: "all" } });
      if (revoke.status === 200) {
        revokedAt = seen.length;
        newToken = await tokenOf(replica);
      }
      return;
    }
    const i = n++;
    const group = roll < 0.4 ? "cashout" : "payment";
    const path = `${base}/api/v2/${group}/${group === "payment" ? "p" : "c"}_${i}`;
    const useNew = newToken !== undefined && next() < 0.5;
    const startedAfterRevoke = revokedAt !== undefined;
    const answer = await call(replica, group === "payment" ? "GET" : "POST", path, group === "payment" ? undefined : { amount: 1 }, {
      authorization: `Bearer ${useNew ? newToken : oldToken}`,
    });
    seen.push({
      path: path.slice(base.length),
      status: answer.status,
      code: answer.json?.code,
      rule: answer.headers["x-sandbox-rule"],
      token: useNew ? "new" : "old",
      startedAfterRevoke,
    });
  };
  for (let done = 0; done < OPERATIONS; done += BATCH) await Promise.all(Array.from({ length: BATCH }, () => operation()));
  const late = await link.deliverLate();
  return { replicas, seen, late, counts: link.counts, session: session.id as string, restarted: link.counts["empty restart"] > 0 };
}

describe("a randomized history over three replicas with store faults", () => {
  const seeds = process.env.HISTORY_SEEDS ? process.env.HISTORY_SEEDS.split(",").map(Number) : SEEDS;
  const withRestart: Fault[] = ["answer lost", "lost on the way", "conflict storm", "empty restart"];
  const withoutRestart: Fault[] = ["answer lost", "lost on the way", "conflict storm"];

  for (const seed of seeds) {
    for (const faults of [withoutRestart, withRestart]) {
      const restarts = faults.includes("empty restart");
      it(`seed ${seed}${restarts ? ", with empty restarts" : ""}: rules, revocation, journal and ids hold`, async () => {
        const { replicas, seen, late, session } = await history(seed, faults);
        // A commit lost on the way is refused when it arrives: it was settled as not applied.
        for (const result of late) expect(result).toEqual({ ok: false, reason: "late" });
        const answered = seen.filter((s) => s.code !== "state_unavailable");
        // One-shot and counted rules: exactly as scripted among the answers clients got (with
        // empty restarts, at most: the state a replica writes back may be a request behind).
        const oneShot = answered.filter((s) => s.rule === "default/action-1");
        const counted = answered.filter((s) => s.rule === "default/action-2");
        expect(oneShot.every((s) => s.status === 418)).toBe(true);
        expect(counted.every((s) => s.status === 429)).toBe(true);
        if (restarts) {
          expect(oneShot.length).toBeLessThanOrEqual(1);
          expect(counted.length).toBeLessThanOrEqual(3);
        } else {
          expect(oneShot).toHaveLength(1);
          expect(counted).toHaveLength(3);
        }
        // The revoked token is never accepted by a request started after the revocation's answer.
        const accepted = answered.filter((s) => s.token === "old" && s.startedAfterRevoke && s.status === 200 && s.path.includes("/payment/"));
        expect(accepted).toEqual([]);
        // Every replica lists one journal; ids never repeat.
        const journals = [];
        for (const r of replicas) journals.push((await call(r, "GET", `/__sandbox/requests?session=${session}`)).json.requests);
        for (const j of journals) expect(j).toEqual(journals[0]);
        const entries = (journals[0] as Array<{ id: string; path: string; status: number }>).filter((e) => /\/(p|c)_\d+$/.test(e.path));
        const ids = journals[0].map((e: { id: string }) => e.id);
        expect(new Set(ids).size).toBe(ids.length);
        // Every answered request once, with the status its client saw; none refused for the store.
        const byPath = new Map(entries.map((e) => [e.path, e]));
        expect(new Set(entries.map((e) => e.path)).size).toBe(entries.length);
        for (const s of seen.filter((x) => x.code === "state_unavailable")) expect(byPath.has(s.path), s.path).toBe(false);
        for (const s of answered) {
          const entry = byPath.get(s.path);
          if (restarts && entry === undefined) continue;
          expect(entry?.status, s.path).toBe(s.status);
        }
        if (!restarts) expect(entries).toHaveLength(answered.length);
      }, 60_000);
    }
  }
});
