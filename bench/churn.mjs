// Churn bench (not part of `npm test`): the slow leaks and expensive cheap requests of issue 10 §5.
//  1. Session churn against the sandbox CLI: CHURN_CYCLES (default 300) cycles of create a session
//     of signing-key-rotation → exchange → three payment calls (the third rotates the key) → reset →
//     delete, timed, with GET /__sandbox/health probed beside it; RSS before and after.
//  2. The same cycles against an in-process sandbox (the built library behind its node:http
//     adapter, on loopback), to count what HTTP does not show: keys in the ring and per-merchant
//     cutoffs (revoke/expire "all") in the token ledger, before and after.
//  3. POST /__sandbox/scan with one 64 KB line full of secrets; `validate` of a file with 8,000 and
//     40,000 unknown keys (killed after VALIDATE_TIMEOUT_S, default 90).
// Builds nothing: run `npm run build` first (npm run churn does). Loopback only, bounded. Writes
// bench/results/churn.{json,md}.
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { ROOT, machineDescription, rssKb, startSandboxCli } from "./support.mjs";

const CYCLES = Number(process.env.CHURN_CYCLES ?? 300);
const VALIDATE_TIMEOUT_S = Number(process.env.VALIDATE_TIMEOUT_S ?? 90);
const SCENARIO = "signing-key-rotation";
const json = { "content-type": "application/json" };

