// `npm start`: build when the sources changed since the last build (tools/build-if-stale.mjs), then
// run the CLI (`serve` and whatever follows `npm start --`) from dist/, and stop it when `npm start`
// is told to stop.
//
// Why a process between npm and the server, and why package.json runs it with `exec`:
// - npm runs a script as `sh -c '<script> <args>'` and, on SIGTERM or SIGINT, forwards the signal
//   to that shell only. Debian's and Ubuntu's /bin/sh (dash 0.5.12) forks for the last command
//   instead of replacing itself with it, so the forwarded SIGTERM killed the shell and left
//   `node … serve` running, orphaned, still holding the port. `exec` makes this script the process
//   npm signals, with any shell.
// - A Ctrl-C in a terminal reaches every process of the foreground group (npm, and whatever it
//   runs) AND is forwarded by npm: a server in that group got SIGINT twice, and `serve` takes a
//   second signal as "stop at once, cut the requests in flight". So the server runs in a process
//   group of its own and gets its signals from here only: the same signal twice within
//   SAME_SIGNAL_MS is one Ctrl-C delivered twice and passed on once; a later one is passed on (a
//   second Ctrl-C still stops at once). SIGHUP (the terminal closed) is passed on as SIGTERM.
// This script exits when the server has exited, with its exit code, so npm (and whatever waits on
// npm) knows the port is free when `npm start` ends.
import { spawn } from "node:child_process";
import { constants } from "node:os";
import { fileURLToPath } from "node:url";
import { buildIfStale } from "./build-if-stale.mjs";

const SAME_SIGNAL_MS = 500;
const CLI = fileURLToPath(new URL("../dist/bin/main.js", import.meta.url));

const built = await buildIfStale();
if (built !== 0) process.exit(built);

// The same node flags as the image's ENTRYPOINT and the benchmarks.
const server = spawn(process.execPath, ["--max-semi-space-size=2", CLI, ...process.argv.slice(2)], {
  stdio: ["ignore", "inherit", "inherit"],
  detached: process.platform !== "win32",
});

const lastSent = new Map();
const relay = (received) => {
  const signal = received === "SIGHUP" ? "SIGTERM" : received;
  const now = performance.now();
  const last = lastSent.get(signal);
  if (last !== undefined && now - last < SAME_SIGNAL_MS) return;
  lastSent.set(signal, now);
  server.kill(signal);
};
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, relay);

server.on("error", (e) => {
  console.error(`merchant-sandbox: could not start ${CLI}: ${e.message}`);
  process.exit(1);
});
server.on("exit", (code, signal) => {
  // Killed by a signal (SIGKILL, or one it does not handle): report it as a shell would.
  process.exit(code ?? 128 + (constants.signals[signal] ?? 0));
});
