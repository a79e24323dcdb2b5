import { createHash } from "node:crypto";
import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP link to a redis-server that can be made slow on purpose: `holdAfter(script, ms)` holds
 * every reply Redis sends on a connection from the moment that connection carries `script` (its
 * text, as a client's first EVAL sends it, or its SHA1, as EVALSHA does) until `ms` later, then
 * delivers them in order, as a link that stalled would. Requests always pass at once, so Redis runs them; only their answers are late.
 * Loopback only; `close()` ends every connection it made.
 */
export interface SlowLink {
  /** redis://127.0.0.1:PORT/0 of the link. */
  readonly url: string;
  holdAfter(script: string, ms: number): void;
  /** How many times a hold began. */
  readonly holds: number;
  close(): Promise<void>;
}

/** The SHA1 EVALSHA names a script by. */
export function scriptSha(lua: string): string {
  return createHash("sha1").update(lua).digest("hex");
}

export async function startSlowLink(redisPort: number): Promise<SlowLink> {
  const sockets = new Set<Socket>();
  let armed: { markers: Buffer[]; ms: number } | undefined;
  let holds = 0;
  const server: Server = createServer((client) => {
    const upstream = connect(redisPort, "127.0.0.1");
    sockets.add(client);
    sockets.add(upstream);
    let releaseAt = 0;
    const waiting: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    const flush = () => {
      timer = undefined;
      for (const chunk of waiting.splice(0)) client.write(chunk);
    };
    client.on("data", (chunk) => {
      if (armed?.markers.some((m) => chunk.includes(m))) {
        releaseAt = Date.now() + armed!.ms;
        armed = undefined;
        holds++;
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk) => {
      if (Date.now() < releaseAt || waiting.length > 0) {
        waiting.push(chunk);
        timer ??= setTimeout(flush, Math.max(0, releaseAt - Date.now()));
        return;
      }
      client.write(chunk);
    });
    const end = () => {
      if (timer) clearTimeout(timer);
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("close", end);
    upstream.on("close", end);
    client.on("error", end);
    upstream.on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `redis://127.0.0.1:${port}/0`,
    holdAfter(script, ms) {
      armed = { markers: [Buffer.from(scriptSha(script)), Buffer.from(script.slice(0, 200))], ms };
    },
    get holds() {
      return holds;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
