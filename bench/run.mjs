// npm run bench: the sandbox server, a bare node:http reference doing the same JWT work, and the
// in-process msw mode, measured in one run on this machine. Loopback only, bounded in time
// (BENCH_DURATION seconds per measurement, default 5, and BENCH_GROWTH_DURATION per point of the
// cost-growth table, default 2; about 5 minutes in all, the growth table 1.5 of them). Writes
// bench/results/latest.{json,md} and prints the sandbox/reference ratio per endpoint.
import { readdirSync, writeFileSync, mkdirSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { ROOT } from "./support.mjs";
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
// Each point of the cost-growth table: 11 points, 7 servers; the set-up (5,000 sessions, 10,000
// tokens, filling a 100,000-entry journal) takes longer than the points, about 90 s in all.
const GROWTH_DURATION = Number(process.env.BENCH_GROWTH_DURATION ?? 2);

/**
 * Loads one server: every endpoint at 10 connections (or only `keys`), then, with `scale`, the
 * token exchange and the protected call at 1 and 50 connections too, and with `session` the
 * protected call under a session's base URL without and with an event stream open. RSS is read
 * after the load.
 */
async function measureServer(name, args, env, { keys, scale = false, session = false } = {}) {
  progress(name);
  const server = await startServer(name, args, env);
  const token = await tokenFrom(server.url);
  const wanted = (key) => !keys || keys.includes(key);
  const tokens = wanted("rotation") ? await tokensFrom(server.url, ROTATION_TOKENS) : [];
  const list = endpoints(token, tokens).filter((ep) => wanted(ep.key));
  await load(server, endpoints(token)[1], 10, 1); // warm-up
  const rows = {};
  for (const ep of list) rows[ep.key] = await load(server, ep, 10);
  let stream;
  if (session) {
    const measured = await measureSessionRows(server);
    Object.assign(rows, measured.rows);
    stream = measured.stream;
  }
  const scaling = {};
  if (scale) {
    for (const ep of list.filter((e) => e.key === "token" || e.key === "protected")) {
      scaling[ep.key] = {};
      for (const c of [1, 10, 50]) scaling[ep.key][c] = c === 10 ? rows[ep.key] : await load(server, ep, c);
    }
  }
  const rss = rssMb(server.child.pid);
  await stopServer(server);
  return { name, rssMb: rss, rows, scaling, ...(stream && { stream }) };
}

/** Start → first 200, the median of several starts (one start on a shared machine is a lottery). */
async function measureStart(name, args, env, times = 7) {
  progress(`${name}: start → first 200, ${times} times`);
  const samples = [];
  for (let i = 0; i < times; i++) {
    const server = await startServer(name, args, env);
    samples.push(server.startMs);
    await stopServer(server);
  }
  return { medianMs: Math.round(median(samples)), samplesMs: samples.map(Math.round) };
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
async function growthPoint(server, growing, value, call) {
  const r = await load(server, call, 10, GROWTH_DURATION);
  return { growing, value, reqPerSec: r.reqPerSec, p99: r.p99, rssMb: rssMb(server.child.pid), errors: r.errors };
}

/** 0, 100, 1,000, 5,000 live sessions (POST /__sandbox/sessions; --max-sessions raised from its 1,000 to hold them). */
function growSessions() {
  return withServer("sandbox, sessions", sandboxArgs(ALG, ["--max-sessions", "5000"]), async (server) => {
    const call = protectedCall([await tokenFrom(server.url)]);
    await load(server, call, 10, 1); // warm-up
    const points = [];
    let live = 0;
    for (const count of [0, 100, 1000, 5000]) {
      // Creating them is timed too: a cost that grows with the sessions already held shows here.
      const creating = performance.now();
      await inParallel(count - live, 10, () => createSession(server.url));
      const setup = count > live ? `created at ${((performance.now() - creating) / (count - live)).toFixed(1)} ms each` : "";
      live = count;
      points.push({ ...(await growthPoint(server, "live sessions", count, call)), setup });
    }
    return points;
  });
}

async function createSession(url) {
  const r = await fetchFresh(`${url}/__sandbox/sessions`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  if (r.status !== 201) throw new Error(`POST /__sandbox/sessions answered ${r.status}: ${await r.text()}`);
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
const sandbox = await measureServer("sandbox", sandboxArgs(ALG), {}, { scale: true, session: true });
// The same protected call on a second server with the log off: what the default log costs.
const quiet = await measureServer("sandbox, logging off", sandboxArgs(ALG, ["--log-format", "off"]), {}, { keys: ["protected"] });
const reference = await measureServer("reference", ["bench/reference-server.mjs"], { BENCH_ALG: ALG });
sandbox.start = await measureStart("sandbox", sandboxArgs(ALG), {});
reference.start = await measureStart("reference", ["bench/reference-server.mjs"], { BENCH_ALG: ALG });
// The peer figures (WireMock, Prism, the reference) were measured with HS256: the same
// two JWT endpoints again with HS256, both servers, for that comparison.
const hs =
  ALG === "HS256"
    ? undefined
    : {
        sandbox: await measureServer("sandbox HS256", sandboxArgs("HS256"), {}, { keys: ["token", "protected"] }),
        reference: await measureServer("reference HS256", ["bench/reference-server.mjs"], { BENCH_ALG: "HS256" }, { keys: ["token", "protected"] }),
      };
const inProcess = await measureInProcess();
const peers = process.env.BENCH_PEERS === "1" ? await (await import("./peers.mjs")).measurePeers(measurePeer) : undefined;
const growth = await measureGrowth();

// The session rows have no reference of their own: the bare reference's protected call does the same JWT work.
const ratio = (k, ref = k, server = sandbox) => +(server.rows[k].reqPerSec / reference.rows[ref].reqPerSec).toFixed(2);
// The share of protected-call throughput the default text log takes, against the same call with --log-format off.
const logCostPct = Math.round((1 - sandbox.rows.protected.reqPerSec / quiet.rows.protected.reqPerSec) * 100);
const growthAt = (growing, value) => growth.points.find((p) => p.growing === growing && p.value === value);
const sessionsRssMb = growthAt("live sessions", 5000).rssMb - growthAt("live sessions", 0).rssMb;
const allRows = [...Object.values(sandbox.rows), ...Object.values(quiet.rows), ...growth.points];
const targets = [
  { target: "token exchange ≥ 0.8× reference", value: ratio("token"), ok: ratio("token") >= 0.8 },
  { target: "protected call ≥ 0.8× reference", value: ratio("protected"), ok: ratio("protected") >= 0.8 },
  { target: "unknown path ≥ 0.9× reference", value: ratio("unknown"), ok: ratio("unknown") >= 0.9 },
  {
    target: `protected call, ${ROTATION_TOKENS.toLocaleString("en")} tokens in rotation ≥ 1.0× reference`,
    value: ratio("rotation"),
    ok: ratio("rotation") >= 1,
  },
  { target: "default request log costs ≤ 10 % of protected-call req/s (vs --log-format off)", value: `${logCostPct} %`, ok: logCostPct <= 10 },
  { target: "5,000 live sessions ≤ 64 MB RSS above none", value: `${sessionsRssMb} MB`, ok: sessionsRssMb <= 64 },
  { target: "CLI start → first 200 ≤ 250 ms (median of 7)", value: sandbox.start.medianMs, ok: sandbox.start.medianMs <= 250 },
  { target: "RSS after load ≤ 110 MB", value: sandbox.rssMb, ok: sandbox.rssMb <= 110 },
  { target: "p99 ≤ 5 ms, protected, 10 connections", value: sandbox.rows.protected.p99, ok: sandbox.rows.protected.p99 <= 5 },
  { target: "in-process ≤ 1.25× a trivial msw handler", value: inProcess.ratio, ok: inProcess.ratio <= 1.25 },
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
  sandbox,
  sandboxLoggingOff: quiet,
  reference,
  hs256: hs,
  inProcess,
  growth,
  peers,
  targets,
  benchSeconds: Math.round((Date.now() - started) / 1000),
};

const row = (label, k, ref = k, server = sandbox) =>
  `| ${label} | ${server.rows[k].reqPerSec} | ${reference.rows[ref].reqPerSec} | ${ratio(k, ref, server)}× | ${server.rows[k].p50} / ${server.rows[k].p99} | ${server.rows[k].cpuUsPerReq} / ${reference.rows[ref].cpuUsPerReq} | ${server.rows[k].errors} |`;
const growthRow = (p) =>
  `| ${p.growing} | ${p.value.toLocaleString("en")} | ${p.reqPerSec} | ${p.p99} | ${p.rssMb} MB | ${p.errors} | ${p.setup ?? ""} |`;
// From issue 5 (wrk, 10 connections, HS256, same kind of machine): not measured by this script.
const PEERS = [
  { name: "WireMock 3.13 (static token, no JWT checks)", token: 4370, protected: 10370, unknown: 1600, startMs: 1594, rssMb: 282 },
  { name: "Prism 5.14 (static, no JWT checks)", token: 2600, protected: 2860, unknown: 3750, startMs: 1391, rssMb: 223 },
];
const peerTable = hs
  ? [
      "",
      "Against the peers' figures from issue 5 (wrk, HS256; not measured by this script). Sandbox token and protected rows are the HS256 pass above:",
      "",
      "| server | token exchange req/s | protected call req/s | unknown path req/s | start → first 200 | RSS after load |",
      "|---|---|---|---|---|---|",
      `| merchant-sandbox (this run, real JWT work) | ${hs.sandbox.rows.token.reqPerSec} | ${hs.sandbox.rows.protected.reqPerSec} | ${sandbox.rows.unknown.reqPerSec} | ${sandbox.start.medianMs} ms | ${sandbox.rssMb} MB |`,
      `| bare node:http reference (this run) | ${hs.reference.rows.token.reqPerSec} | ${hs.reference.rows.protected.reqPerSec} | ${reference.rows.unknown.reqPerSec} | ${reference.start.medianMs} ms | ${reference.rssMb} MB |`,
      ...PEERS.map((p) => `| ${p.name} | ${p.token} | ${p.protected} | ${p.unknown} | ${p.startMs} ms | ${p.rssMb} MB |`),
    ]
  : [];
const peerRow = (name, r, startMs, rss) =>
  `| ${name} | ${PEER_KEYS.map((k) => r[k].reqPerSec).join(" | ")} | ${startMs} ms | ${rss} MB | ${PEER_KEYS.reduce((n, k) => n + r[k].errors, 0)} |`;
// Measured in this run (BENCH_PEERS=1): replaces the figures typed in from issue 5.
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
  `Measured ${results.date.slice(0, 10)} on ${machine}; ${LOADGEN}, 10 connections, ${DURATION} s per run, loopback.`,
  "",
  "| endpoint | sandbox req/s | reference req/s | ratio | sandbox p50 / p99 ms | CPU µs/req sandbox / reference | errors |",
  "|---|---|---|---|---|---|---|",
  row("token exchange", "token"),
  row("protected call", "protected"),
  row("protected call, logging off (`--log-format off`)", "protected", "protected", quiet),
  row(`protected call, ${ROTATION_TOKENS.toLocaleString("en")} distinct tokens in rotation (cache miss)`, "rotation"),
  row("payment/init", "init"),
  row("unknown path", "unknown"),
  row("protected call, session base URL, no event stream", "session", "protected"),
  row("protected call, session base URL, 1 event stream open (a QA page)", "sessionStream", "protected"),
  "",
  `The sandbox runs with its defaults, the text request log on (read and dropped by the bench); the logging-off row is a second server with \`--log-format off\`: the log costs ${logCostPct} % of the protected call's req/s. The rotation row cycles through ${ROTATION_TOKENS.toLocaleString("en")} tokens from the token exchange, on both servers (the reference verifies every request).`,
  "",
  `The session rows: \`/s/<id>/api/v2/payment/p_1\` with that session's token, against the reference's protected call; the stream (\`GET /__sandbox/events?session=<id>\`) was read and discarded by the bench process (${sandbox.stream.bytes} bytes${sandbox.stream.endedEarly ? ", and it overflowed before the run ended" : ""}).`,
  "",
  `| | sandbox | reference |`,
  `|---|---|---|`,
  `| start → first 200 (median of 7) | ${sandbox.start.medianMs} ms | ${reference.start.medianMs} ms |`,
  `| RSS after load | ${sandbox.rssMb} MB | ${reference.rssMb} MB |`,
  ...(hs
    ? [
        `| HS256 token exchange | ${hs.sandbox.rows.token.reqPerSec} req/s | ${hs.reference.rows.token.reqPerSec} req/s |`,
        `| HS256 protected call | ${hs.sandbox.rows.protected.reqPerSec} req/s | ${hs.reference.rows.protected.reqPerSec} req/s |`,
      ]
    : []),
  "",
  "As load grows (sandbox):",
  "",
  "| endpoint | connections | req/s | p50 ms | p99 ms | errors |",
  "|---|---|---|---|---|---|",
  ...["token", "protected"].flatMap((k) => [1, 10, 50].map((c) => scaleRow(k, c))),
  "",
  `Cost growth (sandbox, protected call at 10 connections, ${GROWTH_DURATION} s per point, RSS after the point's load; ${growth.seconds} s in all). Sessions are live ones from POST /__sandbox/sessions (\`--max-sessions 5000\`); tokens are distinct ones from the token exchange in rotation; scenarios are \`--scenario\` for every library scenario; each journal is filled before its point:`,
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

mkdirSync(`${ROOT}/bench/results`, { recursive: true });
writeFileSync(`${ROOT}/bench/results/latest.json`, JSON.stringify(results, null, 2) + "\n");
writeFileSync(`${ROOT}/bench/results/latest.md`, md);
process.stdout.write(md + `\n(bench took ${results.benchSeconds} s; written to bench/results/latest.{json,md})\n`);
process.exit(0);
