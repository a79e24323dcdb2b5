// npm run bench:cluster: what sharing the state through Redis costs, in one run on this machine.
// The token exchange, the protected call and payment/init, at 10 connections, against the sandbox
// with its default in-memory store, one replica with the Redis store (`--state redis://…`), that
// replica behind haproxy, and two replicas behind haproxy (round-robin, no stickiness), all
// sharing one redis-server. The configurations take turns, BENCH_ROUNDS rounds (default 5) of
// BENCH_DURATION / BENCH_ROUNDS seconds each (BENCH_DURATION default 10). Writes
// bench/results/cluster.{json,md}; `npm run docs` copies the table into docs/deployment.md.
// Without redis-server (or haproxy) the rows needing it are skipped, with a line saying so.
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { HAPROXY, REDIS_SERVER, missingProgram, redisCommandCalls, startHaproxy, startRedis } from "./cluster-processes.mjs";
import { CLK_TCK, LOADGEN, cpuTicks, endpoints, load, median, progress, startServer, stopServer, tokenFrom } from "./harness.mjs";
import { writeRecordedRun } from "./support.mjs";

const ALG = process.env.BENCH_ALG ?? "RS256";
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ROUND_SECONDS = Math.max(1, Math.round(DURATION / ROUNDS));
const CONNECTIONS = 10;
const KEYS = ["protected", "token", "init"];
const LABELS = { protected: "protected call", token: "token exchange", init: "payment/init" };
/** One replica on the Redis store against the memory store, in the same run: the shared-state issue's targets. */
const REDIS_TARGETS = { protected: 0.75, token: 0.9, init: 0.75 };

// Started as run.mjs starts the sandbox: the server's defaults, the text request log on.
const sandboxArgs = (extra = []) => ["--max-semi-space-size=2", "dist/bin/main.js", "serve", "--port", "0", "--alg", ALG, ...extra];

/** The machine's busy and total CPU ticks, every core and every process (/proc/stat's first line). */
function machineTicks() {
  const [, ...fields] = readFileSync("/proc/stat", "utf8").split("\n", 1)[0].trim().split(/\s+/).map(Number);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = fields;
  const busy = user + nice + system + irq + softirq + steal;
  return { busy, total: busy + idle + iowait };
}

/**
 * One load of a configuration: the harness's figures, the CPU per request of each kind of process
 * it runs (sandbox replicas, redis-server, haproxy; the load generator is not counted), how busy
 * the whole machine was (every process, the load generator included) while it ran, and with Redis
 * the store's calls per request: scripts (a sync or a commit each) and blocking feed reads.
 */
async function measure(config, endpoint, seconds) {
  const callsBefore = config.redisPort && (await redisCommandCalls(config.redisPort));
  const before = config.parts.map((p) => cpuTicks(p.pid));
  const machineBefore = machineTicks();
  const r = await load({ url: config.url, child: { pid: config.parts[0].pid } }, endpoint, CONNECTIONS, seconds);
  const machineAfter = machineTicks();
  const callsAfter = config.redisPort && (await redisCommandCalls(config.redisPort));
  const callsPerRequest = (name) => +(((callsAfter[name] ?? 0) - (callsBefore[name] ?? 0)) / r.total).toFixed(2);
  const cpuUsByRole = {};
  config.parts.forEach((p, i) => {
    const us = ((cpuTicks(p.pid) - before[i]) * 1e6) / CLK_TCK;
    cpuUsByRole[p.role] = (cpuUsByRole[p.role] ?? 0) + us;
  });
  const perRequest = (us) => (r.total ? Math.round(us / r.total) : null);
  const byRole = Object.fromEntries(Object.entries(cpuUsByRole).map(([role, us]) => [role, perRequest(us)]));
  return {
    ...r,
    cpuUsPerReq: perRequest(Object.values(cpuUsByRole).reduce((a, b) => a + b, 0)),
    cpuUsPerReqByRole: byRole,
    machineBusyPct: Math.round((100 * (machineAfter.busy - machineBefore.busy)) / (machineAfter.total - machineBefore.total)),
    ...(callsBefore && r.total && { storeCallsPerReq: { scripts: callsPerRequest("evalsha"), feedReads: callsPerRequest("xread") } }),
  };
}

