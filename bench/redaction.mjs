// npm run bench:redaction: the URL redaction (src/core/redact.ts) and the log scan
// (src/control/scan.ts), from dist, on the worst inputs found for them (issue 23 §2 and §6): µs
// per call after one untimed call, the median of 7 timed batches (one call when a call takes over
// 100 ms). Writes bench/results/redaction.{json,md}; a few seconds once linear.
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { ROOT, machineDescription } from "./support.mjs";

const { redactUrl, redactValue } = await import(`${ROOT}dist/core/redact.js`);
const { SecretIndex } = await import(`${ROOT}dist/core/secret-index.js`);
const { scanText } = await import(`${ROOT}dist/control/scan.js`);

const KB = 1024;
const empty = new SecretIndex().view();

/** 400 secrets of 400 distinct lengths that all start like the path below: the most lookups per position. */
const rotated = new SecretIndex();
for (let length = 16; length < 416; length++) rotated.add(`${"a".repeat(length - 1)}b`);
/** 5,000 sessions' worth of random secrets (15,000), for scale. */
const sessions = new SecretIndex();
for (let i = 0; i < 15_000; i++) sessions.add(`ss_${(i * 2654435761).toString(16).padStart(8, "0")}${i.toString(36)}_secret`);

const CASES = [
  {
    what: "an unknown session's URL /s/<eyJ × 5260>/api (issue 23 §2)",
    run: () => {
      const id = "eyJ".repeat(5260);
      redactValue(id, empty);
      redactUrl(`/s/${id}/api`, "", empty);
    },
  },
  { what: "a 16 KB path of `eyJ.` runs", run: () => redactUrl(`/p/${"eyJ.".repeat(4 * KB)}`, "", empty) },
  { what: "a 16 KB path of `eyJa.b` JWT-shaped runs", run: () => redactUrl(`/p/${"eyJa.b/".repeat((16 * KB) / 7)}`, "", empty) },
  { what: "a 16 KB path, 400 secrets of 400 lengths (issue 23 §6)", run: () => redactUrl(`/${"a".repeat(16 * KB)}`, "", rotated.view()) },
  { what: "a 16 KB path, 15,000 secrets of 5,000 sessions", run: () => redactUrl(`/${"ss_0".repeat(4 * KB)}`, "", sessions.view()) },
  { what: "/api/v2/payment/status, 15,000 secrets (the common case)", run: () => redactUrl("/api/v2/payment/status", "", sessions.view()) },
  { what: "POST /__sandbox/scan of a 60 KB `eyJ` run (issue 23 §2)", run: () => scanText("eyJ".repeat(20 * KB), [], () => undefined) },
  { what: "POST /__sandbox/scan of 60 KB of `eyJ.`", run: () => scanText("eyJ.".repeat(15 * KB), [], () => undefined) },
];

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1];
}

async function usPerCall(fn) {
  // Untimed first: it builds the automata a view searches (once per view), which is not per call.
  await fn();
  const t0 = performance.now();
  await fn();
  const once = performance.now() - t0;
  if (once > 100) return once * 1000;
  for (let i = 0; i < 5; i++) await fn();
  const perBatch = Math.max(1, Math.min(10_000, Math.round(100 / Math.max(once, 0.001))));
  const batches = [];
  for (let b = 0; b < 7; b++) {
    const start = performance.now();
    for (let i = 0; i < perBatch; i++) await fn();
    batches.push(((performance.now() - start) * 1000) / perBatch);
  }
  return median(batches);
}

const rows = [];
for (const c of CASES) {
  const us = await usPerCall(c.run);
  rows.push({ what: c.what, us: +us.toFixed(1) });
  console.log(`${c.what}: ${us >= 1000 ? `${(us / 1000).toFixed(1)} ms` : `${us.toFixed(1)} µs`}`);
}

const results = { date: new Date().toISOString(), machine: machineDescription(), loadAverage1m: +loadavg()[0].toFixed(1), rows };
mkdirSync(`${ROOT}bench/results`, { recursive: true });
writeFileSync(`${ROOT}bench/results/redaction.json`, `${JSON.stringify(results, null, 2)}\n`);
const md = [
  `# Redaction and scan worst cases`,
  "",
  `${results.date}, ${results.machine}, load average ${results.loadAverage1m}. \`npm run bench:redaction\`.`,
  "",
  "| input | per call |",
  "|---|---|",
  ...rows.map((r) => `| ${r.what} | ${r.us >= 1000 ? `${(r.us / 1000).toFixed(1)} ms` : `${r.us} µs`} |`),
  "",
];
writeFileSync(`${ROOT}bench/results/redaction.md`, md.join("\n"));
