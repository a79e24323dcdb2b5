// npm run bench:shared-sessions: what a replica on the Redis store pays as sessions pile up, in one
// run on this machine (issue 31's "cost flat in the number of sessions"). One replica of the CLI with
// `--state` on a redis-server of its own (no persistence), its defaults otherwise:
// - a sandbox clock move and a session creation (then its DELETE), SAMPLES times each, with 1 live
//   session and with 2,000: the medians and their ratio (target: within 2×);
// - the p99 of a protected call, sequential, on a second replica, while idle and while 6 clients
//   create sessions of a key-rotating scenario on the first (each generates an RSA key there, and
//   the second adopts each session): the ratio (target: within 3×);
// - a reset with 10,000 live sessions: its status and time;
// - Redis's data set before and after a flood of FLOOD requests without credentials whose paths are
//   15 KB each: what is stored of them is bounded (journal entries cut at 1,024 characters, the
//   journal and the feed bounded, commit outcomes kept 10 s).
// Writes bench/results/shared-sessions.{json,md}. Without redis-server it says so and stops.
import { REDIS_SERVER, missingProgram, redisDatasetBytes, startRedis } from "./cluster-processes.mjs";
import { CREDENTIALS, inParallel, median, progress } from "./harness.mjs";
import { machineDescription, startSandboxCli, writeRecordedRun } from "./support.mjs";

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 40);
const MANY = 2000;
const MOST = 10_000;
const PROTECTED_CALLS = 1500;
const FLOOD = 5000;

const missing = missingProgram(REDIS_SERVER);
if (missing) {
  process.stderr.write(`${missing}\n`);
  process.exit(0);
}

const json = (body) => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

