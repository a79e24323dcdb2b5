// npm run bench: the sandbox server, a bare node:http reference doing the same JWT work, and the
// in-process msw mode, measured in one run on this machine. Loopback only, bounded in time
// (BENCH_DURATION seconds per measurement, default 5; about 90 s in all). Writes
// bench/results/latest.{json,md} and prints the sandbox/reference ratio per endpoint.
import autocannon from "autocannon";
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { cpus } from "node:os";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const ALG = process.env.BENCH_ALG ?? "RS256";
const CLK_TCK = 100; // Linux USER_HZ

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

function cpuTicks(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return Number(fields[11]) + Number(fields[12]); // utime + stime
}

function rssMb(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Math.round(Number(m[1]) / 1024);
}

async function load(server, endpoint, connections, duration = DURATION) {
  const before = cpuTicks(server.child.pid);
  const result = await autocannon({ url: server.url + endpoint.path, connections, duration, ...endpoint.request });
  const cpuMs = ((cpuTicks(server.child.pid) - before) * 1000) / CLK_TCK;
  const total = result.requests.total;
  // Every answer should be the expected kind: 2xx, or 404 for the unknown path.
  const expected = endpoint.expect4xx ? result["4xx"] : result["2xx"];
  return {
    reqPerSec: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuUsPerReq: total ? Math.round((cpuMs * 1000) / total) : null,
    errors: result.errors + result.timeouts + (total - expected),
    total,
  };
}

async function tokenFrom(url) {
  const r = await fetch(`${url}/api/v2/auth/token`, { method: "POST", headers: { "content-type": "application/json" }, body: CREDENTIALS });
  return (await r.json()).access_token;
}

function endpoints(token) {
  return [
    { key: "token", label: "token exchange", path: "/api/v2/auth/token", request: { method: "POST", headers: { "content-type": "application/json" }, body: CREDENTIALS } },
    { key: "protected", label: "protected call", path: "/api/v2/payment/p_1", request: { headers: { authorization: `Bearer ${token}` } } },
    { key: "init", label: "payment/init", path: "/api/v2/payment/init", request: { method: "POST", headers: { authorization: "Bearer sandbox-payment-token", "content-type": "application/json" }, body: "{}" } },
    { key: "unknown", label: "unknown path", path: "/nope", request: {}, expect4xx: true },
  ];
}

async function measureServer(name, args, env) {
  const server = await startServer(name, args, env);
  const token = await tokenFrom(server.url);
  await load(server, endpoints(token)[1], 10, 1); // warm-up
  const rows = {};
  for (const ep of endpoints(token)) rows[ep.key] = await load(server, ep, 10);
  const scaling = {};
  for (const c of [1, 10, 50]) scaling[c] = c === 10 ? rows.protected : await load(server, endpoints(token)[1], c);
  const rss = rssMb(server.child.pid);
  server.child.kill("SIGTERM");
  return { name, startMs: Math.round(server.startMs), rssMb: rss, rows, scaling };
}

async function measureInProcess() {
  // The cost of a request through msw's setupServer: the sandbox's handlers against a trivial
  // msw handler answering the same JSON, both in this process, sequential fetches.
  const { setupServer } = await import("msw/node");
  const { http, HttpResponse } = await import("msw");
  const { createSandbox } = await import(`${ROOT}/dist/index.js`);
  const { createMswHandlers } = await import(`${ROOT}/dist/adapters/msw.js`);
  const N = Number(process.env.BENCH_INPROCESS_N ?? 3000);
  const time = async (url, init) => {
    for (let i = 0; i < 200; i++) await fetch(url, init); // warm-up
    const start = process.cpuUsage();
    for (let i = 0; i < N; i++) await (await fetch(url, init)).text();
    const used = process.cpuUsage(start);
    return (used.user + used.system) / N;
  };
  const sandbox = await createSandbox({ algorithm: ALG });
  const server = setupServer(
    ...createMswHandlers(sandbox, { baseUrl: "https://sandbox.bench" }),
    http.get("https://trivial.bench/api/v2/payment/p_1", () => HttpResponse.json({ merchant_id: "m", operation: "GET /api/v2/payment/p_1" })),
  );
  server.listen({ onUnhandledRequest: "error" });
  const token = (await (await fetch("https://sandbox.bench/api/v2/auth/token", { method: "POST", headers: { "content-type": "application/json" }, body: CREDENTIALS })).json()).access_token;
  const sandboxUs = await time("https://sandbox.bench/api/v2/payment/p_1", { headers: { authorization: `Bearer ${token}` } });
  const trivialUs = await time("https://trivial.bench/api/v2/payment/p_1", { headers: { authorization: `Bearer ${token}` } });
  server.close();
  return { sandboxUsPerReq: Math.round(sandboxUs), trivialUsPerReq: Math.round(trivialUs), ratio: +(sandboxUs / trivialUs).toFixed(2) };
}

