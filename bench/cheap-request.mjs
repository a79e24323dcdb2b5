// npm run bench:cheap-request: where a cheap request's CPU goes (issue 35), in one run on this
// machine. The unknown path (GET /nope, a 404) is loaded on six servers taking turns, the first
// being the floor the others are read against:
//   1. bare node:http, a fixed ~30-byte answer (the floor)
//   2. bare node:http, a fixed answer with the sandbox's own 404 bytes and headers
//   3. bare node:http handing each request to the library's sandbox.handle() (timed per call, with
//      V8's garbage collections during the load)
//   4. the library's startServer (node-http.ts), no request log (bench/profile-target.mjs)
//   5. the CLI with --log-format off
//   6. the CLI with its defaults (the text log, read and dropped by this process)
// and sandbox.handle() is timed in this process too, in a loop with nothing else running, for the
// unknown path and payment/init. Loopback only; about a minute. Writes
// bench/results/cheap-request.{json,md}.
import { ROOT, machineDescription, writeRecordedRun } from "./support.mjs";
import { LOADGEN, load, median, progress, startServer, stopServer } from "./harness.mjs";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ROUND_SECONDS = Number(process.env.BENCH_ROUND_SECONDS ?? 2);
const LOOP_CALLS = 100_000;
const UNKNOWN = { key: "unknown", label: "unknown path", path: "/nope", request: {}, expect4xx: true };

const { createSandbox } = await import(`${ROOT}dist/index.js`);

/** CPU µs per call of sandbox.handle(request) in a loop in this process: the median of 3 loops. */
async function loopCost(sandbox, request) {
  for (let i = 0; i < LOOP_CALLS / 5; i++) await sandbox.handle(request);
  const loops = [];
  for (let round = 0; round < 3; round++) {
    const before = process.cpuUsage();
    for (let i = 0; i < LOOP_CALLS; i++) await sandbox.handle(request);
    const used = process.cpuUsage(before);
    loops.push((used.user + used.system) / LOOP_CALLS);
  }
  return Math.round(median(loops) * 10) / 10;
}

progress("in-process loops");
const sandbox = await createSandbox();
await sandbox.ready;
const notFound = { method: "GET", path: "/nope", query: "", headers: { host: "127.0.0.1" }, body: new Uint8Array() };
const init = {
  method: "POST",
  path: "/api/v2/payment/init",
  query: "",
  headers: { host: "127.0.0.1", authorization: "Bearer sandbox-payment-token", "content-type": "application/json" },
  body: new TextEncoder().encode("{}"),
};
const answer404 = await sandbox.handle(notFound);
const loop = { unknown: await loopCost(sandbox, notFound), init: await loopCost(sandbox, init) };

const SERVERS = [
  { key: "bare", label: "bare node:http, a fixed ~30-byte answer", args: ["bench/cheap-request-server.mjs"], env: { BARE: "small" } },
  {
    key: "same",
    label: "bare node:http, a fixed answer of the sandbox's 404 bytes",
    args: ["bench/cheap-request-server.mjs"],
    env: { BARE: "same", ANSWER: JSON.stringify({ status: answer404.status, headers: answer404.headers, body: answer404.body }) },
  },
  { key: "handle", label: "bare node:http calling sandbox.handle()", args: ["bench/cheap-request-server.mjs"], env: { BARE: "handle", BUILD: ROOT } },
  { key: "library", label: "the library's startServer, no log", args: ["bench/profile-target.mjs", ROOT] },
  {
    key: "logOff",
    label: "the CLI, --log-format off",
    args: ["--max-semi-space-size=2", "dist/bin/main.js", "serve", "--port", "0", "--log-format", "off"],
  },
  { key: "cli", label: "the CLI, its defaults (text log)", args: ["--max-semi-space-size=2", "dist/bin/main.js", "serve", "--port", "0"] },
];

const started = [];
for (const s of SERVERS) started.push({ ...s, server: await startServer(s.key, s.args, s.env) });
const timingsOf = async (url) => (await fetch(`${url}/__bench/timings`)).json();
const handleServer = started.find((s) => s.key === "handle").server;
const timingsBefore = await timingsOf(handleServer.url);
const rounds = new Map(started.map((s) => [s.key, []]));
for (let round = 0; round < ROUNDS; round++) {
  progress(`round ${round + 1} of ${ROUNDS}: ${ROUND_SECONDS} s per server`);
  for (const s of started) rounds.get(s.key).push(await load(s.server, UNKNOWN, 10, ROUND_SECONDS));
}
const timingsAfter = await timingsOf(handleServer.url);
for (const s of started) await stopServer(s.server);

const handled = timingsAfter.requests - timingsBefore.requests;
const underLoad = {
  requests: handled,
  handleUs: Math.round(((timingsAfter.handleMs - timingsBefore.handleMs) * 10_000) / handled) / 10,
  gcUs: Math.round(((timingsAfter.gcMs - timingsBefore.gcMs) * 10_000) / handled) / 10,
};
const rows = started.map((s) => {
  const r = rounds.get(s.key);
  const ratio = (pick) => Math.round(median(r.map((x, i) => pick(x) / pick(rounds.get("bare")[i]))) * 100) / 100;
  return {
    key: s.key,
    label: s.label,
    reqPerSec: median(r.map((x) => x.reqPerSec)),
    cpuUsPerReq: median(r.map((x) => x.cpuUsPerReq)),
    reqPerSecRatio: ratio((x) => x.reqPerSec),
    cpuRatio: ratio((x) => x.cpuUsPerReq),
    errors: r.reduce((n, x) => n + x.errors, 0),
  };
});

const date = new Date().toISOString();
const machine = machineDescription();
const md = [
  `Measured ${date.slice(0, 10)} on ${machine}; ${LOADGEN}, 10 connections, loopback, GET /nope (the sandbox's 404). ${ROUNDS} rounds of ${ROUND_SECONDS} s per server, the servers taking turns; each figure is the median of the rounds, a ratio the median of the rounds' ratios against the first server.`,
  "",
  "| server | req/s | × the bare server's req/s | CPU µs per request | × the bare server's CPU | errors |",
  "|---|---|---|---|---|---|",
  ...rows.map((r) => `| ${r.label} | ${r.reqPerSec} | ${r.reqPerSecRatio}× | ${r.cpuUsPerReq} | ${r.cpuRatio}× | ${r.errors} |`),
  "",
  `sandbox.handle() under that load (server 3): ${underLoad.handleUs} µs of wall time per call, and V8's garbage collections ${underLoad.gcUs} µs per request, over ${handled} requests.`,
  "",
  `sandbox.handle() in a loop of ${LOOP_CALLS} awaited calls in one process, nothing else running (median of 3 loops): ${loop.unknown} µs of CPU per call for the unknown path, ${loop.init} µs for payment/init.`,
  "",
].join("\n");
writeRecordedRun("cheap-request", { date, machine, loadgen: LOADGEN, rounds: ROUNDS, roundSeconds: ROUND_SECONDS, rows, underLoad, loop }, md);
process.stdout.write(md);