/** One row from its rounds: the median of each figure, errors and requests summed, each round's req/s kept. */
function fromRounds(rounds) {
  const med = (pick) => median(rounds.map(pick));
  const roles = Object.keys(rounds[0].cpuUsPerReqByRole);
  return {
    reqPerSec: med((r) => r.reqPerSec),
    p50: med((r) => r.p50),
    p99: med((r) => r.p99),
    cpuUsPerReq: med((r) => r.cpuUsPerReq),
    cpuUsPerReqByRole: Object.fromEntries(roles.map((role) => [role, med((r) => r.cpuUsPerReqByRole[role])])),
    machineBusyPct: med((r) => r.machineBusyPct),
    ...(rounds[0].storeCallsPerReq && {
      storeCallsPerReq: { scripts: med((r) => r.storeCallsPerReq.scripts), feedReads: med((r) => r.storeCallsPerReq.feedReads) },
    }),
    errors: rounds.reduce((n, r) => n + r.errors, 0),
    total: rounds.reduce((n, r) => n + r.total, 0),
    rounds: rounds.map((r) => r.reqPerSec),
  };
}

/** The median of the rounds' ratios: each round's pair met the same moment of the machine. */
function rowRatio(row, against) {
  return +median(row.rounds.map((r, i) => r / against.rounds[i])).toFixed(2);
}

/** The processes of the run, started in order, each stopped by its PID in `stops` (last first). */
async function startEverything(stops, skipped) {
  const configs = [];
  progress("memory store: starting");
  const memory = await startServer("memory store", sandboxArgs());
  stops.push(() => stopServer(memory));
  configs.push({
    key: "memory",
    label: "memory store (the default), one process",
    url: memory.url,
    parts: [{ role: "sandbox", pid: memory.child.pid }],
  });
  if (skipped.redis) return configs;

  progress("redis-server: starting");
  const redis = await startRedis();
  stops.push(() => redis.stop());
  const replica = async (name) => {
    progress(`${name}: starting`);
    const server = await startServer(name, sandboxArgs(["--state", redis.url]));
    stops.push(() => stopServer(server));
    return server;
  };
  const a = await replica("replica a");
  const redisPart = { role: "redis", pid: redis.pid };
  configs.push({
    key: "redis",
    label: "Redis store, one replica",
    url: a.url,
    parts: [{ role: "sandbox", pid: a.child.pid }, redisPart],
    redisPort: redis.port,
  });
  if (skipped.haproxy) return configs;

  const b = await replica("replica b");
  const port = (server) => Number(new URL(server.url).port);
  progress("haproxy: starting, in front of one replica and of two");
  const one = await startHaproxy([{ name: "a", port: port(a) }]);
  stops.push(() => one.stop());
  const two = await startHaproxy([
    { name: "a", port: port(a) },
    { name: "b", port: port(b) },
  ]);
  stops.push(() => two.stop());
  configs.push({
    key: "haproxy1",
    label: "Redis store, one replica behind haproxy",
    url: one.url,
    parts: [{ role: "sandbox", pid: a.child.pid }, redisPart, { role: "haproxy", pid: one.pid }],
    redisPort: redis.port,
  });
  configs.push({
    key: "haproxy2",
    label: "Redis store, two replicas behind haproxy",
    url: two.url,
    parts: [{ role: "sandbox", pid: a.child.pid }, { role: "sandbox", pid: b.child.pid }, redisPart, { role: "haproxy", pid: two.pid }],
    redisPort: redis.port,
  });
  return configs;
}

const started = Date.now();
const skipped = {
  redis: missingProgram(REDIS_SERVER),
  haproxy: missingProgram(HAPROXY),
};
for (const why of Object.values(skipped)) if (why) process.stderr.write(`bench:cluster: skipping rows: ${why}\n`);