const started = Date.now();
// Started the way npm start, the bin's shebang and the image start it.
const sandbox = await measureServer("sandbox", ["--max-semi-space-size=2", "dist/bin/main.js", "serve", "--port", "0", "--log-format", "off", "--alg", ALG]);
const reference = await measureServer("reference", ["bench/reference-server.mjs"], { BENCH_ALG: ALG });
const inProcess = await measureInProcess();

const ratio = (k) => +(sandbox.rows[k].reqPerSec / reference.rows[k].reqPerSec).toFixed(2);
const targets = [
  { target: "token exchange ≥ 0.8× reference", value: ratio("token"), ok: ratio("token") >= 0.8 },
  { target: "protected call ≥ 0.8× reference", value: ratio("protected"), ok: ratio("protected") >= 0.8 },
  { target: "unknown path ≥ 0.9× reference", value: ratio("unknown"), ok: ratio("unknown") >= 0.9 },
  { target: "CLI start → first 200 ≤ 250 ms", value: sandbox.startMs, ok: sandbox.startMs <= 250 },
  { target: "RSS after load ≤ 110 MB", value: sandbox.rssMb, ok: sandbox.rssMb <= 110 },
  { target: "p99 ≤ 5 ms, protected, 10 connections", value: sandbox.rows.protected.p99, ok: sandbox.rows.protected.p99 <= 5 },
  { target: "in-process ≤ 1.25× a trivial msw handler", value: inProcess.ratio, ok: inProcess.ratio <= 1.25 },
];
const machine = `${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}, ${ALG}`;
const results = { date: new Date().toISOString(), machine, durationPerRunS: DURATION, sandbox, reference, inProcess, targets, benchSeconds: Math.round((Date.now() - started) / 1000) };

const row = (label, k) =>
  `| ${label} | ${sandbox.rows[k].reqPerSec} | ${reference.rows[k].reqPerSec} | ${ratio(k)}× | ${sandbox.rows[k].p50} / ${sandbox.rows[k].p99} | ${sandbox.rows[k].cpuUsPerReq} / ${reference.rows[k].cpuUsPerReq} |`;
const md = [
  `Measured ${results.date.slice(0, 10)} on ${machine}; autocannon, 10 connections, ${DURATION} s per run, loopback.`,
  "",
  "| endpoint | sandbox req/s | reference req/s | ratio | sandbox p50 / p99 ms | CPU µs/req sandbox / reference |",
  "|---|---|---|---|---|---|",
  row("token exchange", "token"),
  row("protected call", "protected"),
  row("payment/init", "init"),
  row("unknown path", "unknown"),
  "",
  `| | sandbox | reference |`,
  `|---|---|---|`,
  `| start → first 200 | ${sandbox.startMs} ms | ${reference.startMs} ms |`,
  `| RSS after load | ${sandbox.rssMb} MB | ${reference.rssMb} MB |`,
  "",
  "Protected call as load grows (sandbox): " + [1, 10, 50].map((c) => `${c} conn: ${sandbox.scaling[c].reqPerSec} req/s, p99 ${sandbox.scaling[c].p99} ms`).join("; ") + ".",
  "",
  `In-process (msw setupServer): ${inProcess.sandboxUsPerReq} µs CPU per request against ${inProcess.trivialUsPerReq} µs for a trivial msw handler (${inProcess.ratio}×).`,
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
