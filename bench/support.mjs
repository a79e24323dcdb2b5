// What the bench scripts share: starting the sandbox CLI as users start it, reading a process's RSS,
// describing the machine, scanning output for secrets, and writing a recorded run.
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { cpus, totalmem } from "node:os";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const JWT_SHAPE = /eyJ[A-Za-z0-9_-]{2,}\.eyJ[A-Za-z0-9_-]{2,}/g;

/**
 * Starts `serve` from the bundle with JSON logs, as npm start and the image do, and resolves once it
 * says where it listens. `out.stdout`/`out.stderr` collect everything it prints, for the scans.
 */
export async function startSandboxCli(label, extraArgs = []) {
  const args = ["--max-semi-space-size=2", "dist/bin/main.js", "serve", "--port", "0", "--log-format", "json", ...extraArgs];
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  const out = { label, args, stdout: [], stderr: [] };
  child.stdout.on("data", (d) => out.stdout.push(d));
  child.stderr.on("data", (d) => out.stderr.push(d));
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal, at: performance.now() })));
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label}: no 'listening on' within 10 s`)), 10_000);
    const onData = () => {
      const m = /listening on (http:\/\/[^\s"]+)/.exec(Buffer.concat(out.stdout).toString("utf8"));
      if (m) {
        clearTimeout(timer);
        child.stdout.off("data", onData);
        resolve(m[1]);
      }
    };
    child.stdout.on("data", onData);
    exited.then(({ code }) => reject(new Error(`${label}: exited with ${code} before listening: ${Buffer.concat(out.stderr)}`)));
  });
  const { hostname, port } = new URL(url);
  return { child, url, host: hostname, port: Number(port), exited, out };
}

/** Records a run: bench/results/<name>.json (the figures) and <name>.md (what the docs copy or quote). */
export function writeRecordedRun(name, results, md) {
  mkdirSync(`${ROOT}/bench/results`, { recursive: true });
  writeFileSync(`${ROOT}/bench/results/${name}.json`, JSON.stringify(results, null, 2) + "\n");
  writeFileSync(`${ROOT}/bench/results/${name}.md`, md);
}

/** A port free on loopback now: the kernel's pick for port 0, let go for the program to bind. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

export function rssKb(pid) {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]);
}

export function machineDescription() {
  return `${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${process.platform}`;
}

/** The payload and signature segments of tokens: each on its own is still the token's secret part. */
export function tokenSegmentSet(tokens) {
  const set = new Set();
  for (const t of tokens) {
    const [, payload, signature] = t.split(".");
    if (payload) set.add(payload);
    if (signature) set.add(signature);
  }
  return set;
}

/**
 * Every secret found in clear in `text`: literal secrets, JWT shapes, segments of issued tokens,
 * and whole words that are secrets (a session's credentials). Each hit says where, what, how many
 * times, and a sample of the context.
 */
export function scanForSecrets(label, text, literalSecrets, wordSecrets, tokenSegments) {
  const hits = [];
  for (const secret of literalSecrets) {
    const count = text.split(secret).length - 1;
    if (count)
      hits.push({
        where: label,
        what: `literal '${secret.slice(0, 4)}…' (${secret.length} chars)`,
        count,
        sample: context(text, text.indexOf(secret)),
      });
  }
  const shapes = text.match(JWT_SHAPE) ?? [];
  if (shapes.length)
    hits.push({ where: label, what: "JWT-shaped string (eyJ….eyJ…)", count: shapes.length, sample: context(text, text.search(JWT_SHAPE)) });
  let segmentHits = 0;
  let firstSegment;
  let wordHits = 0;
  let firstWord;
  for (const [word] of text.matchAll(/[A-Za-z0-9_-]{8,}/g)) {
    if (tokenSegments.has(word)) {
      segmentHits++;
      firstSegment ??= word;
    }
    if (wordSecrets.has(word)) {
      wordHits++;
      firstWord ??= word;
    }
  }
  if (segmentHits)
    hits.push({ where: label, what: "segment of an issued access token", count: segmentHits, sample: context(text, text.indexOf(firstSegment)) });
  if (wordHits)
    hits.push({
      where: label,
      what: "a session's api_secret, payment token or password",
      count: wordHits,
      sample: context(text, text.indexOf(firstWord)),
    });
  return hits;
}

function context(text, at) {
  return text.slice(Math.max(0, at - 80), at + 80).replace(/\n/g, "⏎");
}
