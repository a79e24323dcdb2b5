// npm run bench: the sandbox server, a bare node:http reference doing the same JWT work, and the
// in-process msw mode, measured in one run on this machine. Loopback only, bounded in time
// (BENCH_DURATION seconds per measurement, default 5; about 2 minutes in all). Writes
// bench/results/latest.{json,md} and prints the sandbox/reference ratio per endpoint.
import autocannon from "autocannon";
import { execFile, execFileSync, spawn } from "node:child_process";
import { promisify } from "node:util";
import { readFileSync, writeFileSync, mkdirSync, mkdtempSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, rssKb } from "./support.mjs";

const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const ALG = process.env.BENCH_ALG ?? "RS256";
const CLK_TCK = 100; // Linux USER_HZ
// wrk (C, one thread) where installed: it leaves the server more of a 2-core machine than
// autocannon (Node) does, and it is what the reference figures were measured with.
const LOADGEN = process.env.BENCH_LOADGEN ?? (hasWrk() ? "wrk" : "autocannon");

function hasWrk() {
  try {
    execFileSync("wrk", ["--version"], { stdio: "ignore" });
    return true;
  } catch (e) {
    return e.status === 1; // wrk --version prints its usage and exits 1
  }
}

const CREDENTIALS = JSON.stringify({ api_key: "sandbox-api-key", api_secret: "sandbox-api-secret" });

async function startServer(name, args, env = {}) {
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  const url = await new Promise((resolve, reject) => {
    child.stdout.on("data", (d) => {
      out += d;
      const m = /listening on (http:\/\/[^\s"]+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on("exit", (code) => reject(new Error(`${name} exited with ${code}`)));
  });
  // Start → first 200 on the health endpoint, as a CI job waiting for the container would see it.
  for (;;) {
    try {
      const r = await fetch(`${url}/__sandbox/health`);
      if (r.status === 200) break;
    } catch {}
    await new Promise((r) => setTimeout(r, 2));
  }
  const startMs = performance.now() - started;
  child.stdout.resume();
  return { name, child, url, startMs };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1];
}

function cpuTicks(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return Number(fields[11]) + Number(fields[12]); // utime + stime
}

function rssMb(pid) {
  return Math.round(rssKb(pid) / 1024);
}

async function load(server, endpoint, connections, duration = DURATION) {
  const before = cpuTicks(server.child.pid);
  const result =
    LOADGEN === "wrk"
      ? await wrk(server.url + endpoint.path, endpoint.request, connections, duration)
      : await autocannonRun(server.url + endpoint.path, endpoint.request, connections, duration);
  const cpuMs = ((cpuTicks(server.child.pid) - before) * 1000) / CLK_TCK;
  // Every answer should be the expected kind: 2xx, or 404 for the unknown path.
  const unexpected = endpoint.expect4xx ? result.total - result.non2xx : result.non2xx;
  return {
    reqPerSec: Math.round(result.reqPerSec),
    p50: result.p50,
    p99: result.p99,
    cpuUsPerReq: result.total ? Math.round((cpuMs * 1000) / result.total) : null,
    errors: result.errors + unexpected,
    total: result.total,
  };
}

async function autocannonRun(url, request, connections, duration) {
  const r = await autocannon({ url, connections, duration, ...request });
  return {
    reqPerSec: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    total: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
  };
}

const execFileAsync = promisify(execFile);
const wrkDir = mkdtempSync(join(tmpdir(), "bench-wrk-"));

/**
 * One wrk run. Not execFileSync: this process must keep reading while wrk loads the server (the
 * event stream the session rows hold open, as a QA page does), or the stream stalls and the
 * sandbox closes it as a client that fell behind.
 */
async function wrk(url, request = {}, connections, duration) {
  const script = join(wrkDir, "request.lua");
  const headers = Object.entries(request.headers ?? {}).map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`);
  writeFileSync(
    script,
    [
      `wrk.method = ${JSON.stringify(request.method ?? "GET")}`,
      ...(request.body ? [`wrk.body = ${JSON.stringify(request.body)}`] : []),
      ...headers,
    ].join("\n") + "\n",
  );
  const { stdout: out } = await execFileAsync("wrk", ["-t1", `-c${connections}`, `-d${duration}s`, "--latency", "-s", script, url], {
    encoding: "utf8",
  });
  const ms = (text) => {
    const m = /([\d.]+)(us|ms|s)/.exec(text);
    return m ? +(Number(m[1]) * { us: 0.001, ms: 1, s: 1000 }[m[2]]).toFixed(2) : null;
  };
  const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    reqPerSec: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)[1]),
    p50: ms(/\s50%\s+(\S+)/.exec(out)[1]),
    p99: ms(/\s99%\s+(\S+)/.exec(out)[1]),
    total: Number(/(\d+) requests in/.exec(out)[1]),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
    errors: errors ? errors.slice(1).reduce((a, b) => a + Number(b), 0) : 0,
  };
}

async function tokenFrom(url) {
  const r = await fetch(`${url}/api/v2/auth/token`, { method: "POST", headers: { "content-type": "application/json" }, body: CREDENTIALS });
  return (await r.json()).access_token;
}

function endpoints(token) {
  return [
    {
      key: "token",
      label: "token exchange",
      path: "/api/v2/auth/token",
      request: { method: "POST", headers: { "content-type": "application/json" }, body: CREDENTIALS },
    },
    { key: "protected", label: "protected call", path: "/api/v2/payment/p_1", request: { headers: { authorization: `Bearer ${token}` } } },
    {
      key: "init",
      label: "payment/init",
      path: "/api/v2/payment/init",
      request: { method: "POST", headers: { authorization: "Bearer sandbox-payment-token", "content-type": "application/json" }, body: "{}" },
    },
    { key: "unknown", label: "unknown path", path: "/nope", request: {}, expect4xx: true },
  ];
}

/**
 * An event stream of one session (GET /__sandbox/events?session=), as an open QA page holds it:
 * read and discarded by this process. `ended` says whether the sandbox closed it before we did
 * (an overflow: the client fell a buffer behind), which would leave part of a run without it.
 */
async function openEventStream(url) {
  const controller = new AbortController();
  const res = await fetch(url, { signal: controller.signal });
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${await res.text()}`);
  const reader = res.body.getReader();
  const state = { bytes: 0, ended: false, closing: false };
  const reading = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        state.bytes += value.length;
      }
    } catch {}
    if (!state.closing) state.ended = true;
  })();
  return {
    state,
    async close() {
      state.closing = true;
      controller.abort();
      await reading;
    },
  };
}

