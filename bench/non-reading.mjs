#!/usr/bin/env node
/**
 * Memory held for clients that never read (issue 23, finding 1): the real CLI on loopback, its
 * journal filled with long-path requests, then clients that ask for the journal or replay it as
 * events and never read a byte. Prints the server's RSS over time, how many of its sockets are
 * still open, and whether health answers. Bounded: at most NON_READING_SECONDS (default 15) of
 * holding, then the server is stopped. Writes bench/results/non-reading.{json,md} (the run quoted by
 * docs/reliability.md's "memory with clients that never read" row). Builds nothing: run
 * `npm run build` first.
 *
 *   node bench/non-reading.mjs            # 1,000 × 15 KB paths, 40 journal readers, 32 event streams
 *   NON_READING_SECONDS=30 node bench/non-reading.mjs -- --write-timeout 2s
 */
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { ROOT, machineDescription } from "./support.mjs";

const CLI = fileURLToPath(new URL("../dist/bin/main.js", import.meta.url));
const seconds = Number(process.env.NON_READING_SECONDS ?? 15);
const extra = process.argv.includes("--") ? process.argv.slice(process.argv.indexOf("--") + 1) : [];

const child = spawn(process.execPath, [CLI, "serve", "--port", "0", ...extra], { stdio: ["ignore", "pipe", "inherit"] });
let out = "";
const port = await new Promise((resolve, reject) => {
  child.stdout.setEncoding("utf8").on("data", (d) => {
    out += d;
    const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
    if (m) resolve(Number(m[1]));
    if (out.length > 100_000) out = out.slice(-1000);
  });
  child.once("exit", (code) => reject(new Error(`serve exited ${code}`)));
});
// The log is not what is measured: read and dropped.
child.stdout.removeAllListeners("data").resume();

const rssMb = () => Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))[1]) / 1024);
const sockets = () => readdirSync(`/proc/${child.pid}/fd`).filter((fd) => readlinkSync(`/proc/${child.pid}/fd/${fd}`).startsWith("socket:")).length;

/** Sends `count` requests on one keep-alive connection, one after another, reading each answer. */
function fill(count, path) {
  return new Promise((resolve, reject) => {
    const s = connect(port, "127.0.0.1");
    let answered = 0;
    let buffered = "";
    s.setEncoding("latin1");
    s.on("data", (d) => {
      buffered += d;
      for (let end = buffered.indexOf("\r\n\r\n"); end >= 0; end = buffered.indexOf("\r\n\r\n")) {
        const length = Number(/content-length: (\d+)/i.exec(buffered.slice(0, end))?.[1] ?? 0);
        if (buffered.length < end + 4 + length) break;
        buffered = buffered.slice(end + 4 + length);
        if (++answered === count) {
          s.end();
          return resolve();
        }
        s.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      }
    });
    s.on("error", reject);
    s.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  });
}

/** A client that sends one request and never reads. */
function stall(path) {
  const s = connect(port, "127.0.0.1");
  s.on("error", () => {});
  s.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  s.pause();
  return s;
}

async function health() {
  const started = performance.now();
  try {
    const r = await fetch(`http://127.0.0.1:${port}/__sandbox/health`, { signal: AbortSignal.timeout(5000) });
    return `${r.status} in ${Math.round(performance.now() - started)} ms`;
  } catch (e) {
    return `no answer (${e.name})`;
  }
}

const baseline = { rss: rssMb(), sockets: sockets() };
await fill(1000, `/${"\\".repeat(15_000)}`);
const filled = rssMb();
const held = [];
for (let i = 0; i < 40; i++) held.push(stall("/__sandbox/requests"));
for (let i = 0; i < 32; i++) held.push(stall("/__sandbox/events?since=req_0"));
let peak = 0;
const samples = [];
const start = Date.now();
while (Date.now() - start < seconds * 1000) {
  await new Promise((r) => setTimeout(r, 1000));
  const rss = rssMb();
  peak = Math.max(peak, rss);
  samples.push(`${Math.round((Date.now() - start) / 1000)}s ${rss} MB ${sockets() - baseline.sockets} sockets`);
}
const late = await fetch(`http://127.0.0.1:${port}/__sandbox/events`, { signal: AbortSignal.timeout(5000) })
  .then((r) => {
    r.body?.cancel();
    return r.status;
  })
  .catch((e) => e.name);
const results = {
  date: new Date().toISOString(),
  machine: machineDescription(),
  loadAverage1m: +loadavg()[0].toFixed(1),
  seconds,
  serveArgs: extra,
  rssMb: { start: baseline.rss, journalFull: filled, peak, end: rssMb() },
  samples,
  serverSocketsOpenAtEnd: sockets() - baseline.sockets,
  health: await health(),
  newEventStream: late,
};
console.log(JSON.stringify(results, null, 1));
mkdirSync(`${ROOT}bench/results`, { recursive: true });
writeFileSync(`${ROOT}bench/results/non-reading.json`, `${JSON.stringify(results, null, 2)}\n`);
const md = [
  "# Memory held for clients that never read (issue 23, finding 1)",
  "",
  `${results.date}, ${results.machine}, load average ${results.loadAverage1m}. \`node bench/non-reading.mjs${extra.length ? ` -- ${extra.join(" ")}` : ""}\`: 1,000 requests with 15 KB paths fill the journal, then 40 clients ask for \`GET /__sandbox/requests\` and 32 replay it as events (\`since=req_0\`), none reading, for ${seconds} s.`,
  "",
  "| | |",
  "|---|---|",
  `| server RSS: start, journal full, peak, end | ${results.rssMb.start}, ${results.rssMb.journalFull}, ${results.rssMb.peak}, ${results.rssMb.end} MB |`,
  `| server sockets still open at the end | ${results.serverSocketsOpenAtEnd} |`,
  `| health, then | ${results.health} |`,
  `| a new event stream, then | ${results.newEventStream} |`,
  "",
  "Each second: RSS and the server's sockets open beyond its start's:",
  "",
  ...samples.map((s) => `- ${s}`),
  "",
];
writeFileSync(`${ROOT}bench/results/non-reading.md`, md.join("\n"));
for (const s of held) s.destroy();
child.kill("SIGKILL");