async function timed(url, init) {
  const started = performance.now();
  const res = await fetch(url, init);
  await res.arrayBuffer();
  return { status: res.status, ms: performance.now() - started };
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const round = (n) => Math.round(n * 100) / 100;

async function writes(base) {
  const clock = [];
  const create = [];
  for (let i = 0; i < SAMPLES; i++) {
    const moved = await timed(`${base}/__sandbox/clock`, json({ advance: "1s" }));
    if (moved.status !== 200) throw new Error(`clock move answered ${moved.status}`);
    clock.push(moved.ms);
    const started = performance.now();
    const res = await fetch(`${base}/__sandbox/sessions`, json({}));
    const made = await res.json();
    create.push(performance.now() - started);
    if (res.status !== 201) throw new Error(`session creation answered ${res.status}: ${JSON.stringify(made)}`);
    await (await fetch(`${base}/__sandbox/sessions/${made.id}`, { method: "DELETE" })).arrayBuffer();
  }
  return { clockMs: round(median(clock)), createMs: round(median(create)) };
}

async function fill(base, count) {
  const live = (await (await fetch(`${base}/__sandbox/sessions`)).json()).sessions.length;
  await inParallel(count - live, 8, async () => {
    const res = await fetch(`${base}/__sandbox/sessions`, json({}));
    await res.arrayBuffer();
    if (res.status !== 201) throw new Error(`session creation answered ${res.status}`);
  });
}

async function protectedP99(base, token) {
  const ms = [];
  for (let i = 0; i < PROTECTED_CALLS; i++) {
    const r = await timed(`${base}/api/v2/payment/p_${i}`, { headers: { authorization: `Bearer ${token}` } });
    if (r.status !== 200) throw new Error(`protected call answered ${r.status}`);
    ms.push(r.ms);
  }
  return { p50: round(percentile(ms, 50)), p99: round(percentile(ms, 99)) };
}

const redis = await startRedis();
const replicaArgs = ["--state", redis.url, "--max-sessions", String(MOST + 10), "--scenario", "signing-key-rotation"];
const sandbox = await startSandboxCli("replica", replicaArgs);
const other = await startSandboxCli("second replica", replicaArgs);
const base = sandbox.url;
try {
  const token = (
    await (await fetch(`${base}/api/v2/auth/token`, { method: "POST", headers: { "content-type": "application/json" }, body: CREDENTIALS })).json()
  ).access_token;
  progress("1 live session: clock moves and creations");
  await fill(base, 1);
  const one = await writes(base);
  progress(`${MANY} live sessions`);
  await fill(base, MANY);
  const many = await writes(base);
  progress("protected calls, idle and beside key-rotating creations");
  const idle = await protectedP99(other.url, token);
  let creating = true;
  const creators = Promise.all(
    Array.from({ length: 6 }, async () => {
      let made = 0;
      while (creating) {
        const res = await fetch(`${base}/__sandbox/sessions`, json({ scenario: "signing-key-rotation" }));
        const body = await res.json();
        if (res.status === 201) {
          made++;
          await (await fetch(`${base}/__sandbox/sessions/${body.id}`, { method: "DELETE" })).arrayBuffer();
        }
      }
      return made;
    }),
  );
  const busy = await protectedP99(other.url, token);
  creating = false;
  const rotatingMade = (await creators).reduce((a, b) => a + b, 0);
  const datasetAtMany = await redisDatasetBytes(redis.port);
  progress(`${MOST} live sessions, then a reset`);
  await fill(base, MOST);
  const datasetAtMost = await redisDatasetBytes(redis.port);
  const reset = await timed(`${base}/__sandbox/reset`, json({}));
  const after = (await (await fetch(`${base}/__sandbox/sessions`)).json()).sessions.length;
  progress(`a flood of ${FLOOD} requests with 15 KB paths, no credentials`);
  const datasetBefore = await redisDatasetBytes(redis.port);
  const long = `/api/v2/payment/${"p".repeat(15_000)}`;
  await inParallel(FLOOD, 8, async () => {
    const res = await fetch(`${base}${long}`);
    await res.arrayBuffer();
    if (res.status !== 401) throw new Error(`a request without credentials answered ${res.status}`);
  });
  const datasetAfter = await redisDatasetBytes(redis.port);
  const results = {
    date: new Date().toISOString().slice(0, 10),
    machine: machineDescription(),
    samples: SAMPLES,
    one,
    many,
    ratios: { clock: round(many.clockMs / one.clockMs), create: round(many.createMs / one.createMs) },
    protected: { idle, besideRotatingCreations: busy, rotatingSessionsMade: rotatingMade, p99Ratio: round(busy.p99 / idle.p99) },
    reset: { sessions: MOST, status: reset.status, ms: Math.round(reset.ms), liveAfter: after },
    dataset: {
      mbAt2000Sessions: round(datasetAtMany / 1e6),
      mbAt10000Sessions: round(datasetAtMost / 1e6),
      kbPerSession: round((datasetAtMost - datasetAtMany) / (MOST - MANY) / 1e3),
    },
    flood: { requests: FLOOD, pathChars: long.length, datasetMbBefore: round(datasetBefore / 1e6), datasetMbAfter: round(datasetAfter / 1e6) },
  };
  const md = [
    `Measured ${results.date} on ${results.machine}; \`npm run bench:shared-sessions\`: two replicas of the CLI on the Redis store (one redis-server, no persistence), their defaults but \`--max-sessions ${MOST + 10}\` and the signing-key-rotation scenario loaded; requests one at a time over loopback, to the first replica but the protected calls, which go to the second; medians of ${SAMPLES}.`,
    "",
    "| what | 1 live session | 2,000 live sessions | ratio | target |",
    "|---|---|---|---|---|",
    `| sandbox clock move (POST /__sandbox/clock) | ${one.clockMs} ms | ${many.clockMs} ms | ${results.ratios.clock}× | within 2× |`,
    `| session creation (POST /__sandbox/sessions) | ${one.createMs} ms | ${many.createMs} ms | ${results.ratios.create}× | within 2× |`,
    "",
    "| protected call, one at a time, 2,000 live sessions | p50 | p99 |",
    "|---|---|---|",
    `| idle | ${idle.p50} ms | ${idle.p99} ms |`,
    `| while 6 clients create and end sessions of a key-rotating scenario on the other replica (${rotatingMade} made) | ${busy.p50} ms | ${busy.p99} ms |`,
    `| ratio of the p99s (target: within 3×) |  | ${results.protected.p99Ratio}× |`,
    "",
    `Redis's data set held ${results.dataset.mbAt2000Sessions} MB with ${MANY} live sessions and ${results.dataset.mbAt10000Sessions} MB with ${MOST}: ${results.dataset.kbPerSession} kB a session (the default scenario's, with its history).`,
    "",
    `A reset with ${MOST} live sessions answered ${reset.status} in ${results.reset.ms} ms, leaving ${after} sessions.`,
    "",
    `${FLOOD} requests without credentials, each with a path of ${long.length} characters: Redis's data set went from ${results.flood.datasetMbBefore} MB to ${results.flood.datasetMbAfter} MB.`,
    "",
  ].join("\n");
  writeRecordedRun("shared-sessions", results, md);
  process.stdout.write(`${md}\n`);
} finally {
  for (const s of [sandbox, other]) {
    s.child.kill("SIGTERM");
    await s.exited;
  }
  await redis.stop();
}
