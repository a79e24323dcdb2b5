import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";

/**
 * A provider that answers every request with a body no client should read whole, for calibrate's
 * limits: `endless`, a JSON string that goes on (up to `bytes`, written only as fast as the client
 * reads); `gzip-bomb`, a small gzip body (concatenated members of a megabyte of zeros each) that
 * inflates to `bytes`. It counts what it wrote, so a test sees how much calibrate read.
 */

export interface HostileProvider {
  url: string;
  /** Body bytes written so far, over every request. */
  written(): number;
  requests(): number;
  close(): Promise<void>;
}

const MEGABYTE = 1024 * 1024;

export async function startHostileProvider(kind: "endless" | "gzip-bomb", bytes: number): Promise<HostileProvider> {
  let written = 0;
  let requests = 0;
  const bomb =
    kind === "gzip-bomb" ? Buffer.concat(Array.from({ length: Math.ceil(bytes / MEGABYTE) }, () => gzipSync(Buffer.alloc(MEGABYTE)))) : undefined;
  const server = createServer((req, res) => {
    requests++;
    req.resume();
    req.on("end", () => {
      if (bomb) {
        res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip", "content-length": bomb.length });
        written += bomb.length;
        res.end(bomb);
      } else {
        res.writeHead(200, { "content-type": "application/json" });
        void endless(res, bytes, (n) => (written += n));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    written: () => written,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Writes `{"token":"aaaa…` until `bytes` or the client goes, waiting for each chunk to drain. */
async function endless(res: ServerResponse, bytes: number, count: (n: number) => void): Promise<void> {
  const chunk = Buffer.alloc(64 * 1024, "a");
  res.write('{"token":"');
  for (let sent = 0; sent < bytes && !res.destroyed; sent += chunk.length) {
    count(chunk.length);
    if (!res.write(chunk)) await drainedOrClosed(res);
  }
  if (!res.destroyed) res.end('"}');
}

function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}
