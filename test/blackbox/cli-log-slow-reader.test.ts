import { type ChildProcess, spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { CLI } from "../support/cli.js";

/**
 * `serve | slow-reader`: a reader that reads 4 KB at a time with a pause between reads keeps stdout
 * full, so the server's writes are partial or fail (EAGAIN) over and over. Whatever the timing, each
 * line must reach the reader exactly once, whole and in order.
 */

const started: ChildProcess[] = [];
afterEach(() => {
  for (const p of started.splice(0)) p.kill("SIGKILL");
});

/** Copies stdin to stdout 4 KB per read, sleeping 10 ms between reads (non-blocking pipes: EAGAIN is waited out). */
const SLOW_READER = `
const fs = require("node:fs");
const buf = Buffer.alloc(4096);
const nap = (ms = 1) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
const retry = (f) => { for (;;) { try { return f(); } catch (e) { if (e.code !== "EAGAIN") throw e; nap(); } } };
for (;;) {
  const n = retry(() => fs.readSync(0, buf, 0, buf.length, null));
  if (n === 0) break;
  for (let off = 0; off < n; ) off += retry(() => fs.writeSync(1, buf, off, n - off));
  nap(10);
}
`;

describe("merchant-sandbox serve: the request log through a slow reader", () => {
  it("reaches a reader that reads slowly in small chunks with every line once, whole, in order", async () => {
    // A shell pipeline, as people run it: the server's stdout is a pipe whose only reader is the slow one.
    // The inner shell prints its pid then becomes the server (exec), so the test can signal it.
    const pipeline = spawn(
      "sh",
      ["-c", `sh -c 'echo $$ >&2; exec "$0" "$1" serve --port 0 --alg HS256' "$0" "$1" | "$0" -e "$2"`, process.execPath, CLI, SLOW_READER],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    started.push(pipeline);
    let out = "";
    let err = "";
    pipeline.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d));
    pipeline.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d));
    const done = new Promise<number | null>((resolve) => pipeline.on("close", (code) => resolve(code)));
    const url = await new Promise<string>((resolve, reject) => {
      pipeline.stdout!.on("data", () => {
        const m = /listening on (http:\/\/[^\s"]+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      void done.then((code) => reject(new Error(`pipeline exited (${code}) before listening: ${err}`)));
    });
    const serverPid = Number(err.split("\n")[0]);
    // ~500-byte lines, 1200 of them (~600 KB: far more than the pipe, less than the 1 MiB that may
    // wait), one request at a time so that the lines' order is the requests' order.
    const prefix = `slow-${"y".repeat(480)}`;
    for (let i = 0; i < 1200; i++) {
      const res = await fetch(`${url}/nope/${prefix}-${i}`);
      await res.arrayBuffer();
      expect(res.status).toBe(404);
    }
    process.kill(serverPid, "SIGTERM");
    expect(await done).toBe(0);
    const lines = out.split("\n");
    expect(lines.pop()).toBe("");
    expect(lines[0]).toMatch(/listening on http:\/\//);
    const requestLines = lines.slice(1, -2);
    const numbers = requestLines.map((l) => {
      const m = new RegExp(`^\\S+ GET /nope/${prefix}-(\\d+) 404 \\d+\\.\\dms code=not_found$`).exec(l);
      return m ? Number(m[1]) : l;
    });
    expect(numbers).toEqual(Array.from({ length: 1200 }, (_, i) => i));
    expect(lines.slice(-2)).toEqual([
      "received SIGTERM, stopping: answering 0 requests in flight in_flight=0 grace=10s",
      expect.stringMatching(/^stopped: 0 requests answered while draining answered=0 cut=0 drain_ms=\d+$/),
    ]);
    expect(err).toBe(`${serverPid}\n`);
  });
});
