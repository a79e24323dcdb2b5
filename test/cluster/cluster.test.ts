import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliProcess, startCliServer } from "../support/cli.js";
import { type EventStream, openEventStream } from "../support/event-stream.js";
import { freePort } from "../support/free-port.js";
import { HAPROXY, type RunningHaproxy, SERVED_BY, startHaproxy } from "../support/haproxy.js";
import { REDIS_SERVER, type RedisServer as RunningRedis, startRedisServer } from "../support/redis-server.js";
import { problem } from "../support/server.js";
import { needsProgram } from "../support/system-program.js";
import { startSlowLink } from "../support/slow-link.js";
import { LUA_SCRIPTS } from "../../src/store/lua/scripts.generated.js";

/**
 * The shared deployment of docs/deployment.md, for real: a redis-server, three replicas of the CLI
 * sharing it (`--state`), and haproxy in front, round-robin with no stickiness, health-checked on
 * /__sandbox/health (examples/cluster/ in miniature). Each process is started here and stopped by
 * its PID. The workload goes through the balancer, so consecutive requests of one session land on
 * different replicas; the checks then ask each replica directly.
 */

const REPLICAS = 3;

interface Replica {
  name: string;
  port: number;
  url: string;
  cli: CliProcess;
}

/** What a client got: the request as the journal shows it (path under the base URL) and its status. */
interface Seen {
  line: string;
  status: number;
  rule: string | null;
}

interface Answer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: a JSON answer, asserted member by member
  json: any;
  servedBy: string | null;
}