async function call(base, path, init = {}) {
  const res = await fetch(base + path, init);
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

function expectStatus(r, status, what) {
  if (r.status !== status) throw new Error(`${what}: expected ${status}, got ${r.status} ${JSON.stringify(r.json)}`);
}

/** One cycle; every step must get the status the scenario promises. */
async function cycle(base) {
  const created = await call(base, "/__sandbox/sessions", { method: "POST", headers: json, body: JSON.stringify({ scenario: SCENARIO }) });
  expectStatus(created, 201, "create");
  const { id, merchant } = created.json;
  const exchange = () =>
    call(base, "/api/v2/auth/token", {
      method: "POST",
      headers: json,
      body: JSON.stringify({ api_key: merchant.api_key, api_secret: merchant.api_secret }),
    });
  const first = await exchange();
  expectStatus(first, 200, "exchange");
  const pay = (token) => call(base, "/api/v2/payment/orders", { headers: { authorization: `Bearer ${token}` } });
  expectStatus(await pay(first.json.access_token), 200, "payment 1");
  expectStatus(await pay(first.json.access_token), 200, "payment 2");
  expectStatus(await pay(first.json.access_token), 401, "payment 3 (rotation)");
  const second = await exchange();
  expectStatus(second, 200, "exchange after rotation");
  expectStatus(await call(base, `/__sandbox/sessions/${id}/reset`, { method: "POST", headers: json }), 200, "reset");
  expectStatus(await call(base, `/__sandbox/sessions/${id}`, { method: "DELETE" }), 204, "delete");
}

/** Runs the cycles while a prober asks for health every 10 ms; the slowest health answer is kept. */
async function churn(base) {
  let running = true;
  let slowestHealthMs = 0;
  let healthChecks = 0;
  const prober = (async () => {
    while (running) {
      const t = performance.now();
      expectStatus(await call(base, "/__sandbox/health"), 200, "health");
      slowestHealthMs = Math.max(slowestHealthMs, performance.now() - t);
      healthChecks++;
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const start = performance.now();
  for (let i = 0; i < CYCLES; i++) await cycle(base);
  const ms = performance.now() - start;
  running = false;
  await prober;
  return { msPerCycle: +(ms / CYCLES).toFixed(1), slowestHealthMs: +slowestHealthMs.toFixed(1), healthChecks };
}

/**
 * Counts the in-process sandbox holds, read through its internals (dist/app/internals.js). The
 * fallbacks read the older code's fields, for the "before" figures.
 */
function counts(sandbox, internalsOf) {
  const inside = internalsOf?.(sandbox) ?? sandbox;
  const ring = inside.ring ?? sandbox.keys.ring;
  const ledger = inside.ledger;
  return {
    keys: ring.size ?? ring.byKid.size,
    ledgerCutoffs: ledger.merchantCutoffs ?? ledger.revokedAll.size + ledger.expiredAll.size,
  };
}

async function inProcess() {
  const { createSandbox, startServer } = await import(join(ROOT, "dist/index.js"));
  const { internalsOf } = await import(join(ROOT, "dist/app/internals.js")).catch(() => ({}));
  const sandbox = await createSandbox({ scenarios: [SCENARIO] });
  const server = await startServer(sandbox, { port: 0, host: "127.0.0.1" });
  // How long the in-process event loop was held at most: key generation must not hold it.
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  try {
    const before = counts(sandbox, internalsOf);
    loopDelay.enable();
    for (let i = 0; i < CYCLES; i++) await cycle(server.url);
    loopDelay.disable();
    return { before, after: counts(sandbox, internalsOf), maxEventLoopDelayMs: +(loopDelay.max / 1e6).toFixed(1) };
  } finally {
    await server.close();
  }
}

async function scanLongLine(base) {
  // The default merchant's api_secret over and over on one line, as a body just under 64 KiB.
  const secret = "sandbox-api-secret";
  const text = `${secret} `.repeat(Math.floor(60_000 / (secret.length + 1)));
  const body = JSON.stringify({ text });
  const t = performance.now();
  const r = await call(base, "/__sandbox/scan", { method: "POST", headers: json, body });
  const ms = performance.now() - t;
  expectStatus(r, 200, "scan");
  const last = r.json.hits.at(-1);
  return {
    textChars: text.length,
    hits: r.json.hits.length,
    lastColumn: last?.column,
    expectedLastColumn: text.lastIndexOf(secret) + 1,
    ms: Math.round(ms),
  };
}

/** `validate` of a file with `n` unknown top-level keys: time, output lines, exit code (null when killed). */
async function validateUnknownKeys(n) {
  const dir = join(ROOT, "bench/results/tmp");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `unknown-keys-${n}.yaml`);
  const lines = ["name: many-unknown-keys", "description: d", "merchants: []"];
  for (let i = 0; i < n; i++) lines.push(`unknown_key_${i}: ${i}`);
  writeFileSync(file, lines.join("\n") + "\n");
  const child = spawn(process.execPath, ["dist/bin/main.js", "validate", file], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  const t = performance.now();
  const timer = setTimeout(() => child.kill("SIGKILL"), VALIDATE_TIMEOUT_S * 1000);
  const code = await new Promise((resolve) => child.once("exit", (c) => resolve(c)));
  clearTimeout(timer);
  const ms = performance.now() - t;
  return {
    keys: n,
    ms: Math.round(ms),
    killedAfterTimeout: code === null,
    exitCode: code,
    outputLines: out.split("\n").filter(Boolean).length,
    lastLine: out.trim().split("\n").at(-1)?.slice(0, 160),
  };
}

const cli = await startSandboxCli("churn", ["--scenario", SCENARIO]);
let result;
try {
  const base = cli.url;
  await cycle(base); // warm up: loads the library scenario's file once
  const rssBeforeKb = rssKb(cli.child.pid);
  const timing = await churn(base);
  const rssAfterKb = rssKb(cli.child.pid);
  const scan = await scanLongLine(base);
  result = { cli: { ...timing, rssBeforeMb: +(rssBeforeKb / 1024).toFixed(1), rssAfterMb: +(rssAfterKb / 1024).toFixed(1) }, scan };
} finally {
  cli.child.kill("SIGTERM");
  await cli.exited;
}
result.inProcess = await inProcess();
// 40,000: the most unknown keys a file under the 1 MiB source limit holds (100,000 is now refused by size).
result.validate = [await validateUnknownKeys(8_000), await validateUnknownKeys(40_000)];

const report = {
  date: new Date().toISOString(),
  machine: machineDescription(),
  command: `node ${cli.out.args.join(" ")}`,
  cycles: CYCLES,
  scenario: SCENARIO,
  ...result,
};
const label = process.env.CHURN_LABEL ?? "latest";
mkdirSync(join(ROOT, "bench/results"), { recursive: true });
writeFileSync(join(ROOT, `bench/results/churn${label === "latest" ? "" : `-${label}`}.json`), JSON.stringify(report, null, 2) + "\n");
console.log(JSON.stringify(report, null, 2));
