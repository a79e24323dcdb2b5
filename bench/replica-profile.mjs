// npm run bench:replica-profile: where a replica's event-loop thread spends its time on the
// protected call, with its state in memory and on Redis, for each build named (default: this
// one). PROFILE_BUILDS="before=/path/to/an/older/checkout,now=." compares builds in one run (each
// built with `npm run build`). Each configuration runs bench/profile-target.mjs under
// `node --cpu-prof`, loaded by wrk (or autocannon) at 10 connections for BENCH_DURATION seconds
// (default 6); the profile's samples are sorted by the module of the function they fell in.
// Writes bench/results/replica-profile.{json,md}. Needs redis-server for the Redis rows.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { missingProgram, REDIS_SERVER, startRedis } from "./cluster-processes.mjs";
import { endpoints, LOADGEN, load, progress, startServer, stopServer, tokenFrom } from "./harness.mjs";
import { machineDescription, ROOT, writeRecordedRun } from "./support.mjs";

const DURATION = Number(process.env.BENCH_DURATION ?? 6);
const CONNECTIONS = 10;
const BUILDS = (process.env.PROFILE_BUILDS ?? "this build=.").split(",").map((pair) => {
  const [label, dir] = pair.split("=");
  return { label, dir: resolve(ROOT, dir) };
});

/** Where a sample's function lives, as the table names it. */
function categoryOf(frame) {
  const { url, functionName } = frame;
  if (functionName === "(idle)") return "idle (waiting for the network)";
  if (functionName === "(garbage collector)") return "garbage collection";
  if (/\/node_modules\/(ioredis|redis-parser|redis-errors|denque|standard-as-callback|cluster-key-slot)\//.test(url))
    return "the Redis client (ioredis)";
  if (url.includes("/node_modules/")) return "other libraries";
  if (url.includes("/dist/store/")) return "our store code (store/)";
  if (url.includes("/dist/app/shared/")) return "our shared-state code (app/shared/)";
  if (url.includes("/dist/")) return "the sandbox's own work (pipeline, tokens, answers)";
  if (url.startsWith("node:")) return "Node's JavaScript (http, net, streams)";
  if (/^write(v|Utf8String|Buffer|Latin1String)$/.test(functionName)) return "socket writes (system calls)";
  return "V8 and native code (builtins, crypto, timers)";
}

function summarize(file, requests) {
  const profile = JSON.parse(readFileSync(file, "utf8"));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const us = {};
  profile.samples.forEach((id, i) => {
    const category = categoryOf(byId.get(id).callFrame);
    us[category] = (us[category] ?? 0) + (profile.timeDeltas[i] ?? 0);
  });
  return Object.fromEntries(Object.entries(us).map(([c, t]) => [c, +(t / requests).toFixed(1)]));
}

async function profileOne(build, redisUrl) {
  const dir = mkdtempSync(join(tmpdir(), "replica-profile-"));
  const args = [
    "--max-semi-space-size=2",
    "--cpu-prof",
    `--cpu-prof-dir=${dir}`,
    join(ROOT, "bench/profile-target.mjs"),
    build.dir,
    ...(redisUrl ? [redisUrl] : []),
  ];
  const server = await startServer(`${build.label}, ${redisUrl ? "redis" : "memory"}`, args);
  try {
    const protectedCall = endpoints(await tokenFrom(server.url)).find((e) => e.key === "protected");
    await load(server, protectedCall, CONNECTIONS, 1);
    const measured = await load(server, protectedCall, CONNECTIONS, DURATION);
    await stopServer(server);
    const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
    // The warm-up's requests are in the profile too: counted with the measured ones.
    const requests = measured.total + Math.round(measured.reqPerSec);
    return { reqPerSec: measured.reqPerSec, p99: measured.p99, usPerRequest: summarize(join(dir, file), requests) };
  } finally {
    await stopServer(server).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

const noRedis = missingProgram(REDIS_SERVER);
if (noRedis) process.stderr.write(`bench:replica-profile: skipping the Redis rows: ${noRedis}\n`);
const runs = [];
for (const build of BUILDS) {
  progress(`${build.label}: memory store`);
  runs.push({ build: build.label, store: "memory", ...(await profileOne(build)) });
  if (noRedis) continue;
  const redis = await startRedis();
  try {
    progress(`${build.label}: Redis store`);
    runs.push({ build: build.label, store: "redis", ...(await profileOne(build, redis.url)) });
  } finally {
    await redis.stop();
  }
}

const categories = [...new Set(runs.flatMap((r) => Object.keys(r.usPerRequest)))].sort(
  (a, b) => Math.max(...runs.map((r) => r.usPerRequest[b] ?? 0)) - Math.max(...runs.map((r) => r.usPerRequest[a] ?? 0)),
);
const head = runs.map((r) => `${r.build}, ${r.store}`);
const busy = (r) => Object.entries(r.usPerRequest).reduce((sum, [c, v]) => (c.startsWith("idle") ? sum : sum + v), 0);
const md = [
  `Measured ${new Date().toISOString().slice(0, 10)} on ${machineDescription()}; ${LOADGEN}, ${CONNECTIONS} connections, ${DURATION} s per configuration, the protected call; \`npm run bench:replica-profile\`. Each figure is the event-loop thread's time per request, in µs, by where the profiler found it (V8's sampling profiler: a thread the OS took the core from keeps its samples in the function it was in).`,
  "",
  `| where | ${head.join(" | ")} |`,
  `|---|${head.map(() => "---|").join("")}`,
  ...categories.map((c) => `| ${c} | ${runs.map((r) => (r.usPerRequest[c] ?? 0).toFixed(1)).join(" | ")} |`),
  `| **busy, idle left out** | ${runs.map((r) => `**${busy(r).toFixed(1)}**`).join(" | ")} |`,
  `| req/s under the profiler | ${runs.map((r) => Math.round(r.reqPerSec)).join(" | ")} |`,
  "",
].join("\n");
writeRecordedRun("replica-profile", { measuredAt: new Date().toISOString(), machine: machineDescription(), runs }, md);
process.stdout.write(md);
