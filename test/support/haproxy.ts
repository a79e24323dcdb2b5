import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./free-port.js";
import type { SystemProgram } from "./system-program.js";

/**
 * A real haproxy (Debian's package) in front of sandbox replicas, as a shared deployment runs them
 * (examples/cluster/): round-robin, no stickiness, each replica health-checked on
 * GET /__sandbox/health. It runs in the foreground (`-db`) as a child of the test, so the PID
 * returned is the process started and stopping it stops haproxy. Its configuration is written to a
 * temporary directory, with a runtime API socket beside it for the tests that need to see which
 * replicas haproxy counts as up, or to point one at the new port of a restarted replica.
 *
 * A test file that uses it calls `needsProgram(HAPROXY)` first.
 */

export const HAPROXY_PATH = process.env.HAPROXY_PATH ?? "/usr/sbin/haproxy";

/** Debian's haproxy, as the suite looks for it. */
export const HAPROXY: SystemProgram = { name: "HAProxy", path: HAPROXY_PATH, aptPackage: "haproxy", envVar: "HAPROXY_PATH" };

/** The response header naming the server that answered (haproxy's `%s`, the server's name below). */
export const SERVED_BY = "x-served-by";

/** The backend's name in the configuration and the runtime API. */
export const BACKEND = "sandboxes";

export interface HaproxyBackend {
  /** The server's name: what X-Served-By says and what `states()` is keyed by. */
  name: string;
  port: number;
  /** Default 127.0.0.1. */
  host?: string;
}

export interface HaproxyOptions {
  backends: readonly HaproxyBackend[];
  /** Time between two health checks of a server (default 200 ms: tests see a change within a second). */
  checkIntervalMs?: number;
  /** Failed checks before a server is taken out (default 2). */
  fall?: number;
  /** Passed checks before it is put back (default 2). */
  rise?: number;
}

export interface RunningHaproxy {
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  /** The haproxy process the harness started. */
  pid: number;
  /** The configuration it runs, as written. */
  config: string;
  /** What haproxy printed on stderr so far (alerts and warnings). */
  output(): string;
  /**
   * Each server's state as haproxy sees it now, by name: "UP", "DOWN", "MAINT", or a state on its
   * way to the other ("UP 1/2": up, one check short of fully up or already failing one; a server
   * starts that way).
   */
  states(): Promise<Record<string, string>>;
  /**
   * Polls `states()` until `done` holds (a bound, not a sleep: default 10 s), and resolves with the
   * states seen; rejects naming what was awaited and the states seen last.
   */
  untilStates(what: string, done: (states: Record<string, string>) => boolean, boundMs?: number): Promise<Record<string, string>>;
  /** Points a server at another port (a replica restarted on a new one); its health checks follow. */
  setBackendPort(name: string, port: number, host?: string): Promise<void>;
  /** Stops haproxy (SIGTERM, then SIGKILL if it is still there after a few seconds) and removes its files. */
  stop(): Promise<void>;
}

/** How long haproxy has to start accepting connections, or to exit once told to. */
const START_BOUND_MS = 10_000;
const STOP_BOUND_MS = 5_000;
/** Time between two looks at the servers' states. */
const STATE_POLL_MS = 50;
/** Attempts at a free port: another process can take the one found before haproxy binds it. */
const PORT_ATTEMPTS = 5;

/** The configuration the harness runs: the one of examples/cluster/haproxy.cfg, on loopback, with quick checks. */
export function haproxyConfig(options: HaproxyOptions, port: number, socketPath: string): string {
  if (options.backends.length === 0) throw new Error("startHaproxy: give at least one backend ({ name, port })");
  const names = new Set<string>();
  for (const b of options.backends) {
    if (!/^[A-Za-z0-9_.-]+$/.test(b.name)) throw new Error(`startHaproxy: backend name '${b.name}' must be letters, digits, '.', '_' or '-'`);
    if (names.has(b.name)) throw new Error(`startHaproxy: backend name '${b.name}' is given twice; give each backend its own name`);
    if (!Number.isInteger(b.port) || b.port < 1 || b.port > 65535)
      throw new Error(`startHaproxy: backend '${b.name}' has port ${b.port}, not a TCP port`);
    names.add(b.name);
  }
  const inter = options.checkIntervalMs ?? 200;
  const fall = options.fall ?? 2;
  const rise = options.rise ?? 2;
  return [
    "global",
    `  stats socket ${socketPath} mode 600 level admin`,
    "",
    "defaults",
    "  mode http",
    "  timeout connect 1s",
    "  timeout client 30s",
    // Above the sandbox's event-stream keep-alive: a quiet stream stays open.
    "  timeout server 30s",
    "  timeout tunnel 1h",
    "  timeout client-fin 30s",
    "  timeout http-request 10s",
    // As examples/cluster/haproxy.cfg: a replica slowed by a busy machine is not taken out for it.
    "  timeout check 3s",
    "  retries 2",
    "  option redispatch 1",
    "",
    "frontend merchant-api",
    `  bind 127.0.0.1:${port}`,
    `  default_backend ${BACKEND}`,
    "",
    `backend ${BACKEND}`,
    "  balance roundrobin",
    "  option httpchk GET /__sandbox/health",
    "  http-check expect status 200",
    "  http-response set-header X-Served-By %s",
    `  default-server check inter ${inter}ms fall ${fall} rise ${rise}`,
    ...options.backends.map((b) => `  server ${b.name} ${b.host ?? "127.0.0.1"}:${b.port}`),
    "",
  ].join("\n");
}

