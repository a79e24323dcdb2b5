import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { freePort } from "./free-port.js";
import { needsProgram, type SystemProgram } from "./system-program.js";

/**
 * A real `redis-server` for the tests of the Redis store: Debian's package, on a free loopback
 * port, without persistence (`--save '' --appendonly no`), in a directory of its own. Every signal
 * goes to the PID this helper started, never to a process found by name.
 */

export const REDIS_SERVER_PATH = process.env.REDIS_SERVER_PATH ?? "/usr/bin/redis-server";

export const REDIS_SERVER: SystemProgram = { name: "redis-server", path: REDIS_SERVER_PATH, aptPackage: "redis-server", envVar: "REDIS_SERVER_PATH" };

/** How long a redis-server may take to say it is ready: a guard against hangs, not a figure asserted. */
const START_GUARD_MS = 10_000;
/** Attempts at a free port, for when another process takes the one just found free before redis-server binds it. */
const PORT_ATTEMPTS = 5;

export interface RedisServerOptions {
  /** Started with `requirepass`: clients must give it. */
  password?: string;
}

export interface RedisServer {
  /** redis://127.0.0.1:PORT/0, with the password when there is one. */
  readonly url: string;
  readonly port: number;
  /** The PID of the redis-server running now (a new one after restart()). */
  readonly pid: number;
  /** SIGSTOP: the server keeps its connections and answers nothing. */
  freeze(): void;
  /** SIGCONT after freeze(). */
  thaw(): void;
  /** SIGKILL, resolved when it has exited: its data is gone (no persistence). */
  kill(): Promise<void>;
  /** A new, empty redis-server on the same port, after kill() or stop(). */
  restart(): Promise<void>;
  /** SIGTERM (after SIGCONT if frozen), resolved when it has exited; its directory removed. */
  stop(): Promise<void>;
}

/** Starts a redis-server and resolves when it accepts connections. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), "redis-test-"));
  let child: ChildProcess | undefined;
  let port = 0;
  let lastFailure = "";
  for (let attempt = 0; attempt < PORT_ATTEMPTS && !child; attempt++) {
    port = await freePort();
    try {
      child = await launch(port, dir, options.password);
    } catch (error) {
      lastFailure = (error as Error).message;
      if (!/Address already in use/i.test(lastFailure)) break;
    }
  }
  if (!child) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`redis-server did not start: ${lastFailure}`);
  }
  let current: ChildProcess = child;
  let frozen = false;
  const auth = options.password !== undefined ? `:${encodeURIComponent(options.password)}@` : "";
  const signal = (name: NodeJS.Signals) => {
    if (current.exitCode === null && current.signalCode === null) process.kill(current.pid!, name);
  };
  // A test run that ends without stop() (a crash, an interrupt) must not leave the server behind.
  const leftBehind = () => signal("SIGKILL");
  process.once("exit", leftBehind);
  return {
    url: `redis://${auth}127.0.0.1:${port}/0`,
    port,
    get pid() {
      return current.pid!;
    },
    freeze() {
      signal("SIGSTOP");
      frozen = true;
    },
    thaw() {
      signal("SIGCONT");
      frozen = false;
    },
    async kill() {
      const exited = exitOf(current);
      signal("SIGKILL");
      frozen = false;
      await exited;
    },
    async restart() {
      if (current.exitCode === null && current.signalCode === null)
        throw new Error("restart(): the redis-server is still running; kill() or stop() it first");
      current = await launch(port, dir, options.password);
    },
    async stop() {
      const exited = exitOf(current);
      if (frozen) signal("SIGCONT");
      frozen = false;
      signal("SIGTERM");
      await exited;
      process.off("exit", leftBehind);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * One redis-server for the tests of a file: started before the first, stopped after the last. When
 * redis-server is missing, the file's tests are skipped with one line naming the apt package (and
 * fail under CI=true: system-program.ts). The returned function gives the server inside a test.
 */
export function redisServerPerFile(options: RedisServerOptions = {}): () => RedisServer {
  const present = needsProgram(REDIS_SERVER);
  let server: RedisServer | undefined;
  beforeAll(async () => {
    if (present) server = await startRedisServer(options);
  });
  afterAll(async () => {
    await server?.stop();
  });
  return () => {
    if (!server) throw new Error("redisServerPerFile: the redis-server did not start (see the beforeAll error)");
    return server;
  };
}

function launch(port: number, dir: string, password: string | undefined): Promise<ChildProcess> {
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no"];
  if (password !== undefined) args.push("--requirepass", password);
  const child = spawn(REDIS_SERVER_PATH, args, { stdio: ["ignore", "pipe", "pipe"] });
  return new Promise((resolve, reject) => {
    let output = "";
    const guard = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`redis-server on port ${port} did not say it was ready within ${START_GUARD_MS} ms:\n${output}`));
    }, START_GUARD_MS);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (/Ready to accept connections/.test(output)) {
        clearTimeout(guard);
        child.stdout?.off("data", read);
        // Drained from here on, so a chatty server never blocks on a full pipe.
        child.stdout?.resume();
        resolve(child);
      }
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once("error", (error) => {
      clearTimeout(guard);
      reject(error);
    });
    child.once("exit", (code, signal) => {
      clearTimeout(guard);
      reject(new Error(`redis-server on port ${port} exited (${signal ?? `code ${code}`}) before it was ready:\n${output}`));
    });
  });
}

function exitOf(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}
