// npm run bench: the sandbox server, a bare node:http reference doing the same JWT work (with the
// run's algorithm, then HS256 and ES256 for the two JWT endpoints), a minimal node:http server's
// start, and the in-process msw mode, measured in one run on this machine. Loopback only, bounded in time
// (BENCH_DURATION seconds per row and server, in BENCH_ROUNDS turns, default 5, and BENCH_GROWTH_DURATION per point of the
// cost-growth table, default 2; about 6 minutes in all, the growth table 2 of them). Writes
// bench/results/latest.{json,md} and prints the sandbox/reference ratio per endpoint.
import { generateKeyPairSync, sign } from "node:crypto";
import { readdirSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { ROOT, writeRecordedRun } from "./support.mjs";
import {
  CREDENTIALS,
  DURATION,
  LOADGEN,
  ROTATION_TOKENS,
  endpoints,
  fetchFresh,
  inParallel,
  load,
  measureSessionRows,
  median,
  progress,
  rssMb,
  startServer,
  stopServer,
  tokenFrom,
  tokensFrom,
} from "./harness.mjs";

const ALG = process.env.BENCH_ALG ?? "RS256";
// Each point of the cost-growth table: 12 points, 7 servers; the set-up (5,000 sessions created
// and ended, 10,000 tokens, filling a 100,000-entry journal) takes longer than the points.
const GROWTH_DURATION = Number(process.env.BENCH_GROWTH_DURATION ?? 2);

// Each row is measured in ROUNDS short loads per server, the servers taking turns: this machine's
// throughput can halve or double from one few-second run to the next (a trivial node:http server
// measured 42,079 then 21,760 req/s in two identical 4 s runs), so one long run per server in
// sequence can be off by that much; servers taking turns meet the same moments.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ROUND_SECONDS = Math.max(1, Math.round(DURATION / ROUNDS));
/** How long the servers are left without load before RSS is read a second time. */
const QUIET_SECONDS = 20;

/** Starts a server for `keys` (every endpoint when absent): its token(s) fetched and warmed up. */
async function openServer({ name, args, env, keys }) {
  progress(`${name}: starting`);
  const server = await startServer(name, args, env);
  const token = await tokenFrom(server.url);
  const wanted = (key) => !keys || keys.includes(key);
  const tokens = wanted("rotation") ? await tokensFrom(server.url, ROTATION_TOKENS) : [];
  const list = endpoints(token, tokens).filter((ep) => wanted(ep.key));
  await load(server, endpoints(token)[1], 10, 1); // warm-up
  return { name, server, list, rows: {} };
}

/** One row from its rounds: the median of each figure, errors and requests summed. */
function fromRounds(rounds) {
  const med = (pick) => median(rounds.map(pick));
  return {
    reqPerSec: med((r) => r.reqPerSec),
    p50: med((r) => r.p50),
    p99: med((r) => r.p99),
    cpuUsPerReq: med((r) => r.cpuUsPerReq),
    errors: rounds.reduce((n, r) => n + r.errors, 0),
    total: rounds.reduce((n, r) => n + r.total, 0),
    rounds: rounds.map((r) => r.reqPerSec),
  };
}

/**
 * Loads every row of the given servers, each at 10 connections, in ROUNDS turns: per round, each
 * server that measures the row gets ROUND_SECONDS of load, then the next.
 */
async function measureInTurns(opened) {
  const keys = [...new Set(opened.flatMap((o) => o.list.map((e) => e.key)))];
  for (const key of keys) {
    const taking = opened.filter((o) => o.list.some((e) => e.key === key));
    progress(`${key}: ${taking.map((o) => o.name).join(", ")}, ${ROUNDS} turns of ${ROUND_SECONDS} s`);
    const rounds = new Map(taking.map((o) => [o, []]));
    for (let r = 0; r < ROUNDS; r++) {
      for (const o of taking)
        rounds.get(o).push(
          await load(
            o.server,
            o.list.find((e) => e.key === key),
            10,
            ROUND_SECONDS,
          ),
        );
    }
    for (const [o, measured] of rounds) o.rows[key] = fromRounds(measured);
  }
}

/**
 * Measures servers side by side: their rows in turns (measureInTurns); then, for a spec with
 * `scale`, the token exchange and the protected call at 1 and 50 connections too, and with
 * `session` the protected call under a session's base URL without and with an event stream open.
 * RSS is read after each server's load (and with `quiet`, again once the servers have been left
 * without load for QUIET_SECONDS). Results in the order of the specs.
 */
async function measureTogether(specs, { quiet = false } = {}) {
  const opened = [];
  try {
    for (const spec of specs) opened.push(await openServer(spec));
    await measureInTurns(opened);
    const results = [];
    for (const [i, spec] of specs.entries()) {
      const { server, list, rows } = opened[i];
      let stream;
      if (spec.session) {
        progress(`${spec.name}: session rows`);
        const measured = await measureSessionRows(server);
        Object.assign(rows, measured.rows);
        stream = measured.stream;
      }
      const scaling = {};
      if (spec.scale) {
        progress(`${spec.name}: 1 and 50 connections`);
        for (const ep of list.filter((e) => e.key === "token" || e.key === "protected")) {
          scaling[ep.key] = {};
          for (const c of [1, 10, 50]) scaling[ep.key][c] = c === 10 ? rows[ep.key] : await load(server, ep, c);
        }
      }
      results.push({ name: spec.name, rssMb: rssMb(server.child.pid), rows, scaling, ...(stream && { stream }) });
    }
    // With `quiet`: the reading at the end of the load holds the garbage of the last rows until
    // V8's next full GC; left quiet, V8's memory reducer collects it (it starts some seconds after
    // allocation stops). The target is judged on the first reading; this one says what stays.
    if (quiet) {
      progress(`RSS again after ${QUIET_SECONDS} s quiet`);
      await new Promise((resolve) => setTimeout(resolve, QUIET_SECONDS * 1000));
      for (const [i, r] of results.entries()) r.rssQuietMb = rssMb(opened[i].server.child.pid);
    }
    return results;
  } finally {
    for (const o of opened) await stopServer(o.server);
  }
}

/**
 * Start → first 200, the median of several starts of each server (one start on a shared machine
 * is a lottery). The servers take turns, one start each per round, so a busy moment of the machine
 * falls on all of them alike: the sandbox's target is relative to the minimal server's start.
 */
async function measureStarts(servers, times = 7) {
  progress(`start → first 200: ${servers.map((s) => s.name).join(", ")}, ${times} times each, in turn`);
  const samples = servers.map(() => []);
  for (let i = 0; i < times; i++) {
    for (const [n, { name, args, env }] of servers.entries()) {
      const server = await startServer(name, args, env);
      samples[n].push(server.startMs);
      await stopServer(server);
    }
  }
  return samples.map((s) => ({ medianMs: Math.round(median(s)), samplesMs: s.map(Math.round) }));
}

/**
 * The CPU of one RS256 signature here (RSA-2048, node:crypto, on this thread, over a token-sized
 * input), the median of 5 one-second rounds: the floor under a token exchange's cost.
 */
function rsaSignatureCpu() {
  progress("one RS256 signature's CPU");
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const input = Buffer.alloc(300, "e");
  const rounds = [];
  for (let r = 0; r < 5; r++) {
    const before = process.cpuUsage();
    let n = 0;
    for (const end = performance.now() + 1000; performance.now() < end; n++) sign("sha256", input, privateKey);
    const used = process.cpuUsage(before);
    rounds.push((used.user + used.system) / n);
  }
  return { cpuUs: Math.round(median(rounds)), roundsUs: rounds.map(Math.round) };
}

async function measureInProcess() {
  progress("in-process (msw)");
  // The cost of a request through msw's setupServer: the sandbox's handlers against a trivial msw
  // handler answering the same JSON at the same URL, in this process, sequential fetches. The two
  // take turns in short rounds (swapped with resetHandlers, so neither pays for the other's
  // matching); the ratio is the median of the rounds' ratios, so a pause of a shared machine (or a
  // major GC) in one round does not decide it.
  const { setupServer } = await import("msw/node");
  const { http, HttpResponse } = await import("msw");
  const { createSandbox } = await import(`${ROOT}/dist/index.js`);
  const { createMswHandlers } = await import(`${ROOT}/dist/adapters/msw.js`);
  const ROUNDS = 15;
  const PER_ROUND = Math.round(Number(process.env.BENCH_INPROCESS_N ?? 6000) / ROUNDS);
  const base = "https://api.bench";
  const sandbox = await createSandbox({ algorithm: ALG });
  const sandboxHandlers = createMswHandlers(sandbox, { baseUrl: base });
  const trivialHandler = http.get(`${base}/api/v2/payment/p_1`, () => HttpResponse.json({ merchant_id: "m", operation: "GET /api/v2/payment/p_1" }));
  const server = setupServer(...sandboxHandlers);
  server.listen({ onUnhandledRequest: "error" });
  const token = (
    await (await fetch(`${base}/api/v2/auth/token`, { method: "POST", headers: { "content-type": "application/json" }, body: CREDENTIALS })).json()
  ).access_token;
  const init = { headers: { authorization: `Bearer ${token}` } };
  const url = `${base}/api/v2/payment/p_1`;
  const round = async (handlers, n) => {
    server.resetHandlers(...handlers);
    const start = process.cpuUsage();
    for (let i = 0; i < n; i++) await (await fetch(url, init)).text();
    const used = process.cpuUsage(start);
    return used.user + used.system;
  };
  await round(sandboxHandlers, 300); // warm-up, both sides
  await round([trivialHandler], 300);
  const sandboxCpu = [];
  const trivialCpu = [];
  for (let r = 0; r < ROUNDS; r++) {
    sandboxCpu.push(await round(sandboxHandlers, PER_ROUND));
    trivialCpu.push(await round([trivialHandler], PER_ROUND));
  }
  server.close();
  const ratios = sandboxCpu.map((c, i) => c / trivialCpu[i]);
  return {
    sandboxUsPerReq: Math.round(median(sandboxCpu) / PER_ROUND),
    trivialUsPerReq: Math.round(median(trivialCpu) / PER_ROUND),
    ratio: +median(ratios).toFixed(2),
    roundRatios: ratios.map((x) => +x.toFixed(2)),
  };
}

const PEER_KEYS = ["token", "protected", "init", "unknown"];

/**
 * A peer (bench/peers.mjs) under the same requests as the servers above, bar the token rotation
 * (a peer verifies no token, so it is the protected call again): a warm-up first, a JVM's JIT
 * being slower to settle than V8's.
 */
async function measurePeer(server) {
  progress(`peer ${server.name}`);
  const list = endpoints("static-peer-token").filter((ep) => PEER_KEYS.includes(ep.key));
  await load(server, list[1], 10, 2);
  const rows = {};
  for (const ep of list) rows[ep.key] = await load(server, ep, 10);
  return { rows, rssMb: rssMb(server.child.pid) };
}

/** A server for the length of `measure(server)`, stopped whatever happens. */
async function withServer(name, args, measure) {
  progress(name);
  const server = await startServer(name, args, {});
  try {
    return await measure(server);
  } finally {
    await stopServer(server);
  }
}

const protectedCall = (tokens) => ({ path: "/api/v2/payment/p_1", request: { tokens } });

/** One point of the cost-growth table: the protected call at 10 connections, then the server's RSS. */
async function growthPoint(server, growing, value, call, { gc = false } = {}) {
  const r = await load(server, call, 10, GROWTH_DURATION);
  if (gc) {
    server.child.kill("SIGUSR2");
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  return { growing, value, reqPerSec: r.reqPerSec, p99: r.p99, rssMb: rssMb(server.child.pid), errors: r.errors, ...(gc && { afterGc: true }) };
}

/** 0, 100, 1,000, 5,000 live sessions (POST /__sandbox/sessions; --max-sessions raised from its 1,000 to hold them). */
function growSessions() {
  // Each point's RSS is read after a full GC (bench/gc-on-signal.cjs), so "returned after they end" is
  // memory the sessions still hold, not garbage not collected yet.
  const args = ["--expose-gc", "--require", "./bench/gc-on-signal.cjs", ...sandboxArgs(ALG, ["--max-sessions", "5000"])];
  return withServer("sandbox, sessions", args, async (server) => {
    const call = protectedCall([await tokenFrom(server.url)]);
    await load(server, call, 10, 1); // warm-up
    const points = [];
    const ids = [];
    for (const count of [0, 100, 1000, 5000]) {
      // Creating them is timed too: a cost that grows with the sessions already held shows here.
      const creating = performance.now();
      const made = count - ids.length;
      ids.push(...(await inParallel(made, 10, () => createSession(server.url))));
      const setup = made > 0 ? `created at ${((performance.now() - creating) / made).toFixed(1)} ms each` : "";
      points.push({ ...(await growthPoint(server, "live sessions", count, call, { gc: true })), setup });
    }
    // Then all of them end (DELETE, as a test suite's teardown does): their memory must come back.
    const ending = performance.now();
    await inParallel(ids.length, 10, (i) => endSession(server.url, ids[i]));
    const setup = `${ids.length.toLocaleString("en")} ended at ${((performance.now() - ending) / ids.length).toFixed(1)} ms each`;
    points.push({ ...(await growthPoint(server, SESSIONS_ENDED, 0, call, { gc: true })), setup });
    return points;
  });
}

/** The growth table's point after the 5,000 sessions ended: live sessions back to 0. */
const SESSIONS_ENDED = "live sessions, after the 5,000 ended";

/** Creates a session; its id. */
async function createSession(url) {
  const r = await fetchFresh(`${url}/__sandbox/sessions`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  if (r.status !== 201) throw new Error(`POST /__sandbox/sessions answered ${r.status}: ${await r.text()}`);
  return (await r.json()).id;
}

async function endSession(url, id) {
  const r = await fetchFresh(`${url}/__sandbox/sessions/${id}`, { method: "DELETE" });
  if (r.status !== 204) throw new Error(`DELETE /__sandbox/sessions/${id} answered ${r.status}: ${await r.text()}`);
  await r.arrayBuffer();
}

/** 1, 1,000, 10,000 distinct tokens in rotation, all issued before the first point. */
function growTokens() {
  return withServer("sandbox, tokens", sandboxArgs(ALG), async (server) => {
    const issuing = performance.now();
    const tokens = await tokensFrom(server.url, 10_000);
    const setup = `issued at ${((performance.now() - issuing) / tokens.length).toFixed(1)} ms each`;
    await load(server, protectedCall(tokens.slice(0, 1)), 10, 1); // warm-up
    const points = [];
    for (const count of [1, 1000, 10_000]) {
      const point = await growthPoint(server, "distinct tokens in rotation", count, protectedCall(tokens.slice(0, count)));
      points.push({ ...point, setup: count > 1 ? setup : "" });
    }
    return points;
  });
}

/** The default scenario alone, then every library scenario at once (the default first: the primary). */
async function growScenarios() {
  const library = readdirSync(join(ROOT, "scenarios"))
    .filter((f) => f.endsWith(".yaml"))
    .map((f) => f.slice(0, -".yaml".length));
  const all = ["default", ...library.filter((n) => n !== "default")];
  const points = [];
  for (const names of [["default"], all]) {
    const args = sandboxArgs(
      ALG,
      names.flatMap((n) => ["--scenario", n]),
    );
    points.push(
      await withServer("sandbox, scenarios", args, async (server) => {
        const call = protectedCall([await tokenFrom(server.url)]);
        await load(server, call, 10, 1); // warm-up
        return growthPoint(server, "loaded scenarios", names.length, call);
      }),
    );
  }
  return points;
}

/**
 * --journal-size 1,000 (the default) and 100,000, each filled first: the journal's cost is in
 * holding and evicting entries, which an empty journal has not begun to do.
 */
async function growJournal() {
  const points = [];
  for (const size of [1000, 100_000]) {
    points.push(
      await withServer("sandbox, journal", sandboxArgs(ALG, ["--journal-size", String(size)]), async (server) => {
        const call = protectedCall([await tokenFrom(server.url)]);
        let journaled = 0;
        for (let i = 0; i < 30 && journaled < size; i++) journaled += (await load(server, call, 10, 1)).total;
        return growthPoint(server, "journal size", size, call);
      }),
    );
  }
  return points;
}

/** The cost-growth table: how the protected call's throughput and the RSS move as the state grows. */
async function measureGrowth() {
  const started = Date.now();
  const points = [...(await growSessions()), ...(await growTokens()), ...(await growScenarios()), ...(await growJournal())];
  return { durationPerPointS: GROWTH_DURATION, seconds: Math.round((Date.now() - started) / 1000), points };
}

const started = Date.now();
// Started the way npm start, the bin's shebang and the image start it, with the server's defaults:
// the text request log on, every request a line on stdout, as users run it.
const sandboxArgs = (alg, extra = []) => ["--max-semi-space-size=2", "dist/bin/main.js", "serve", "--port", "0", "--alg", alg, ...extra];
// The sandbox, the sandbox with the log off (the protected call: what the default log costs), the
// reference and, for RS256, the reference signing on one thread, measured side by side.
const [sandbox, quiet, reference, oneThread] = await measureTogether(
  [
    { name: "sandbox", args: sandboxArgs(ALG), env: {}, scale: true, session: true },
    { name: "sandbox, logging off", args: sandboxArgs(ALG, ["--log-format", "off"]), env: {}, keys: ["protected"] },
    { name: "reference", args: ["bench/reference-server.mjs"], env: { BENCH_ALG: ALG } },
    // The RS256 exchange's target is against a single-threaded bare server: the same reference
    // signing on its event loop's thread (the default reference signs on libuv's thread pool).
    ...(ALG === "RS256"
      ? [
          {
            name: "reference, signing on one thread",
            args: ["bench/reference-server.mjs"],
            env: { BENCH_ALG: ALG, BENCH_SIGN: "sync" },
            keys: ["token"],
          },
        ]
      : []),
  ],
  { quiet: true },
);
// The floor: a minimal node:http server (listen, answer health), started the same way.
const minimal = { name: "minimal node:http server" };
[sandbox.start, reference.start, minimal.start] = await measureStarts([
  { name: "sandbox", args: sandboxArgs(ALG), env: {} },
  { name: "reference", args: ["bench/reference-server.mjs"], env: { BENCH_ALG: ALG } },
  { name: minimal.name, args: ["bench/minimal-server.mjs"], env: {} },
]);
/**
 * The two JWT endpoints again with another algorithm, both servers: HS256 (the peer
 * figures were measured with it) and ES256, each with a target of its own. None for the run's own.
 */
const otherAlgorithm = async (alg) =>
  ALG === alg
    ? undefined
    : await measureTogether([
        { name: `sandbox ${alg}`, args: sandboxArgs(alg), env: {}, keys: ["token", "protected"] },
        { name: `reference ${alg}`, args: ["bench/reference-server.mjs"], env: { BENCH_ALG: alg }, keys: ["token", "protected"] },
      ]).then(([sandbox, reference]) => ({ sandbox, reference }));
const signature = ALG === "RS256" ? rsaSignatureCpu() : undefined;
const hs = await otherAlgorithm("HS256");
const es = await otherAlgorithm("ES256");
const inProcess = await measureInProcess();
const peers = process.env.BENCH_PEERS === "1" ? await (await import("./peers.mjs")).measurePeers(measurePeer) : undefined;
const growth = await measureGrowth();

// The session rows have no reference of their own: the bare reference's protected call does the same JWT work.
/**
 * A row's ratio: the median of its rounds' ratios when both were measured in turns (each round's
 * pair met the same moment of the machine), else the ratio of the two req/s.
 */
function rowRatio(row, against) {
  const paired = row.rounds && against.rounds && row.rounds.length === against.rounds.length;
  return +(paired ? median(row.rounds.map((r, i) => r / against.rounds[i])) : row.reqPerSec / against.reqPerSec).toFixed(2);
}
const ratio = (k, ref = k, server = sandbox, against = reference) => rowRatio(server.rows[k], against.rows[ref]);
// The share of protected-call throughput the default text log takes, against the same call with --log-format off.
const logCostPct = Math.round((1 - rowRatio(sandbox.rows.protected, quiet.rows.protected)) * 100);
// The same cost in CPU per request, which a busy moment of the machine moves less than req/s.
const logCostCpuPct = Math.round((1 - quiet.rows.protected.cpuUsPerReq / sandbox.rows.protected.cpuUsPerReq) * 100);
const growthAt = (growing, value) => growth.points.find((p) => p.growing === growing && p.value === value);
const sessionsRssMb = growthAt("live sessions", 5000).rssMb - growthAt("live sessions", 0).rssMb;
// What the 5,000 sessions still hold once they all ended: "returned" is within 16 MB of idle (V8
// keeps some of a grown heap after a full GC; a leak would keep all of it). Both points read after one.
const sessionsLeftMb = growthAt(SESSIONS_ENDED, 0).rssMb - growthAt("live sessions", 0).rssMb;
// Both servers sign RS256 on every core (libuv's thread pool) and are CPU-bound: a sandbox whose
// exchange cost nothing but its signature would do the reference's CPU per exchange over the signature's.
const oneThreadRatio = oneThread && rowRatio(sandbox.rows.token, oneThread.rows.token);
const signatureCeiling = signature && +(reference.rows.token.cpuUsPerReq / signature.cpuUs).toFixed(2);
const startRatio = +(sandbox.start.medianMs / minimal.start.medianMs).toFixed(2);
/** The token exchange's target for an algorithm: RSA signing is the limit, and the sandbox signs on both cores. */
const tokenTarget = (alg) => (alg === "RS256" ? 1.6 : 0.95);
const algRatio = (pass, k) => rowRatio(pass.sandbox.rows[k], pass.reference.rows[k]);
const otherTokenTargets = [
  ["HS256", hs],
  ["ES256", es],
]
  .filter(([, pass]) => pass)
  .map(([alg, pass]) => ({
    target: `${alg} token exchange ≥ ${tokenTarget(alg)}× reference`,
    value: algRatio(pass, "token"),
    ok: algRatio(pass, "token") >= tokenTarget(alg),
  }));
const allRows = [...Object.values(sandbox.rows), ...Object.values(quiet.rows), ...growth.points];
const targets = [
  oneThread
    ? {
        target: `${ALG} token exchange ≥ ${tokenTarget(ALG)}× a single-threaded bare server (the reference signing on its event loop)`,
        value: oneThreadRatio,
        ok: oneThreadRatio >= tokenTarget(ALG),
      }
    : { target: `${ALG} token exchange ≥ ${tokenTarget(ALG)}× reference`, value: ratio("token"), ok: ratio("token") >= tokenTarget(ALG) },
  ...otherTokenTargets,
  { target: "protected call ≥ 1.0× reference", value: ratio("protected"), ok: ratio("protected") >= 1 },
  { target: "payment/init ≥ 0.9× reference", value: ratio("init"), ok: ratio("init") >= 0.9 },
  { target: "unknown path ≥ 0.9× reference", value: ratio("unknown"), ok: ratio("unknown") >= 0.9 },
  {
    target: `protected call, ${ROTATION_TOKENS.toLocaleString("en")} tokens in rotation ≥ 1.0× reference`,
    value: ratio("rotation"),
    ok: ratio("rotation") >= 1,
  },
  {
    target: "default request log costs ≤ 10 % of protected-call req/s (vs --log-format off)",
    value: `${logCostPct} % (${logCostCpuPct} % of the CPU per request)`,
    ok: logCostPct <= 10,
  },
  {
    target: "5,000 sessions ≤ 64 MB RSS above idle, returned (within 16 MB of idle, after a full GC) after they end",
    value: `${sessionsRssMb} MB, ${sessionsLeftMb} MB after they end`,
    ok: sessionsRssMb <= 64 && sessionsLeftMb <= 16,
  },
  {
    target: `CLI start → first 200 ≤ 250 ms and ≤ 2× a minimal node:http server's (medians of ${sandbox.start.samplesMs.length})`,
    value: `${sandbox.start.medianMs} ms, ${startRatio}× (${minimal.start.medianMs} ms)`,
    ok: sandbox.start.medianMs <= 250 && startRatio <= 2,
  },
  {
    target: `RSS after load ≤ 110 MB (judged at the load's end; then after ${QUIET_SECONDS} s quiet)`,
    value: `${sandbox.rssMb} MB, ${sandbox.rssQuietMb} MB quiet`,
    ok: sandbox.rssMb <= 110,
  },
  { target: "p99 ≤ 5 ms, protected, 10 connections", value: sandbox.rows.protected.p99, ok: sandbox.rows.protected.p99 <= 5 },
  { target: "in-process ≤ 1.2× a trivial msw handler", value: inProcess.ratio, ok: inProcess.ratio <= 1.2 },
  {
    target: "no errors and no unexpected statuses",
    value: allRows.reduce((n, r) => n + r.errors, 0),
    ok: allRows.every((r) => r.errors === 0),
  },
];
const machine = `${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}, ${ALG}`;
const results = {
  date: new Date().toISOString(),
  machine,
  loadGenerator: LOADGEN,
  durationPerRunS: DURATION,
  rounds: ROUNDS,
  roundSeconds: ROUND_SECONDS,
  sandbox,
  sandboxLoggingOff: quiet,
  reference,
  minimal,
  referenceSigningOnOneThread: oneThread,
  rs256Signature: signature,
  hs256: hs,
  es256: es,
  inProcess,
  growth,
  peers,
  targets,
  benchSeconds: Math.round((Date.now() - started) / 1000),
};

const row = (label, k, ref = k, server = sandbox, against = reference) =>
  `| ${label} | ${server.rows[k].reqPerSec} | ${against.rows[ref].reqPerSec} | ${ratio(k, ref, server, against)}× | ${server.rows[k].p50} / ${server.rows[k].p99} | ${server.rows[k].cpuUsPerReq} / ${against.rows[ref].cpuUsPerReq} | ${server.rows[k].errors} |`;
const growthRow = (p) =>
  `| ${p.growing} | ${p.value.toLocaleString("en")} | ${p.reqPerSec} | ${p.p99} | ${p.rssMb} MB | ${p.errors} | ${p.setup ?? ""} |`;
// Without BENCH_PEERS=1 no peer is measured, and no figure of theirs from elsewhere is shown.
const peerTable = ["", "Peers (WireMock, Prism, Mockoon) are measured in the same run with `BENCH_PEERS=1`; this run did not measure them."];
const peerRow = (name, r, startMs, rss) =>
  `| ${name} | ${PEER_KEYS.map((k) => r[k].reqPerSec).join(" | ")} | ${startMs} ms | ${rss} MB | ${PEER_KEYS.reduce((n, k) => n + r[k].errors, 0)} |`;
// Measured in this run (BENCH_PEERS=1), with the same request table as the sandbox.
const measuredPeerTable = peers && [
  "",
  `Peers in this run (${ALG} for the two that do JWT work; the peers serve fixed answers, a static token: they sign nothing and verify nothing):`,
  "",
  "| server | token exchange req/s | protected call req/s | payment/init req/s | unknown path req/s | start → first 200 | RSS after load | errors |",
  "|---|---|---|---|---|---|---|---|",
  peerRow("merchant-sandbox (signs and verifies)", sandbox.rows, sandbox.start.medianMs, sandbox.rssMb),
  peerRow("bare node:http reference (signs and verifies)", reference.rows, reference.start.medianMs, reference.rssMb),
  ...peers.map((p) =>
    p.skipped ? `| ${p.name}: not measured, ${p.skipped} | | | | | | | |` : peerRow(`${p.name} (signs nothing)`, p.rows, p.startMs, p.rssMb),
  ),
];
const scaleRow = (key, c) =>
  `| ${key === "token" ? "token exchange" : "protected call"} | ${c} | ${sandbox.scaling[key][c].reqPerSec} | ${sandbox.scaling[key][c].p50} | ${sandbox.scaling[key][c].p99} | ${sandbox.scaling[key][c].errors} |`;
const md = [
  `Measured ${results.date.slice(0, 10)} on ${machine}; ${LOADGEN}, 10 connections, loopback. Each row of the first table and of the HS256 and ES256 passes: ${ROUNDS} rounds of ${ROUND_SECONDS} s per server, the servers taking turns; req/s, latency and CPU are the medians of the rounds, a ratio the median of the rounds' ratios.`,
  "",
  "| endpoint | sandbox req/s | reference req/s | ratio | sandbox p50 / p99 ms | CPU µs/req sandbox / reference | errors |",
  "|---|---|---|---|---|---|---|",
  row("token exchange", "token"),
  ...(oneThread ? [row("token exchange, against the reference signing on one thread", "token", "token", sandbox, oneThread)] : []),
  row("protected call", "protected"),
  row("protected call, logging off (`--log-format off`)", "protected", "protected", quiet),
  row(`protected call, ${ROTATION_TOKENS.toLocaleString("en")} distinct tokens in rotation (cache miss)`, "rotation"),
  row("payment/init", "init"),
  row("unknown path", "unknown"),
  row("protected call, session base URL, no event stream", "session", "protected"),
  row("protected call, session base URL, 1 event stream open (a QA page)", "sessionStream", "protected"),
  "",
  `The sandbox runs with its defaults, the text request log on (read and dropped by the bench); the logging-off row is a second server with \`--log-format off\`: the log costs ${logCostPct} % of the protected call's req/s and ${logCostCpuPct} % of its CPU per request. The rotation row cycles through ${ROTATION_TOKENS.toLocaleString("en")} tokens from the token exchange, on both servers (the reference verifies every request).`,
  ...(signature
    ? [
        "",
        `One RS256 signature (RSA-2048, node:crypto) costs ${signature.cpuUs} µs of CPU on this machine, measured in this run; the reference spends ${reference.rows.token.cpuUsPerReq} µs per exchange, and both servers sign on every core, so an exchange costing nothing but its signature would reach about ${signatureCeiling}× that reference (an estimate: the signature is timed on an idle thread, not among the server's). Against the reference signing on one thread (the second token row), both cores count.`,
      ]
    : []),
  "",
  `The session rows: \`/s/<id>/api/v2/payment/p_1\` with that session's token, against the reference's protected call; the stream (\`GET /__sandbox/events?session=<id>\`) was read and discarded by the bench process (${sandbox.stream.bytes} bytes${sandbox.stream.endedEarly ? ", and it overflowed before the run ended" : ""}).`,
  "",
  `| | sandbox | reference | ratio |`,
  `|---|---|---|---|`,
  `| start → first 200 (median of ${sandbox.start.samplesMs.length}, taking turns with the reference and a minimal node:http server: ${minimal.start.medianMs} ms) | ${sandbox.start.medianMs} ms | ${reference.start.medianMs} ms | ${startRatio}× the minimal server |`,
  `| RSS after load | ${sandbox.rssMb} MB | ${reference.rssMb} MB | |`,
  `| RSS after ${QUIET_SECONDS} s quiet | ${sandbox.rssQuietMb} MB | ${reference.rssQuietMb} MB | |`,
  ...[
    ["HS256", hs],
    ["ES256", es],
  ]
    .filter(([, pass]) => pass)
    .flatMap(([alg, pass]) => [
      `| ${alg} token exchange | ${pass.sandbox.rows.token.reqPerSec} req/s | ${pass.reference.rows.token.reqPerSec} req/s | ${algRatio(pass, "token")}× |`,
      `| ${alg} protected call | ${pass.sandbox.rows.protected.reqPerSec} req/s | ${pass.reference.rows.protected.reqPerSec} req/s | ${algRatio(pass, "protected")}× |`,
    ]),
  "",
  "As load grows (sandbox):",
  "",
  "| endpoint | connections | req/s | p50 ms | p99 ms | errors |",
  "|---|---|---|---|---|---|",
  ...["token", "protected"].flatMap((k) => [1, 10, 50].map((c) => scaleRow(k, c))),
  "",
  `Cost growth (sandbox, protected call at 10 connections, ${GROWTH_DURATION} s per point, RSS after the point's load; ${growth.seconds} s in all). Sessions are live ones from POST /__sandbox/sessions (\`--max-sessions 5000\`), then the same server once all 5,000 were ended with DELETE, each of those RSS figures read after a full GC; tokens are distinct ones from the token exchange in rotation; scenarios are \`--scenario\` for every library scenario; each journal is filled before its point:`,
  "",
  "| growing | to | req/s | p99 ms | RSS | errors | set-up (bench process, 10 at a time) |",
  "|---|---|---|---|---|---|---|",
  ...growth.points.map(growthRow),
  "",
  `In-process (msw setupServer): ${inProcess.sandboxUsPerReq} µs CPU per request against ${inProcess.trivialUsPerReq} µs for a trivial msw handler (${inProcess.ratio}×, median of ${inProcess.roundRatios.length} alternating rounds).`,
  ...(measuredPeerTable ?? peerTable),
  "",
  "| target | value | met |",
  "|---|---|---|",
  ...targets.map((t) => `| ${t.target} | ${t.value} | ${t.ok ? "yes" : "no"} |`),
  "",
].join("\n");

writeRecordedRun("latest", results, md);
process.stdout.write(md + `\n(bench took ${results.benchSeconds} s; written to bench/results/latest.{json,md})\n`);
process.exit(0);
