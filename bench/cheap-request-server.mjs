// The bare servers of `npm run bench:cheap-request` (bench/cheap-request.mjs), one per mode:
//   BARE=small    node:http answering every request with a fixed ~30-byte JSON body (the floor)
//   BARE=same     the same, with the bytes and headers of the sandbox's own 404 (ANSWER, JSON)
//   BARE=handle   node:http handing each request to the built library's sandbox.handle(), timing
//                 each call and V8's garbage collections; GET /__bench/timings answers them
// Each prints "listening on <url>" and answers GET /__sandbox/health 200, as the harness waits for.
import { createServer } from "node:http";
import { PerformanceObserver } from "node:perf_hooks";
import { pathToFileURL } from "node:url";

const mode = process.env.BARE;
const health = JSON.stringify({ status: "ok" });
const fixed =
  mode === "same"
    ? JSON.parse(process.env.ANSWER)
    : { status: 404, headers: { "content-type": "application/json", "cache-control": "no-store" }, body: JSON.stringify({ error: "not_found" }) };

const sandbox = mode === "handle" ? await (await import(pathToFileURL(`${process.env.BUILD}/dist/index.js`).href)).createSandbox() : undefined;
await sandbox?.ready;
const timings = { requests: 0, handleMs: 0, gcMs: 0 };
if (sandbox) {
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) timings.gcMs += entry.duration;
  }).observe({ entryTypes: ["gc"] });
}

function send(res, { status, headers, body }) {
  const flat = [];
  for (const name in headers) flat.push(name, headers[name]);
  flat.push("content-length", String(Buffer.byteLength(body)));
  res.writeHead(status, flat);
  res.end(body);
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", async () => {
    if (req.url === "/__sandbox/health") return send(res, { status: 200, headers: { "content-type": "application/json" }, body: health });
    if (req.url === "/__bench/timings")
      return send(res, { status: 200, headers: { "content-type": "application/json" }, body: JSON.stringify(timings) });
    if (!sandbox) return send(res, fixed);
    const q = req.url.indexOf("?");
    const request = {
      method: req.method,
      path: q < 0 ? req.url : req.url.slice(0, q),
      query: q < 0 ? "" : req.url.slice(q + 1),
      headers: req.headers,
      body: chunks.length ? Buffer.concat(chunks) : new Uint8Array(),
    };
    const started = performance.now();
    const answer = await sandbox.handle(request);
    timings.handleMs += performance.now() - started;
    timings.requests++;
    send(res, answer);
  });
});
server.listen(0, "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
process.once("SIGTERM", () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