const stops = [];
const results = { configs: {} };
try {
  const configs = await startEverything(stops, skipped);
  for (const config of configs) {
    progress(`${config.label}: a token, then a warm-up of each endpoint`);
    config.endpoints = endpoints(await tokenFrom(config.url)).filter((e) => KEYS.includes(e.key));
    for (const endpoint of config.endpoints) await load({ url: config.url, child: { pid: config.parts[0].pid } }, endpoint, CONNECTIONS, 1);
    config.rows = {};
  }
  for (const key of KEYS) {
    progress(`${LABELS[key]}: ${configs.length} configurations, ${ROUNDS} turns of ${ROUND_SECONDS} s`);
    const rounds = new Map(configs.map((c) => [c, []]));
    for (let r = 0; r < ROUNDS; r++)
      for (const c of configs)
        rounds.get(c).push(
          await measure(
            c,
            c.endpoints.find((e) => e.key === key),
            ROUND_SECONDS,
          ),
        );
    for (const [c, measured] of rounds) c.rows[key] = fromRounds(measured);
  }
  for (const c of configs) results.configs[c.key] = { label: c.label, processes: c.parts.map((p) => p.role), rows: c.rows };
} finally {
  for (const stop of stops.reverse()) await stop();
}

const { memory, redis, haproxy1, haproxy2 } = results.configs;
const ratioOf = (config, against) => config && against && Object.fromEntries(KEYS.map((k) => [k, rowRatio(config.rows[k], against.rows[k])]));
const ratios = {
  redisOverMemory: ratioOf(redis, memory),
  twoOverOneBehindHaproxy: ratioOf(haproxy2, haproxy1),
  twoOverOneDirect: ratioOf(haproxy2, redis),
  haproxyOverDirect: ratioOf(haproxy1, redis),
};
/**
 * What two cores leave for a second replica: with one replica behind haproxy the machine was this
 * busy (every process, the load generator included); a second replica costs the same CPU per
 * request, so two can at most reach 100 % over that.
 */
const ceiling = haproxy1 && Object.fromEntries(KEYS.map((k) => [k, +(100 / haproxy1.rows[k].machineBusyPct).toFixed(2)]));
const p99Within = (config, ms) => config && KEYS.every((k) => config.rows[k].p99 <= ms);
const p99s = (config) => KEYS.map((k) => `${LABELS[k]} ${config.rows[k].p99} ms`).join(", ");
const allRows = Object.values(results.configs).flatMap((c) => Object.values(c.rows));
const targets = [
  ...(redis
    ? [
        ...KEYS.map((k) => ({
          target: `Redis store ≥ ${REDIS_TARGETS[k]}× the memory store, ${LABELS[k]} (one replica)`,
          value: ratios.redisOverMemory[k],
          ok: ratios.redisOverMemory[k] >= REDIS_TARGETS[k],
        })),
        { target: "Redis store p99 ≤ 10 ms at 10 connections, one replica", value: p99s(redis), ok: p99Within(redis, 10) },
      ]
    : []),
  ...(haproxy2
    ? [
        { target: "Redis store p99 ≤ 10 ms at 10 connections, two replicas behind haproxy", value: p99s(haproxy2), ok: p99Within(haproxy2, 10) },
        ...KEYS.map((k) => ({
          target: `two replicas ≥ 1.5× one replica (both behind haproxy), ${LABELS[k]}; ${cpus().length} cores allow about ${ceiling[k]}×`,
          value: ratios.twoOverOneBehindHaproxy[k],
          ok: ratios.twoOverOneBehindHaproxy[k] >= 1.5,
        })),
      ]
    : []),
  { target: "no errors and no unexpected statuses", value: allRows.reduce((n, r) => n + r.errors, 0), ok: allRows.every((r) => r.errors === 0) },
];
const machine = `${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}, ${ALG}`;
Object.assign(results, {
  date: new Date().toISOString(),
  machine,
  loadGenerator: LOADGEN,
  connections: CONNECTIONS,
  rounds: ROUNDS,
  roundSeconds: ROUND_SECONDS,
  skipped,
  ratios,
  twoReplicaCeiling: ceiling,
  targets,
  benchSeconds: Math.round((Date.now() - started) / 1000),
});

const cpuCell = (row) =>
  `${row.cpuUsPerReq} (${Object.entries(row.cpuUsPerReqByRole)
    .map(([role, us]) => `${role} ${us}`)
    .join(", ")})`;