/**
 * fetch, once more if the first try met a socket the server had already closed: this process's
 * pooled keep-alive connection from the start-up health checks sits idle through the loads before,
 * past the server's keep-alive timeout, and undici may pick it just as it closes.
 */
async function fetchFresh(url, init) {
  try {
    return await fetch(url, init);
  } catch (e) {
    if (e?.cause?.code !== "UND_ERR_SOCKET") throw e;
    return fetch(url, init);
  }
}

/**
 * The protected call under a session's base URL (`/s/<id>/api/v2/payment/…` with that session's
 * token), as an integration configured with `base_url` sends it: with no event stream open, then
 * with one stream of that session open (an open QA page), which journals each request to the
 * stream and recomputes the session's findings.
 */
async function measureSessionRows(server) {
  const created = await fetchFresh(`${server.url}/__sandbox/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  if (created.status !== 201) throw new Error(`POST /__sandbox/sessions answered ${created.status}: ${await created.text()}`);
  const session = await created.json();
  const base = `/s/${session.id}`;
  const exchanged = await fetchFresh(`${server.url}${base}/api/v2/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ api_key: session.merchant.api_key, api_secret: session.merchant.api_secret }),
  });
  const token = (await exchanged.json()).access_token;
  const call = { path: `${base}/api/v2/payment/p_1`, request: { headers: { authorization: `Bearer ${token}` } } };
  const rows = { session: await load(server, call, 10) };
  const stream = await openEventStream(`${server.url}/__sandbox/events?session=${session.id}`);
  rows.sessionStream = await load(server, call, 10);
  // Let the reader take what arrived in the last moments before asking whether the stream ended.
  await new Promise((r) => setTimeout(r, 100));
  const streamEndedEarly = stream.state.ended;
  await stream.close();
  // An overflowed stream measured part of the run without a page: counted as an error of the row.
  if (streamEndedEarly) rows.sessionStream.errors += 1;
  return { rows, stream: { bytes: stream.state.bytes, endedEarly: streamEndedEarly } };
}

/**
 * Loads one server: every endpoint at 10 connections (or only `keys`), then, with `scale`, the
 * token exchange and the protected call at 1 and 50 connections too, and with `session` the
 * protected call under a session's base URL without and with an event stream open. RSS is read
 * after the load.
 */
async function measureServer(name, args, env, { keys, scale = false, session = false } = {}) {
  const server = await startServer(name, args, env);
  const token = await tokenFrom(server.url);
  const list = endpoints(token).filter((ep) => !keys || keys.includes(ep.key));
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
  server.child.kill("SIGTERM");
  await new Promise((resolve) => server.child.once("exit", resolve));
  return { name, rssMb: rss, rows, scaling, ...(stream && { stream }) };
}

