// The system programs of the cluster bench (bench/cluster.mjs): a redis-server and haproxy from
// Debian's packages, each on a free loopback port, in a temporary directory of its own, started as
// a child of the bench and stopped by its PID. The bench-side twins of test/support/redis-server.ts
// and test/support/haproxy.ts (TypeScript, for the suite): same flags, same haproxy configuration.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./support.mjs";

export const REDIS_SERVER = {
  path: process.env.REDIS_SERVER_PATH ?? "/usr/bin/redis-server",
  aptPackage: "redis-server",
  envVar: "REDIS_SERVER_PATH",
};
export const HAPROXY = { path: process.env.HAPROXY_PATH ?? "/usr/sbin/haproxy", aptPackage: "haproxy", envVar: "HAPROXY_PATH" };

/** How long a program may take to start: a guard against hangs, not a figure reported. */
const START_BOUND_MS = 10_000;
const STOP_BOUND_MS = 5_000;
/** Another process can take the free port found before the program binds it. */
const PORT_ATTEMPTS = 5;

/**
 * Why `program` cannot be run here, in one line naming its apt package; undefined when it can.
 * `haproxy -v` and `redis-server --version` both exit 0.
 */
export function missingProgram(program) {
  try {
    execFileSync(program.path, [program === HAPROXY ? "-v" : "--version"], { stdio: "ignore" });
    return undefined;
  } catch {
    return `${program.path} cannot be run: apt-get install ${program.aptPackage}, or set ${program.envVar} to the executable`;
  }
}

/** The children started here and not yet seen exit: killed if the bench ends early (a throw, Ctrl-C). */
const running = new Set();
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

function track(child) {
  running.add(child);
  child.once("exit", () => running.delete(child));
  return child;
}

function exited(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", resolve));
}