describe("three replicas behind haproxy, sharing one redis-server", () => {
  const haveRedis = needsProgram(REDIS_SERVER);
  const haveHaproxy = needsProgram(HAPROXY);
  let redis: RunningRedis;
  let haproxy: RunningHaproxy;
  const replicas: Replica[] = [];
  /** Per session: every request a sandbox answered (haproxy's own 502/503 are not the sandbox's). */
  const seen = new Map<string, Seen[]>();
  /** Requests no sandbox answered (cut by a replica's death): journaled or not, never twice. */
  const cut = new Set<string>();

  beforeAll(async () => {
    if (!haveRedis || !haveHaproxy) return;
    redis = await startRedisServer();
    const ports = await freePorts(REPLICAS);
    for (let i = 0; i < REPLICAS; i++) replicas.push(await startReplica(`r${i + 1}`, ports[i]!));
    haproxy = await startHaproxy({ backends: replicas.map((r) => ({ name: r.name, port: r.port })) });
    await allUp();
  }, 60_000);

  afterAll(async () => {
    redis?.thaw?.();
    for (const r of replicas) await stopReplica(r);
    await haproxy?.stop();
    await redis?.stop();
  }, 30_000);

  async function startReplica(name: string, port: number): Promise<Replica> {
    const cli = await startCliServer(["--port", String(port), "--state", redis.url, "--log-format", "off"]);
    return { name, port, url: cli.url, cli };
  }

  async function stopReplica(r: Replica): Promise<void> {
    if (r.cli.child.exitCode !== null || r.cli.child.signalCode !== null) return;
    process.kill(r.cli.child.pid!, "SIGTERM");
    await r.cli.exited;
  }

  function allUp(): Promise<unknown> {
    return haproxy.untilStates("every replica up", (s) => replicas.every((r) => s[r.name] === "UP"), 20_000);
  }

  /** A request through the balancer (or to `to`, a replica, directly), recorded under `session`. */
  async function send(session: string | undefined, path: string, init: RequestInit = {}, to?: string): Promise<Answer> {
    const res = await fetch(`${to ?? haproxy.url}${path}`, init).catch(() => undefined);
    if (res === undefined) {
      // The connection was cut (a replica killed mid-request): no answer, maybe journaled.
      if (session !== undefined) cut.add(`${init.method ?? "GET"} ${path.replace(`/s/${session}`, "").split("?")[0]}`);
      return { status: 0, headers: new Headers(), json: undefined, servedBy: null };
    }
    const text = await res.text();
    const answer: Answer = { status: res.status, headers: res.headers, json: parse(text), servedBy: res.headers.get(SERVED_BY) };
    const fromSandbox = to !== undefined || answer.servedBy !== null;
    if (session !== undefined && !fromSandbox) cut.add(`${init.method ?? "GET"} ${path.replace(`/s/${session}`, "").split("?")[0]}`);
    if (session !== undefined && fromSandbox && !path.startsWith("/__sandbox/")) {
      const under = path.replace(`/s/${session}`, "");
      const list = seen.get(session) ?? [];
      list.push({ line: `${init.method ?? "GET"} ${under.split("?")[0]}`, status: res.status, rule: res.headers.get("x-sandbox-rule") });
      seen.set(session, list);
    }
    return answer;
  }

  async function newSession(
    scenario?: string,
  ): Promise<{ id: string; key: string; secret: string; login: { email: string; password: string }; madeBy: string }> {
    const r = await send(undefined, "/__sandbox/sessions", json(scenario ? { scenario } : {}));
    expect(r.status, JSON.stringify(r.json)).toBe(201);
    const m = r.json.merchant;
    return { id: r.json.id, key: m.api_key, secret: m.api_secret, login: m.login, madeBy: r.servedBy! };
  }

  async function token(session: { id: string; key: string; secret: string }, to?: string): Promise<string> {
    const r = await send(session.id, `/s/${session.id}/api/v2/auth/token`, json({ api_key: session.key, api_secret: session.secret }), to);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    return r.json.access_token as string;
  }

  function bearer(t: string): RequestInit {
    return { headers: { authorization: `Bearer ${t}` } };
  }

  /** The journal of a session as one replica lists it: `METHOD path` and status, oldest first. */
  async function journalOn(replica: Replica, session: string): Promise<Array<{ id: string; line: string; status: number; rules?: string[] }>> {
    const r = await send(undefined, `/__sandbox/requests?session=${session}`, {}, replica.url);
    expect(r.status).toBe(200);
    return r.json.requests.map((e: { id: string; method: string; path: string; status: number; rules?: string[] }) => ({
      id: e.id,
      line: `${e.method} ${e.path}`,
      status: e.status,
      ...(e.rules && { rules: e.rules }),
    }));
  }

  /** Every answered request of the session is in every replica's journal exactly once. */
  async function expectJournalExactlyOnce(session: string): Promise<void> {
    const clientSaw = (seen.get(session) ?? []).map((s) => `${s.line} ${s.status}`).sort();
    const lists = [];
    for (const r of replicas) lists.push((await journalOn(r, session)).map((e) => `${e.line} ${e.status}`));
    // Every replica lists the same journal.
    for (const list of lists) expect(list).toEqual(lists[0]);
    // A request cut before its answer may be journaled (its commit was stored), once at most;
    // every answered one is, exactly once.
    const answered = new Set(clientSaw);
    const extra = lists[0]!.filter((line) => !answered.has(line));
    for (const line of extra) expect(cut.has(line.replace(/ \d+$/, "")), `${line} is journaled, yet neither answered nor cut`).toBe(true);
    expect(new Set(extra).size).toBe(extra.length);
    expect(lists[0]!.filter((line) => answered.has(line)).sort()).toEqual(clientSaw);
  }

  it("serves one session from every replica as one: journal, report, revocation, clock, keys, a replica killed", async () => {
    const s = await newSession();
    const watcher = replicas.find((r) => r.name !== s.madeBy)!;
    const stream = await openEventStream(`${watcher.url}/__sandbox/events?session=${s.id}`);
    expect(stream.status).toBe(200);
    try {
      const tokens = [await token(s), await token(s), await token(s)];
      const servers = new Set<string>();
      // A health check failed on a busy machine takes a replica out for a moment: a round that
      // missed one waits until haproxy counts every replica up again (three rounds at most).
      for (let round = 0; round < 3 && servers.size < REPLICAS; round++) {
        await allUp();
        for (let i = 0; i < 9; i++) {
          const r = await send(s.id, `/s/${s.id}/api/v2/payment/p_${round}_${i}`, bearer(tokens[i % 3]!));
          expect(r.status, JSON.stringify(r.json)).toBe(200);
          servers.add(r.servedBy!);
        }
      }
      // Round-robin: the session's calls were answered by every replica.
      expect([...servers].sort(), `haproxy said: ${haproxy.output()}`).toEqual(replicas.map((r) => r.name).sort());
      const login = await send(s.id, `/s/${s.id}/api/login_check`, json({ username: s.login.email, password: s.login.password }));
      expect(login.status, JSON.stringify(login.json)).toBe(200);
      expect(login.headers.get("deprecation")).not.toBeNull();

      // The replica that made the session dies mid-run; the others go on with it.
      // Killed with a burst of the session's calls in flight: some are answered (each must be in
      // the journal), some are cut (haproxy's 502, or a reset: each may or may not be).
      // A rule holds each of the burst's answers 2 s after its commit, so the maker dies with its
      // share committed and unanswered.
      const maker = replicas.find((r) => r.name === s.madeBy)!;
      const held = await send(
        undefined,
        `/__sandbox/sessions/${s.id}/actions`,
        json({ next: { endpoint: "payment", times: 8, then: { delay: "2s" } } }),
      );
      expect(held.status, JSON.stringify(held.json)).toBe(200);
      const burst = Array.from({ length: 8 }, (_, i) => send(s.id, `/s/${s.id}/api/v2/payment/burst_${i}`, bearer(tokens[1]!)));
      const other = replicas.find((r) => r !== maker)!;
      await until("the burst journaled", async () => (await journalOn(other, s.id)).filter((e) => e.line.includes("/burst_")).length === 8);
      process.kill(maker.cli.child.pid!, "SIGKILL");
      const outcomes = await Promise.all(burst);
      for (const answer of outcomes) if (answer.servedBy !== null) expect(answer.status).toBe(200);
      // Round-robin gave the maker its share: those were cut.
      expect(outcomes.filter((a) => a.servedBy === null).length).toBeGreaterThan(0);
      await maker.cli.exited;
      await haproxy.untilStates("the killed replica down", (st) => st[maker.name] === "DOWN", 20_000);
      for (let i = 9; i < 12; i++) {
        const r = await send(s.id, `/s/${s.id}/api/v2/payment/p_${i}`, bearer(tokens[0]!));
        expect(r.status, JSON.stringify(r.json)).toBe(200);
      }

      // A revocation made through one replica holds on the others at once.
      const alive = replicas.filter((r) => r !== maker);
      const revoke = await send(undefined, `/__sandbox/sessions/${s.id}/actions`, json({ now: { revoke_token: "all" } }), alive[0]!.url);
      expect(revoke.status, JSON.stringify(revoke.json)).toBe(200);
      for (const r of alive) {
        const refused = await send(s.id, `/s/${s.id}/api/v2/payment/after-revoke-${r.name}`, bearer(tokens[1]!), r.url);
        expect(refused.status).toBe(401);
        expect(refused.json.code).toBe("token_revoked");
      }

      // The killed replica comes back on its port and knows everything the others did.
      const restarted = await startReplica(maker.name, maker.port);
      replicas[replicas.indexOf(maker)] = restarted;
      await allUp();
      const refusedThere = await send(s.id, `/s/${s.id}/api/v2/payment/after-restart`, bearer(tokens[2]!), restarted.url);
      expect([refusedThere.status, refusedThere.json.code]).toEqual([401, "token_revoked"]);

      // A clock move through one replica is every replica's clock.
      const moved = await send(undefined, `/__sandbox/sessions/${s.id}/clock`, json({ freeze: true, advance: "10m" }), alive[1]!.url);
      expect(moved.status, JSON.stringify(moved.json)).toBe(200);
      for (const r of replicas) {
        const clock = await send(undefined, `/__sandbox/sessions/${s.id}/clock`, {}, r.url);
        expect(clock.json).toEqual(moved.json);
      }

      // A key rotation through one replica: the same JWKS everywhere, and its tokens verify everywhere.
      const rotated = await send(undefined, `/__sandbox/sessions/${s.id}/actions`, json({ now: { rotate_signing_key: true } }), replicas[0]!.url);
      expect(rotated.status, JSON.stringify(rotated.json)).toBe(200);
      const jwks = [];
      for (const r of replicas) jwks.push((await send(s.id, `/s/${s.id}/.well-known/jwks.json`, {}, r.url)).json);
      expect(jwks[1]).toEqual(jwks[0]);
      expect(jwks[2]).toEqual(jwks[0]);
      const fresh = await token(s, replicas[0]!.url);
      for (const r of replicas) {
        const ok = await send(s.id, `/s/${s.id}/api/v2/payment/rotated-${r.name}`, bearer(fresh), r.url);
        expect(ok.status, JSON.stringify(ok.json)).toBe(200);
      }

      await expectJournalExactlyOnce(s.id);
      // The report is a function of the shared journal: the same from every replica.
      const reports = [];
      for (const r of replicas) reports.push((await send(undefined, `/__sandbox/sessions/${s.id}/report`, {}, r.url)).json);
      expect(reports[1]).toEqual(reports[0]);
      expect(reports[2]).toEqual(reports[0]);
      // The page on one replica saw every request, whichever replica answered it (the watcher
      // was not killed: it was not the maker).
      const journal = await journalOn(watcher, s.id);
      const requests = await requestEvents(stream, journal.length);
      expect(requests).toEqual(journal.map((e) => e.id));
      // A page that reconnects to another replica with Last-Event-ID gets the rest, no gap.
      const elsewhere = replicas.find((r) => r !== watcher)!;
      const resumed = await openEventStream(`${elsewhere.url}/__sandbox/events?session=${s.id}`, { "last-event-id": journal[4]!.id });
      try {
        expect(await requestEvents(resumed, journal.length - 5)).toEqual(journal.slice(5).map((e) => e.id));
      } finally {
        resumed.close();
      }
    } finally {
      stream.close();
    }
  }, 90_000);

  it("fails the scripted 4th call exactly once, whichever replicas answer the calls", async () => {
    const s = await newSession("token-expires-after-calls");
    const t = await token(s);
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await send(s.id, `/s/${s.id}/api/v2/payment/c_${i}`, bearer(t))).status);
    expect(statuses).toEqual([200, 200, 200, 401, 401]);
    const fired = (await journalOn(replicas[0]!, s.id)).filter((e) => e.rules?.includes("token-expires-after-calls/expire-on-fourth-call"));
    expect(fired.map((e) => e.line)).toEqual(["GET /api/v2/payment/c_3"]);
    await expectJournalExactlyOnce(s.id);
  }, 60_000);

  it("fires a one-shot rule exactly once among 30 concurrent calls spread over the replicas", async () => {
    await allUp();
    const s = await newSession();
    const t = await token(s);
    const next = await send(
      undefined,
      `/__sandbox/sessions/${s.id}/actions`,
      json({ next: { endpoint: "payment", times: 1, then: { respond: { status: 503, retry_after: "30s" } } } }),
    );
    expect(next.status, JSON.stringify(next.json)).toBe(200);
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => send(s.id, `/s/${s.id}/api/v2/payment/burst_${i}`, bearer(t))));
    const ruled = answers.filter((a) => a.headers.get("x-sandbox-rule") !== null);
    expect(ruled.map((a) => [a.status, a.headers.get("x-sandbox-rule")])).toEqual([[503, "default/action-1"]]);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(29);
    expect(new Set(answers.map((a) => a.servedBy)).size).toBe(REPLICAS);
    const fired = (await journalOn(replicas[1]!, s.id)).filter((e) => e.rules !== undefined);
    expect(fired).toHaveLength(1);
    await expectJournalExactlyOnce(s.id);
  }, 60_000);

  it("answers what was stored when a commit's reply is held past the timeout by a slow link", async () => {
    // A fourth replica, reached directly, whose link to redis can stall: its commit reaches Redis
    // at once, and Redis's answer comes 2.6 s later, after the replica's 2 s timeout.
    const link = await startSlowLink(redis.port);
    const port = (await freePorts(1))[0]!;
    const cli = await startCliServer(["--port", String(port), "--state", link.url, "--log-format", "off"]);
    const slow: Replica = { name: "slow", port, url: cli.url, cli };
    try {
      const s = await newSession();
      // The new replica learns of the session first (a control-plane read syncs): the commit
      // held is then the one that applies, not one refused as stale for the session it lacked.
      expect((await send(undefined, `/__sandbox/sessions/${s.id}`, {}, slow.url)).status).toBe(200);
      link.holdAfter(LUA_SCRIPTS.commit.lua, 2600);
      const exchanged = await send(s.id, `/s/${s.id}/api/v2/auth/token`, json({ api_key: s.key, api_secret: s.secret }), slow.url);
      expect(exchanged.status, JSON.stringify(exchanged.json)).toBe(200);
      expect(link.holds).toBe(1);
      const t = exchanged.json.access_token as string;
      for (const r of replicas) expect((await send(s.id, `/s/${s.id}/api/v2/payment/slow-${r.name}`, bearer(t), r.url)).status).toBe(200);

      link.holdAfter(LUA_SCRIPTS.commit.lua, 2600);
      const revoke = await send(undefined, `/__sandbox/sessions/${s.id}/actions`, json({ now: { revoke_token: "all" } }), slow.url);
      expect(revoke.status, JSON.stringify(revoke.json)).toBe(200);
      expect(link.holds).toBe(2);
      for (const r of [...replicas, slow]) {
        const refused = await send(s.id, `/s/${s.id}/api/v2/payment/revoked-${r.name}`, bearer(t), r.url);
        expect([refused.status, refused.json.code]).toEqual([401, "token_revoked"]);
      }
      await expectJournalExactlyOnce(s.id);

      link.holdAfter(LUA_SCRIPTS.commit.lua, 2600);
      expect((await send(undefined, `/__sandbox/sessions/${s.id}`, { method: "DELETE" }, slow.url)).status).toBe(204);
      expect(link.holds).toBe(3);
      for (const r of replicas) expect((await send(undefined, `/__sandbox/sessions/${s.id}`, {}, r.url)).status).toBe(404);
    } finally {
      await stopReplica(slow);
      await link.close();
    }
  }, 90_000);

  it("keeps the deployment's state through a redis-server restarted empty: sessions, revocations, clocks, ids", async () => {
    const s = await newSession();
    const t = await token(s);
    const revoke = await send(undefined, `/__sandbox/sessions/${s.id}/actions`, json({ now: { revoke_token: "all" } }));
    expect(revoke.status, JSON.stringify(revoke.json)).toBe(200);
    const moved = await send(undefined, `/__sandbox/sessions/${s.id}/clock`, json({ freeze: true, advance: "10m" }));
    expect(moved.status, JSON.stringify(moved.json)).toBe(200);
    const before = await journalOn(replicas[0]!, s.id);

    await redis.kill();
    await redis.restart();
    // Every replica notices the emptied store within a second (a timer syncs), and the first to
    // write its state back wins; the others adopt it.
    await until("every replica healthy again", async () => {
      for (const r of replicas) if ((await send(undefined, "/__sandbox/health", {}, r.url)).status !== 200) return false;
      return true;
    });
    await allUp();
    for (const r of replicas) {
      const refused = await send(s.id, `/s/${s.id}/api/v2/payment/after-restart-${r.name}`, bearer(t), r.url);
      expect([refused.status, refused.json.code]).toEqual([401, "token_revoked"]);
      expect((await send(undefined, `/__sandbox/sessions/${s.id}/clock`, {}, r.url)).json).toEqual(moved.json);
    }
    const fresh = await token(s);
    expect((await send(s.id, `/s/${s.id}/api/v2/payment/fresh`, bearer(fresh))).status).toBe(200);
    const after = await journalOn(replicas[1]!, s.id);
    // The journal from before is kept, and numbering goes on after it: no id is given twice.
    expect(after.slice(0, before.length)).toEqual(before);
    const ids = after.map((e) => Number(e.id.slice(4)));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    await expectJournalExactlyOnce(s.id);
  }, 90_000);

  it("fails closed while redis is frozen (503 and an unhealthy health check), and recovers by itself", async () => {
    const s = await newSession();
    const t = await token(s);
    redis.freeze();
    try {
      for (const r of replicas) {
        const began = performance.now();
        const health = await send(undefined, "/__sandbox/health", {}, r.url);
        // The health check is the operator's: it names the store; what failed depends on when it was asked.
        const said = expect.stringMatching(new RegExp(`^The shared state at ${escaped(redis.url)} is not usable from this replica: .+`));
        expect([health.status, health.json, unavailableHeaders(health)]).toEqual([
          503,
          problem(503, "Service Unavailable", "state_unavailable", said, "/__sandbox/health", "temporarily_unavailable"),
          UNAVAILABLE_HEADERS,
        ]);
        const path = `/s/${s.id}/api/v2/payment/frozen-${r.name}`;
        const call = await send(s.id, path, bearer(t), r.url);
        expect([call.status, call.json, unavailableHeaders(call)]).toEqual([
          503,
          problem(503, "Service Unavailable", "state_unavailable", CLIENT_DETAIL, path, "temporarily_unavailable"),
          UNAVAILABLE_HEADERS,
        ]);
        // A bound, not a speed: a store that does not answer never holds a request for long.
        expect(performance.now() - began).toBeLessThan(10_000);
      }
      await haproxy.untilStates("every replica drained", (st) => replicas.every((r) => st[r.name] === "DOWN"), 20_000);
    } finally {
      redis.thaw();
    }
    await allUp();
    for (const r of replicas) {
      const ok = await send(s.id, `/s/${s.id}/api/v2/payment/thawed-${r.name}`, bearer(t), r.url);
      expect(ok.status, JSON.stringify(ok.json)).toBe(200);
    }
    // The 503s are nowhere in the journal; everything answered otherwise is, once.
    seen.set(
      s.id,
      (seen.get(s.id) ?? []).filter((x) => x.status !== 503),
    );
    await expectJournalExactlyOnce(s.id);
  }, 90_000);
});