/** Start → first 200, the median of several starts (one start on a shared machine is a lottery). */
async function measureStart(name, args, env, times = 7) {
  const samples = [];
  for (let i = 0; i < times; i++) {
    const server = await startServer(name, args, env);
    samples.push(server.startMs);
    server.child.kill("SIGTERM");
    await new Promise((resolve) => server.child.once("exit", resolve));
  }
  return { medianMs: Math.round(median(samples)), samplesMs: samples.map(Math.round) };
}

async function measureInProcess() {
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

const started = Date.now();
// Started the way npm start, the bin's shebang and the image start it.
const sandboxArgs = (alg) => ["--max-semi-space-size=2", "dist/bin/main.js", "serve", "--port", "0", "--log-format", "off", "--alg", alg];
const sandbox = await measureServer("sandbox", sandboxArgs(ALG), {}, { scale: true, session: true });
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

// The session rows have no reference of their own: the bare reference's protected call does the same JWT work.
const ratio = (k, ref = k) => +(sandbox.rows[k].reqPerSec / reference.rows[ref].reqPerSec).toFixed(2);
const targets = [
  { target: "token exchange ≥ 0.8× reference", value: ratio("token"), ok: ratio("token") >= 0.8 },
  { target: "protected call ≥ 0.8× reference", value: ratio("protected"), ok: ratio("protected") >= 0.8 },
  { target: "unknown path ≥ 0.9× reference", value: ratio("unknown"), ok: ratio("unknown") >= 0.9 },
  { target: "CLI start → first 200 ≤ 250 ms (median of 7)", value: sandbox.start.medianMs, ok: sandbox.start.medianMs <= 250 },
  { target: "RSS after load ≤ 110 MB", value: sandbox.rssMb, ok: sandbox.rssMb <= 110 },
  { target: "p99 ≤ 5 ms, protected, 10 connections", value: sandbox.rows.protected.p99, ok: sandbox.rows.protected.p99 <= 5 },
  { target: "in-process ≤ 1.25× a trivial msw handler", value: inProcess.ratio, ok: inProcess.ratio <= 1.25 },
  {
    target: "no errors and no unexpected statuses",
    value: Object.values(sandbox.rows).reduce((n, r) => n + r.errors, 0),
    ok: Object.values(sandbox.rows).every((r) => r.errors === 0),
  },
];
const machine = `${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}, ${ALG}`;
const results = {
  date: new Date().toISOString(),
  machine,
  loadGenerator: LOADGEN,
  durationPerRunS: DURATION,
  sandbox,
  reference,
  hs256: hs,
  inProcess,
  targets,
  benchSeconds: Math.round((Date.now() - started) / 1000),
};

const row = (label, k, ref = k) =>
  `| ${label} | ${sandbox.rows[k].reqPerSec} | ${reference.rows[ref].reqPerSec} | ${ratio(k, ref)}× | ${sandbox.rows[k].p50} / ${sandbox.rows[k].p99} | ${sandbox.rows[k].cpuUsPerReq} / ${reference.rows[ref].cpuUsPerReq} | ${sandbox.rows[k].errors} |`;
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
const scaleRow = (key, c) =>
  `| ${key === "token" ? "token exchange" : "protected call"} | ${c} | ${sandbox.scaling[key][c].reqPerSec} | ${sandbox.scaling[key][c].p50} | ${sandbox.scaling[key][c].p99} | ${sandbox.scaling[key][c].errors} |`;
const md = [
  `Measured ${results.date.slice(0, 10)} on ${machine}; ${LOADGEN}, 10 connections, ${DURATION} s per run, loopback.`,
  "",
  "| endpoint | sandbox req/s | reference req/s | ratio | sandbox p50 / p99 ms | CPU µs/req sandbox / reference | errors |",
  "|---|---|---|---|---|---|---|",
  row("token exchange", "token"),
  row("protected call", "protected"),
  row("payment/init", "init"),
  row("unknown path", "unknown"),
  row("protected call, session base URL, no event stream", "session", "protected"),
  row("protected call, session base URL, 1 event stream open (a QA page)", "sessionStream", "protected"),
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
  `In-process (msw setupServer): ${inProcess.sandboxUsPerReq} µs CPU per request against ${inProcess.trivialUsPerReq} µs for a trivial msw handler (${inProcess.ratio}×, median of ${inProcess.roundRatios.length} alternating rounds).`,
  ...peerTable,
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
