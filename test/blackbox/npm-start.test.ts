import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { connect } from "node:net";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

/**
 * `npm start` as a user runs it, through npm and its shell: it serves from the built tree (the
 * test setup built it; nothing is rebuilt), and a stop signal to npm stops the server, not only
 * npm. Before, npm forwarded SIGTERM to its `sh -c`, dash died without passing it on, and
 * `node … serve` kept running and holding the port.
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

interface NpmStart {
  npm: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | string>;
  url: string;
}

const started: ChildProcess[] = [];
const serverPids: number[] = [];
afterEach(() => {
  // A failed assertion must not leave processes behind: npm's group, then the server's.
  for (const npm of started.splice(0)) signalGroup(npm.pid!, "SIGKILL");
  for (const pid of serverPids.splice(0)) signalGroup(pid, "SIGKILL");
});

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Gone already.
  }
}

/** `npm start -- --port 0` in a process group of its own (as a terminal runs a job); resolves once it listens. */
async function npmStart(): Promise<NpmStart> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("MERCHANT_SANDBOX_")));
  const npm = spawn("npm", ["start", "--", "--port", "0"], { cwd: ROOT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  started.push(npm);
  let out = "";
  let err = "";
  npm.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d));
  npm.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d));
  const exited = new Promise<number | string>((resolve) => npm.on("exit", (code, signal) => resolve(code ?? signal ?? -1)));
  const url = await new Promise<string>((resolve, reject) => {
    const look = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    };
    npm.stdout!.on("data", look);
    void exited.then((code) => reject(new Error(`npm start exited (${code}) before listening: ${err}`)));
  });
  return { npm, stdout: () => out, stderr: () => err, exited, url };
}

/** The pid of the `serve` process among npm's descendants (ps works alike on Linux and macOS). */
function serverPid(npmPid: number): number {
  const rows = execFileSync("ps", ["-A", "-o", "pid=,ppid=,args="], { encoding: "utf8" })
    .split("\n")
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((m) => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3]! }));
  const descendants = (pid: number): typeof rows => rows.filter((r) => r.ppid === pid).flatMap((r) => [r, ...descendants(r.pid)]);
  const servers = descendants(npmPid).filter((r) => r.args.includes("dist/bin/main.js serve --port 0"));
  expect(servers, `one serve process under npm (pid ${npmPid})`).toHaveLength(1);
  serverPids.push(servers[0]!.pid);
  return servers[0]!.pid;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/** "open" or the error code of a TCP connect to the server's port. */
function portState(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.on("connect", () => {
      socket.destroy();
      resolve("open");
    });
    socket.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

const lines = (text: string, pattern: RegExp) => text.split("\n").filter((l) => pattern.test(l));

describe("npm start", () => {
  it("serves from the built tree without building, and SIGTERM to npm stops the server: npm exits 0 once the port is free", async () => {
    const start = await npmStart();
    const health = await fetch(`${start.url}/__sandbox/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok", version: expect.any(String), scenarios: ["default"] });
    expect(start.stderr()).not.toContain("building dist/");
    const pid = serverPid(start.npm.pid!);

    process.kill(start.npm.pid!, "SIGTERM");
    expect(await start.exited).toBe(0);
    expect(alive(pid)).toBe(false);
    expect(await portState(start.url)).toBe("ECONNREFUSED");
    expect(lines(start.stdout(), /^received SIG/)).toEqual(["received SIGTERM, stopping: answering 0 requests in flight in_flight=0 grace=10s"]);
    const stopped = lines(start.stdout(), /^stopped:/);
    expect(stopped).toHaveLength(1);
    expect(stopped[0]).toMatch(/^stopped: 0 requests answered while draining answered=0 cut=0 drain_ms=\d+$/);
  });

  it("Ctrl-C (SIGINT to the whole foreground group, which npm also forwards) is one graceful stop, not 'received SIGINT again, stopping at once'", async () => {
    const start = await npmStart();
    const pid = serverPid(start.npm.pid!);

    process.kill(-start.npm.pid!, "SIGINT");
    expect(await start.exited).toBe(0);
    expect(alive(pid)).toBe(false);
    expect(await portState(start.url)).toBe("ECONNREFUSED");
    expect(lines(start.stdout(), /^received SIG/)).toEqual(["received SIGINT, stopping: answering 0 requests in flight in_flight=0 grace=10s"]);
  });
});