/** SIGTERM to the PID started, SIGKILL if it is still there after the bound; then its directory removed. */
async function stopChild(child, dir) {
  if (child.exitCode === null && child.signalCode === null) {
    process.kill(child.pid, "SIGTERM");
    let timer;
    const stopped = await Promise.race([exited(child).then(() => true), new Promise((r) => (timer = setTimeout(() => r(false), STOP_BOUND_MS)))]);
    clearTimeout(timer);
    if (!stopped) {
      process.kill(child.pid, "SIGKILL");
      await exited(child);
    }
  }
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Starts `spawnOn(port)` on a free port (retried when another process took it first), resolving
 * once `ready(port, output, trying)` does; the child's output is kept until then, drained after.
 */
async function startOnFreePort(what, dir, spawnOn, ready) {
  let last = "";
  for (let attempt = 1; attempt <= PORT_ATTEMPTS; attempt++) {
    const port = await freePort();
    const child = track(spawnOn(port));
    let output = "";
    const keep = (d) => (output += d);
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    const gone = new Promise((resolve) => child.once("exit", (code, signal) => resolve(`exited (${signal ?? `code ${code}`})`)));
    let timer;
    const trying = { over: false };
    const outcome = await Promise.race([
      ready(port, () => output, trying).then(() => "ready"),
      gone,
      new Promise((r) => (timer = setTimeout(() => r(`not ready within ${START_BOUND_MS} ms`), START_BOUND_MS))),
    ]);
    clearTimeout(timer);
    trying.over = true;
    if (outcome === "ready") {
      child.stdout?.off("data", keep).resume();
      child.stderr?.off("data", keep).resume();
      return { child, pid: child.pid, port };
    }
    child.kill("SIGKILL");
    await exited(child);
    last = `${what} on 127.0.0.1:${port} ${outcome}: ${output.trim().slice(-500)}`;
    if (!/Address already in use|cannot bind/i.test(output)) break;
  }
  rmSync(dir, { recursive: true, force: true });
  throw new Error(last);
}

/** Polls `check()` until it holds, or until the attempt is over (the caller bounds the wait). */
async function until(check, trying) {
  while (!trying.over && !(await check())) await new Promise((r) => setTimeout(r, 25));
}

/** A redis-server without persistence, as the examples run it: `{ url, pid, stop() }`. */
export async function startRedis() {
  const dir = mkdtempSync(join(tmpdir(), "bench-redis-"));
  const started = await startOnFreePort(
    "redis-server",
    dir,
    (port) =>
      spawn(
        REDIS_SERVER.path,
        ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no"],
        { stdio: ["ignore", "pipe", "pipe"] },
      ),
    (_port, output, trying) => until(() => /Ready to accept connections/.test(output()), trying),
  );
  return { ...started, url: `redis://127.0.0.1:${started.port}/0`, stop: () => stopChild(started.child, dir) };
}

/**
 * haproxy's configuration: the shape of examples/cluster/haproxy.cfg and test/support/haproxy.ts
 * (round-robin, no stickiness, health checks on GET /__sandbox/health), on loopback, no log.
 */
export function haproxyConfig(backends, port) {
  return [
    "defaults",
    "  mode http",
    "  timeout connect 1s",
    "  timeout client 30s",
    "  timeout server 30s",
    "  timeout http-request 10s",
    "  timeout check 1s",
    "  retries 2",
    "  option redispatch 1",
    "",
    "frontend merchant-api",
    `  bind 127.0.0.1:${port}`,
    "  default_backend sandboxes",
    "",
    "backend sandboxes",
    "  balance roundrobin",
    "  option httpchk GET /__sandbox/health",
    "  http-check expect status 200",
    "  http-response set-header X-Served-By %s",
    "  default-server check inter 1s fall 2 rise 2",
    ...backends.map((b) => `  server ${b.name} 127.0.0.1:${b.port}`),
    "",
  ].join("\n");
}

/**
 * haproxy in the foreground (`-db`) in front of `backends` ([{ name, port }]): resolves once it
 * has answered through every backend (its X-Served-By names each), so no load starts while a
 * replica is still out of the rotation. `{ url, pid, stop() }`.
 */
export async function startHaproxy(backends) {
  const dir = mkdtempSync(join(tmpdir(), "bench-haproxy-"));
  const file = join(dir, "haproxy.cfg");
  const started = await startOnFreePort(
    "haproxy",
    dir,
    (port) => {
      writeFileSync(file, haproxyConfig(backends, port));
      return spawn(HAPROXY.path, ["-db", "-f", file], { stdio: ["ignore", "pipe", "pipe"] });
    },
    async (port, _output, trying) => {
      const seen = new Set();
      await until(async () => {
        try {
          const r = await fetch(`http://127.0.0.1:${port}/__sandbox/health`);
          await r.arrayBuffer();
          if (r.status === 200) seen.add(r.headers.get("x-served-by"));
        } catch {}
        return backends.every((b) => seen.has(b.name));
      }, trying);
    },
  );
  return { ...started, url: `http://127.0.0.1:${started.port}`, stop: () => stopChild(started.child, dir) };
}

/**
 * The calls redis-server has answered so far by command, from `INFO commandstats` (commands run
 * inside a script count under their own names too): `{ evalsha: 123, xread: 45, … }`.
 */
export async function redisCommandCalls(port) {
  const answer = await redisInfo(port, "commandstats");
  const calls = {};
  for (const [, name, count] of answer.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[name] = Number(count);
  return calls;
}

/** The bytes redis-server holds for its data set (`INFO memory`'s used_memory_dataset). */
export async function redisDatasetBytes(port) {
  const answer = await redisInfo(port, "memory");
  return Number(/^used_memory_dataset:(\d+)/m.exec(answer)?.[1]);
}

/** One section of `INFO`, as redis-server answers it (a bulk string). */
function redisInfo(port, section) {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let answer = "";
    socket.setEncoding("utf8");
    socket.once("error", reject);
    socket.on("data", (d) => {
      answer += d;
      // A bulk string: $<length>\r\n<text>\r\n, whole once that many bytes are in.
      const head = /^\$(\d+)\r\n/.exec(answer);
      if (!head || Buffer.byteLength(answer) < head[0].length + Number(head[1]) + 2) return;
      socket.end();
      resolve(answer);
    });
    socket.once("connect", () => socket.write(`INFO ${section}\r\n`));
  });
}
