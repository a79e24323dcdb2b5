import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type CliProcess, startCliServer } from "../support/cli.js";

/**
 * Bounded memory whatever clients do (docs/configuration.md, Limits): the real CLI on loopback, its
 * journal full of requests with the longest paths the header limit lets through, then 40 clients
 * that ask for the journal and 32 that replay it as events, none of which reads a byte. Before the
 * caps this took the server from 100 MB to over 3 GB, still rising, with every socket held open.
 */

/** The stated bound for the default limits (docs/configuration.md). */
const BOUND_MB = 256;

let server: (CliProcess & { url: string }) | undefined;
const clients: Socket[] = [];
afterEach(() => {
  for (const c of clients.splice(0)) c.destroy();
  server?.child.kill("SIGKILL");
  server = undefined;
});

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
const openSockets = (pid: number) =>
  readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith("socket:");
    } catch {
      return false; // closed while listed
    }
  }).length;

/** Sends `count` GETs of `target` one after another on one keep-alive connection, reading each answer. */
function sendInTurn(port: number, target: string, count: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = connect(port, "127.0.0.1");
    const send = () => s.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    let answered = 0;
    let buffered = "";
    s.setEncoding("latin1").on("data", (d: string) => {
      buffered += d;
      for (let end = buffered.indexOf("\r\n\r\n"); end >= 0; end = buffered.indexOf("\r\n\r\n")) {
        const length = Number(/content-length: (\d+)/i.exec(buffered.slice(0, end))?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        buffered = buffered.slice(end + 4 + length);
        if (++answered === count) {
          s.end();
          return resolve();
        }
        send();
      }
    });
    s.on("error", reject);
    send();
  });
}

/** A client that sends one request and never reads its answer. */
function neverReads(port: number, target: string): void {
  const s = connect(port, "127.0.0.1", () => s.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`));
  s.on("error", () => {});
  s.pause();
  clients.push(s);
}

describe("merchant-sandbox serve: clients that never read", () => {
  it("bounded memory: a full journal of long paths, 40 journal readers and 32 replaying event streams that never read stay under the stated bound, their sockets are closed, health answers", async () => {
    server = await startCliServer(["--write-timeout", "1s"]);
    const pid = server.child.pid!;
    const port = Number(new URL(server.url).port);
    const baseline = openSockets(pid);
    // Backslashes: each is two bytes in the JSON of an answer.
    await sendInTurn(port, `/${"\\".repeat(15_000)}`, 1000);
    for (let i = 0; i < 40; i++) neverReads(port, "/__sandbox/requests");
    for (let i = 0; i < 32; i++) neverReads(port, "/__sandbox/events?since=req_0");

    // Until the server has let go of every one of them (bounded: 40 s, or the bound exceeded), the highest RSS seen.
    let peakMb = rssMb(pid);
    let stillOpen = Number.POSITIVE_INFINITY;
    for (const until = Date.now() + 40_000; Date.now() < until && stillOpen > 0 && peakMb < BOUND_MB; ) {
      await new Promise((r) => setTimeout(r, 100));
      peakMb = Math.max(peakMb, rssMb(pid));
      stillOpen = openSockets(pid) - baseline;
    }
    expect(peakMb).toBeLessThan(BOUND_MB);
    expect(stillOpen).toBe(0);

    const health = await fetch(`${server.url}/__sandbox/health`);
    expect(health.status).toBe(200);
    await health.body?.cancel();
    // Every event-stream place is free again: a new stream is not refused 429.
    const stream = await fetch(`${server.url}/__sandbox/events`);
    expect(stream.status).toBe(200);
    await stream.body?.cancel();
  }, 90_000);
});
