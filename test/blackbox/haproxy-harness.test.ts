import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { HAPROXY, haproxyConfig, parseStates, type RunningHaproxy, SERVED_BY, startHaproxy } from "../support/haproxy.js";
import { needsProgram } from "../support/system-program.js";

/**
 * The haproxy harness the cluster tests stand on (test/support/haproxy.ts): a real haproxy takes two
 * tiny node:http servers in turns, says which one answered, stops sending requests to one whose
 * health check fails and takes it back once it passes, follows a server to a new port, and is gone
 * once stopped.
 */

/** A stand-in replica: answers its name, and /__sandbox/health with the status the test sets. */
interface Replica {
  name: string;
  port: number;
  health: number;
  close(): Promise<void>;
}

async function replica(name: string): Promise<Replica> {
  const state = { health: 200 };
  const server: Server = createServer((req, res) => {
    if (req.url === "/__sandbox/health") {
      res.writeHead(state.health, { "content-type": "application/json" }).end(JSON.stringify({ status: state.health === 200 ? "ok" : "down" }));
      return;
    }
    res.writeHead(200, { "content-type": "text/plain" }).end(name);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    name,
    port: (server.address() as AddressInfo).port,
    get health() {
      return state.health;
    },
    set health(status: number) {
      state.health = status;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** `n` requests one after another: who answered (the body) and who haproxy says answered (X-Served-By). */
async function answers(proxy: RunningHaproxy, n: number): Promise<Array<{ body: string; servedBy: string | null }>> {
  const out: Array<{ body: string; servedBy: string | null }> = [];
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${proxy.url}/api/v2/payment/anything`);
    out.push({ body: await res.text(), servedBy: res.headers.get(SERVED_BY) });
  }
  return out;
}

describe("test/support/haproxy.ts: a real haproxy in front of replicas", () => {
  const present = needsProgram(HAPROXY);
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const done of cleanup.splice(0).reverse()) await done();
  });

  async function setUp(): Promise<{ a: Replica; b: Replica; proxy: RunningHaproxy }> {
    const a = await replica("a");
    cleanup.push(a.close);
    const b = await replica("b");
    cleanup.push(b.close);
    const proxy = await startHaproxy({ backends: [a, b].map(({ name, port }) => ({ name, port })) });
    cleanup.push(proxy.stop);
    return { a, b, proxy };
  }

  it.runIf(present)("takes the two servers in turns, one request each, and names the one that answered in X-Served-By", async () => {
    const { proxy } = await setUp();
    // A server starts "UP 1/2" (one check short of fully up); the first passed check makes it "UP".
    await proxy.untilStates("both fully up", (s) => s.a === "UP" && s.b === "UP");
    const seen = await answers(proxy, 10);
    for (const { body, servedBy } of seen) expect(servedBy).toBe(body);
    const first = seen[0]!.body;
    const other = first === "a" ? "b" : "a";
    expect(seen.map((s) => s.body)).toEqual([first, other, first, other, first, other, first, other, first, other]);
  });

  it.runIf(present)("stops sending requests to a server whose health answers 503, and takes it back once it answers 200", async () => {
    const { b, proxy } = await setUp();
    b.health = 503;
    await proxy.untilStates("a up, b down", (s) => s.a === "UP" && s.b === "DOWN");
    expect((await answers(proxy, 10)).map((s) => `${s.body}/${s.servedBy}`)).toEqual(Array(10).fill("a/a"));

    b.health = 200;
    await proxy.untilStates("b up again", (s) => s.b === "UP");
    const bodies = (await answers(proxy, 4)).map((s) => s.body).sort();
    expect(bodies).toEqual(["a", "a", "b", "b"]);
  });

  it.runIf(present)("points a server at a new port (a replica restarted elsewhere) and sends it requests there", async () => {
    const { b, proxy } = await setUp();
    const c = await replica("c");
    cleanup.push(c.close);
    await b.close();
    await proxy.untilStates("b down once closed", (s) => s.b === "DOWN");
    await proxy.setBackendPort("b", c.port);
    await proxy.untilStates("b up on its new port", (s) => s.b === "UP");
    // Server b of haproxy now is the process answering "c".
    const seen = (await answers(proxy, 4)).map((s) => `${s.servedBy}:${s.body}`).sort();
    expect(seen).toEqual(["a:a", "a:a", "b:c", "b:c"]);
    await expect(proxy.setBackendPort("nope", c.port)).rejects.toThrow(/^haproxy refused to point nope at 127\.0\.0\.1:\d+: No such server\.$/);
  });

  it.runIf(present)("untilStates is bounded: a state that never comes fails, naming it and the states seen last", async () => {
    const { proxy } = await setUp();
    await expect(proxy.untilStates("a server named z", (s) => "z" in s, 300)).rejects.toThrow(
      /^haproxy: a server named z: not within 300 ms; its servers were last \{"a":"UP( 1\/2)?","b":"UP( 1\/2)?"\}$/,
    );
  });

  it.runIf(present)("stop() ends the haproxy it started, by its PID, and its port refuses connections", async () => {
    const { proxy } = await setUp();
    expect(() => process.kill(proxy.pid, 0)).not.toThrow();
    await proxy.stop();
    expect(() => process.kill(proxy.pid, 0)).toThrow(expect.objectContaining({ code: "ESRCH" }));
    await expect(fetch(proxy.url)).rejects.toThrow("fetch failed");
  });

  it.runIf(present)("a configuration haproxy refuses fails the start with haproxy's own words", async () => {
    await expect(startHaproxy({ backends: [{ name: "a", port: 1, host: "not a host" }] })).rejects.toThrow(
      /^haproxy exited \(1\) before accepting connections on 127\.0\.0\.1:\d+: .*'server sandboxes\/a'/s,
    );
  });
});

describe("haproxyConfig: what the harness writes", () => {
  it("round-robin, no stickiness, health checked on /__sandbox/health, the server's name in X-Served-By", () => {
    const config = haproxyConfig({ backends: [{ name: "r1", port: 4011 }] }, 4010, "/tmp/x/admin.sock");
    for (const line of [
      "  bind 127.0.0.1:4010",
      "  balance roundrobin",
      "  option httpchk GET /__sandbox/health",
      "  http-check expect status 200",
      "  http-response set-header X-Served-By %s",
      "  default-server check inter 200ms fall 2 rise 2",
      "  server r1 127.0.0.1:4011",
      "  timeout tunnel 1h",
    ]) {
      expect(config.split("\n")).toContain(line);
    }
    expect(config).not.toMatch(/^\s*(cookie|stick|hash-type|balance source)/m);
  });

  it("refuses backends it cannot name, twice the same name, or a port that is none, saying which", () => {
    const at = (backends: Array<{ name: string; port: number }>) => () => haproxyConfig({ backends }, 4010, "/tmp/s");
    expect(at([])).toThrow("startHaproxy: give at least one backend ({ name, port })");
    expect(at([{ name: "a b", port: 1 }])).toThrow("startHaproxy: backend name 'a b' must be letters, digits, '.', '_' or '-'");
    expect(
      at([
        { name: "a", port: 1 },
        { name: "a", port: 2 },
      ]),
    ).toThrow("startHaproxy: backend name 'a' is given twice; give each backend its own name");
    expect(at([{ name: "a", port: 70000 }])).toThrow("startHaproxy: backend 'a' has port 70000, not a TCP port");
  });

  it("reads the sandboxes backend's servers and their status from show stat", () => {
    const csv = [
      "# pxname,svname,qcur,status,weight",
      "merchant-api,FRONTEND,,OPEN,",
      "sandboxes,r1,0,UP,1",
      "sandboxes,r2,0,DOWN,1",
      "sandboxes,BACKEND,0,UP,1",
      "",
    ].join("\n");
    expect(parseStates(csv)).toEqual({ r1: "UP", r2: "DOWN" });
    expect(() => parseStates("Unknown command\n")).toThrow("haproxy's 'show stat' answered no CSV header: Unknown command");
  });
});
