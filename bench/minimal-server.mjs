// The floor for start → first 200: a minimal node:http server that listens and answers health,
// started the way the bench starts the sandbox (node, a script, the listening line on stdout).
// The start target is relative to it, measured in the same run: the machine's load moves
// both alike.
import { createServer } from "node:http";

const server = createServer((_req, res) => {
  res.writeHead(200, { "content-type": "application/json" });
  res.end('{"status":"ok"}');
});
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  process.stdout.write(`minimal server listening on http://127.0.0.1:${server.address().port}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