/** `haproxy -c -f <file>`: whether haproxy accepts the file, and what it said. */
export function checkHaproxyConfig(file: string): { ok: boolean; output: string } {
  const r = spawnSync(HAPROXY_PATH, ["-c", "-f", file], { encoding: "utf8" });
  return { ok: r.status === 0, output: `${r.stdout ?? ""}${r.stderr ?? ""}${r.error ? String(r.error) : ""}` };
}

/** Starts haproxy on a free loopback port in front of the backends; resolves once it accepts connections. */
export async function startHaproxy(options: HaproxyOptions): Promise<RunningHaproxy> {
  const dir = mkdtempSync(join(tmpdir(), "haproxy-"));
  const socketPath = join(dir, "admin.sock");
  const file = join(dir, "haproxy.cfg");
  try {
    let last = "";
    for (let attempt = 1; attempt <= PORT_ATTEMPTS; attempt++) {
      const port = await freePort();
      const config = haproxyConfig(options, port, socketPath);
      writeFileSync(file, config);
      const child = spawn(HAPROXY_PATH, ["-db", "-f", file], { stdio: ["ignore", "ignore", "pipe"] });
      let err = "";
      child.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d));
      const exited = new Promise<string>((resolve) => child.once("exit", (code, signal) => resolve(String(code ?? signal))));
      const up = await untilAccepting(port, exited);
      if (up === "accepting") return running(child, exited, { port, config, dir, socketPath, output: () => err });
      last = `haproxy exited (${up}) before accepting connections on 127.0.0.1:${port}: ${err.trim()}`;
      // Only a port taken in the meantime is worth another attempt; any other failure is the configuration's.
      if (!/cannot bind|Address already in use/i.test(err)) break;
    }
    throw new Error(last);
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

function running(
  child: ChildProcess,
  exited: Promise<string>,
  at: { port: number; config: string; dir: string; socketPath: string; output: () => string },
): RunningHaproxy {
  const pid = child.pid!;
  return {
    url: `http://127.0.0.1:${at.port}`,
    port: at.port,
    pid,
    config: at.config,
    output: at.output,
    async states() {
      return parseStates(await runtimeCommand(at.socketPath, "show stat"));
    },
    async untilStates(what, done, boundMs = START_BOUND_MS) {
      const deadline = Date.now() + boundMs;
      for (;;) {
        const states = parseStates(await runtimeCommand(at.socketPath, "show stat"));
        if (done(states)) return states;
        if (Date.now() > deadline) throw new Error(`haproxy: ${what}: not within ${boundMs} ms; its servers were last ${JSON.stringify(states)}`);
        await delay(STATE_POLL_MS);
      }
    },
    async setBackendPort(name, port, host = "127.0.0.1") {
      const answer = await runtimeCommand(at.socketPath, `set server ${BACKEND}/${name} addr ${host} port ${port}`);
      // haproxy answers what changed ("IP changed from …", "no need to change the addr …"), or why not.
      if (!/changed|no need to change/i.test(answer)) throw new Error(`haproxy refused to point ${name} at ${host}:${port}: ${answer.trim()}`);
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        process.kill(pid, "SIGTERM");
        let timer: ReturnType<typeof setTimeout> | undefined;
        const stopped = await Promise.race([exited.then(() => true), new Promise<false>((r) => (timer = setTimeout(() => r(false), STOP_BOUND_MS)))]);
        clearTimeout(timer);
        if (!stopped) {
          process.kill(pid, "SIGKILL");
          await exited;
        }
      }
      rmSync(at.dir, { recursive: true, force: true });
    },
  };
}

/** Polls a TCP connection to the port until one is accepted, haproxy exits, or the bound passes. */
async function untilAccepting(port: number, exited: Promise<string>): Promise<"accepting" | string> {
  let gone: string | undefined;
  void exited.then((how) => (gone = how));
  const deadline = Date.now() + START_BOUND_MS;
  while (Date.now() < deadline) {
    if (gone !== undefined) return gone;
    if (await accepts(port)) return "accepting";
    await Promise.race([delay(25), exited]);
  }
  return gone ?? `still not accepting after ${START_BOUND_MS} ms`;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** One command on haproxy's runtime API socket; resolves with its whole answer (haproxy closes after it). */
function runtimeCommand(socketPath: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    let answer = "";
    socket.setEncoding("utf8");
    socket.on("data", (d: string) => (answer += d));
    socket.once("error", reject);
    socket.once("end", () => resolve(answer));
    socket.once("connect", () => socket.write(`${command}\n`));
  });
}

/** The servers of the sandboxes backend and their status, from `show stat`'s CSV. */
export function parseStates(csv: string): Record<string, string> {
  const lines = csv.split("\n").filter((l) => l.length > 0);
  const header = lines[0]?.replace(/^# /, "").split(",") ?? [];
  const px = header.indexOf("pxname");
  const sv = header.indexOf("svname");
  const status = header.indexOf("status");
  if (px < 0 || sv < 0 || status < 0) throw new Error(`haproxy's 'show stat' answered no CSV header: ${csv.slice(0, 200)}`);
  const states: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const cells = line.split(",");
    if (cells[px] !== BACKEND || cells[sv] === "BACKEND") continue;
    states[cells[sv]!] = cells[status]!;
  }
  return states;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
