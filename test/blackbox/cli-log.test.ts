import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { startCliServer, untilPrinted, type CliProcess } from "../support/cli.js";

/**
 * The request log of the real binary as its reader sees it. Lines are written in batches (not one
 * write per request), so what matters is that none is lost on the ways out (a drain, a second
 * signal), and that a reader that reads slowly, never, or went away never stops the server.
 */

const started: CliProcess[] = [];
afterEach(() => {
  for (const cli of started.splice(0)) cli.child.kill("SIGKILL");
});

async function serve(args: string[] = []): Promise<CliProcess & { url: string }> {
  const cli = await startCliServer(["--alg", "HS256", ...args]);
  started.push(cli);
  return cli;
}

/** GET each path, `parallel` at a time: resolves with every status, in path order. */
async function getAll(url: string, paths: string[], parallel = 20): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < paths.length; i += parallel) {
    const batch = paths.slice(i, i + parallel).map(async (p) => {
      const res = await fetch(url + p);
      await res.arrayBuffer();
      return res.status;
    });
    statuses.push(...(await Promise.all(batch)));
  }
  return statuses;
}

const paths = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `/nope/${prefix}-${i}`);
/** The numbers of the logged requests to /nope/<prefix>-<n>, in the order of their lines. */
const logged = (out: string, prefix: string) =>
  [...out.matchAll(new RegExp(`^\\S+ GET /nope/${prefix}-(\\d+) 404 \\d+\\.\\dms code=not_found$`, "gm"))].map((m) => Number(m[1]));
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const upTo = (n: number) => Array.from({ length: n }, (_, i) => i);

describe("merchant-sandbox serve: the request log", () => {
  it("has every request's line when the process exits after SIGTERM, before the lines about stopping", async () => {
    const cli = await serve();
    expect(await getAll(cli.url, paths(300, "drain"))).toEqual(Array(300).fill(404));
    // At once: the last lines may still be waiting for their batch to be written.
    cli.child.kill("SIGTERM");
    expect(await cli.exited).toBe(0);
    const out = cli.stdout();
    expect(sorted(logged(out, "drain"))).toEqual(upTo(300));
    const lines = out.trimEnd().split("\n");
    expect(lines.slice(-2)).toEqual([
      "received SIGTERM, stopping: answering 0 requests in flight in_flight=0 grace=10s",
      expect.stringMatching(/^stopped: 0 requests answered while draining answered=0 cut=0 drain_ms=\d+$/),
    ]);
    expect(lines).toHaveLength(1 + 300 + 2);
    expect(cli.stderr()).toBe("");
  });

  it("has every request's line, then the last line, when a second signal stops the process at once (process.exit)", async () => {
    const cli = await serve();
    // A request still sending its body: in flight, so the first signal starts a drain that waits.
    const inFlight = request(`${cli.url}/api/v2/auth/token`, { method: "POST", headers: { "content-type": "application/json" } });
    const cut = new Promise<string>((resolve) => inFlight.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message)));
    inFlight.write('{"api_key":"sandbox-api-key",');
    expect(await getAll(cli.url, paths(100, "cut"))).toEqual(Array(100).fill(404));

    cli.child.kill("SIGTERM");
    await untilPrinted(cli, (out) => out.includes("received SIGTERM, stopping: answering 1 request in flight"));
    cli.child.kill("SIGINT");
    expect(await cli.exited).toBe(130);
    expect(await cut).toBe("ECONNRESET");
    const out = cli.stdout();
    expect(sorted(logged(out, "cut"))).toEqual(upTo(100));
    expect(out).toMatch(
      /\nreceived SIGTERM, stopping: answering 1 request in flight in_flight=1 grace=10s\nreceived SIGINT again, stopping at once cut=1\n$/,
    );
  });

  it("a reader that went away (EPIPE, as `serve | head -1`) does not stop the server, nor its clean exit", async () => {
    const cli = await serve();
    cli.child.stdout!.destroy();
    expect(await getAll(cli.url, paths(200, "epipe"))).toEqual(Array(200).fill(404));
    expect((await fetch(`${cli.url}/__sandbox/health`)).status).toBe(200);
    cli.child.kill("SIGTERM");
    expect(await cli.exited).toBe(0);
    expect(cli.stderr()).toBe("");
  });

  it("a reader that stops reading does not stall the server; its lines wait, and all of them come when it reads again", async () => {
    const cli = await serve();
    cli.child.stdout!.pause();
    // ~1 KB lines, 400 KB in all: far more than a pipe holds (64 KB on Linux), less than may wait (1 MiB).
    const long = paths(400, `slow-${"x".repeat(1000)}`);
    expect(await getAll(cli.url, long)).toEqual(Array(400).fill(404));
    expect((await fetch(`${cli.url}/__sandbox/health`)).status).toBe(200);
    cli.child.stdout!.resume();
    cli.child.kill("SIGTERM");
    expect(await cli.exited).toBe(0);
    expect(sorted(logged(cli.stdout(), `slow-${"x".repeat(1000)}`))).toEqual(upTo(400));
    expect(cli.stdout()).toMatch(/\nstopped: 0 requests answered while draining answered=0 cut=0 drain_ms=\d+\n$/);
  });

  it("a reader that never reads costs a bounded memory: past 1 MiB waiting, lines are dropped whole, and the log goes on once it reads", async () => {
    const cli = await serve();
    cli.child.stdout!.pause();
    // ~1 KB lines, 2.5 MB in all: more than the pipe, the reader's buffer and the 1 MiB that may wait.
    const prefix = `never-${"x".repeat(1000)}`;
    expect(await getAll(cli.url, paths(2500, prefix))).toEqual(Array(2500).fill(404));
    const beforeResume = cli.stdout().length;
    cli.child.stdout!.resume();
    // Once the reader has had far more than the pipe and its own buffer held (~64 KB each), the server
    // has written some of what waited: a new line fits, whatever the timing. A line after the reader
    // came back is written: the log was not given up.
    await untilPrinted(cli, (out) => out.length > beforeResume + 256 * 1024);
    expect((await getAll(cli.url, ["/nope/after-0"]))[0]).toBe(404);
    await untilPrinted(cli, (out) => logged(out, "after").length === 1);
    cli.child.kill("SIGTERM");
    expect(await cli.exited).toBe(0);
    const kept = logged(cli.stdout(), prefix);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(2500);
    // Every line printed is whole: the listening line, the kept lines, the one after, the two about stopping.
    expect(cli.stdout().trimEnd().split("\n")).toHaveLength(1 + kept.length + 1 + 2);
  });
});