const rowLine = (config, k) => {
  const row = config.rows[k];
  const calls = row.storeCallsPerReq ? `${row.storeCallsPerReq.scripts} / ${row.storeCallsPerReq.feedReads}` : "";
  return `| ${LABELS[k]} | ${config.label} | ${row.reqPerSec} | ${row.p50} / ${row.p99} | ${cpuCell(row)} | ${row.machineBusyPct} % | ${calls} | ${row.errors} |`;
};
const ratioLine = (label, values, target) => (values ? [`| ${label} | ${KEYS.map((k) => `${values[k]}×`).join(" | ")} | ${target} |`] : []);
const configs = Object.values(results.configs);
const skipLines = [
  skipped.redis && `The Redis-store rows were not measured: ${skipped.redis}.`,
  !skipped.redis && skipped.haproxy && `The rows behind haproxy were not measured: ${skipped.haproxy}.`,
].filter(Boolean);
const md = [
  `Measured ${results.date.slice(0, 10)} on ${machine}; ${LOADGEN}, ${CONNECTIONS} connections, loopback; \`npm run bench:cluster\`. Each row: ${ROUNDS} rounds of ${ROUND_SECONDS} s per configuration, the configurations taking turns; req/s, latency, CPU and machine load are the medians of the rounds, a ratio the median of the rounds' ratios. Every sandbox runs with its defaults (the text request log on, read and dropped by the bench); the Redis-store replicas share one redis-server (no persistence).`,
  ...(skipLines.length ? ["", ...skipLines] : []),
  "",
  "| endpoint | configuration | req/s | p50 / p99 ms | CPU µs/req, all its processes (by process) | machine busy | Redis scripts / feed reads per request | errors |",
  "|---|---|---|---|---|---|---|---|",
  ...KEYS.flatMap((k) => configs.map((c) => rowLine(c, k))),
  "",
  "CPU per request sums every process of the configuration (each sandbox replica, redis-server, haproxy), not the load generator; machine busy is the share of both cores in use while the row ran, the load generator and the bench included. Redis scripts per request count the script calls the replicas sent (`EVALSHA`: syncs, and commits, those one replica makes at once in one call), feed reads the blocking `XREAD`s that bring each replica the journal entries and events of all.",
  ...(redis
    ? [
        "",
        `| ratio | ${KEYS.map((k) => LABELS[k]).join(" | ")} | target |`,
        `|---|${KEYS.map(() => "---|").join("")}---|`,
        ...ratioLine(
          "Redis store ÷ memory store, one replica",
          ratios.redisOverMemory,
          KEYS.map((k) => `≥ ${REDIS_TARGETS[k]}× ${LABELS[k]}`).join(", "),
        ),
        ...ratioLine("one replica behind haproxy ÷ one replica (haproxy's cost)", ratios.haproxyOverDirect, ""),
        ...ratioLine("two replicas ÷ one replica, both behind haproxy", ratios.twoOverOneBehindHaproxy, "≥ 1.5× where the cores allow"),
        ...ratioLine("two replicas behind haproxy ÷ one replica alone", ratios.twoOverOneDirect, ""),
      ]
    : []),
  ...(ceiling
    ? [
        "",
        `What ${cpus().length} cores allow: with one replica behind haproxy the machine was ${KEYS.map((k) => `${haproxy1.rows[k].machineBusyPct} %`).join(", ")} busy (${KEYS.map((k) => LABELS[k]).join(", ")}), the load generator, haproxy and redis-server on the same cores. A second replica adds no cores, so at the same CPU per request two replicas can reach at most ${KEYS.map((k) => `${ceiling[k]}×`).join(", ")} one replica's throughput here; 1.5× needs a machine where one replica leaves at least a third of the CPU idle.`,
      ]
    : []),
  "",
  "| target | value | met |",
  "|---|---|---|",
  ...targets.map((t) => `| ${t.target} | ${t.value} | ${t.ok ? "yes" : "no"} |`),
  "",
].join("\n");

writeRecordedRun("cluster", results, md);
process.stdout.write(md + `\n(bench:cluster took ${results.benchSeconds} s; written to bench/results/cluster.{json,md})\n`);
process.exit(0);