/** What a client is told when the store failed (never the store's own message). */
const CLIENT_DETAIL =
  "The sandbox's shared state did not answer in time, so this request was not run, or nothing it did was stored. Retry after Retry-After seconds.";

const UNAVAILABLE_HEADERS = { "content-type": "application/problem+json", "cache-control": "no-store", "retry-after": "1" };

/** The headers a state_unavailable answer sets, as the answer has them. */
function unavailableHeaders(answer: Answer): Record<string, string | null> {
  return Object.fromEntries(Object.keys(UNAVAILABLE_HEADERS).map((name) => [name, answer.headers.get(name)]));
}

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function json(body: unknown): RequestInit {
  return { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Polls `done` until it holds (a bound, not a sleep: 15 s). */
async function until(what: string, done: () => Promise<boolean>): Promise<void> {
  const bound = Date.now() + 15_000;
  while (!(await done())) {
    if (Date.now() > bound) throw new Error(`${what}: not within 15 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The ids of the stream's `request` events, once it has sent `count` of them (bounded wait). */
async function requestEvents(stream: EventStream, count: number): Promise<string[]> {
  const ids: string[] = [];
  while (ids.length < count) {
    const [event] = await stream.next(1, 15_000);
    if (event?.event === "request") ids.push(event.id!);
  }
  return ids;
}

/** Free loopback ports, each found by binding port 0 (replicas restart on the same one). */
async function freePorts(n: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < n) {
    const port = await freePort();
    if (!ports.includes(port)) ports.push(port);
  }
  return ports;
}
