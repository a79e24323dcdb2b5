import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/**
 * Runs the real CLI as users run it (dist/bin/main.js, compiled and bundled by test/support/build.ts before any test)
 * as a child process and collects everything it prints.
 */
export const CLI = fileURLToPath(new URL("../../dist/bin/main.js", import.meta.url));

export interface CliProcess {
  child: ChildProcess;
  /** Everything printed so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or signal name) when the process ends. */
  exited: Promise<number | string>;
}

export function runCli(args: string[], env: Record<string, string> = {}): CliProcess {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...cleanEnv(), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d));
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d));
  const exited = new Promise<number | string>((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal ?? -1)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

export interface FinishedRun {
  code: number | string;
  stdout: string;
  stderr: string;
}

/** Runs the CLI to its end: its exit code (or signal name) and everything it printed. */
export async function runCliToEnd(args: string[], env: Record<string, string> = {}): Promise<FinishedRun> {
  const cli = runCli(args, env);
  const code = await cli.exited;
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

export interface MeasuredRun extends FinishedRun {
  /** The process's peak resident memory, in bytes. */
  maxRssBytes: number;
}

/** Runs the CLI to its end and reports, besides what it printed, the most memory it ever held. */
export async function runCliMeasured(args: string[], env: Record<string, string> = {}): Promise<MeasuredRun> {
  const dir = mkdtempSync(join(tmpdir(), "max-rss-"));
  const file = join(dir, "max-rss");
  const preload = pathToFileURL(fileURLToPath(new URL("./report-max-rss.mjs", import.meta.url))).href;
  try {
    const cli = runCli(args, { ...env, NODE_OPTIONS: `--import=${preload}`, MAX_RSS_FILE: file });
    const code = await cli.exited;
    return { code, stdout: cli.stdout(), stderr: cli.stderr(), maxRssBytes: Number(readFileSync(file, "utf8")) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Starts `serve` on a free port and resolves with its URL once it says it is listening. */
export async function startCliServer(args: string[] = [], env: Record<string, string> = {}): Promise<CliProcess & { url: string }> {
  const cli = runCli(["serve", "--port", "0", ...args], env);
  const url = await new Promise<string>((resolve, reject) => {
    const onData = () => {
      const m = /listening on (http:\/\/[^\s"]+)/.exec(cli.stdout());
      if (!m) return;
      // Not searched again on every later chunk: a long log would make that quadratic.
      cli.child.stdout!.off("data", onData);
      resolve(m[1]!);
    };
    cli.child.stdout!.on("data", onData);
    void cli.exited.then((code) => reject(new Error(`CLI exited (${code}) before listening: ${cli.stderr()}`)));
  });
  return { ...cli, url };
}

/**
 * Resolves once what the process printed on stdout satisfies `done`. The request log is written in
 * batches, a few milliseconds after the request at most: a test waits for its line rather than
 * sleeping (the test's timeout bounds the wait). Rejects if the process exits first, with the end of
 * what it printed, so a line that never comes fails at once and says what came instead.
 */
export function untilPrinted(cli: CliProcess, done: (stdout: string) => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const look = () => {
      if (settled || !done(cli.stdout())) return false;
      settled = true;
      cli.child.stdout!.off("data", look);
      resolve();
      return true;
    };
    if (look()) return;
    cli.child.stdout!.on("data", look);
    // 'close', not 'exit': stdout may still hold the last lines when the process exits.
    cli.child.once("close", (code, signal) => {
      if (look() || settled) return;
      settled = true;
      cli.child.stdout!.off("data", look);
      reject(
        new Error(
          `the CLI exited (${code ?? signal}) before printing what was awaited; stdout ended with: ${JSON.stringify(cli.stdout().slice(-500))}`,
        ),
      );
    });
  });
}

/** The environment without any MERCHANT_SANDBOX_* variable of the machine running the tests. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("MERCHANT_SANDBOX_")));
}
