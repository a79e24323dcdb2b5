import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliProcess, startCliServer } from "../support/cli.js";

/**
 * Issue 23 §2: finding JWT-shaped runs in attacker text restarted at every `eyJ` of a run and read
 * on to its end. With no credentials, `GET /s/<eyJ × 5260>/api` cost 0.4–1.2 s of the event loop
 * (eight in flight kept health waiting 3–8 s), and POST /__sandbox/scan of a 60 KB run 1.3–2.3 s.
 * The server runs as a child process (the real CLI), as in glob-worst-case.test.ts: on the old
 * code this test's own event loop stays free and it fails by its bound (32 paths: 20–40 s of the
 * server's loop) instead of hanging the runner.
 */

let cli: CliProcess & { url: string };

beforeAll(async () => {
  cli = await startCliServer(["--log-format", "off"]);
});

afterAll(() => {
  // SIGKILL: on the old code the server may still be busy in a regular expression.
  cli?.child.kill("SIGKILL");
});

/** The longest path Node's default header limit (16 KB) lets through with room for the rest. */
const EYJ_PATH = `/s/${"eyJ".repeat(5260)}/api`;
const KB60 = 60 * 1024;
const SCAN_TEXTS = [
  "eyJ".repeat(KB60 / 3),
  "eyJ.".repeat(KB60 / 4),
  `${"eyJ".repeat(KB60 / 6)}.${"eyJ".repeat(KB60 / 6)}.`,
  "eyJa.b/".repeat(KB60 / 7),
];

async function health(): Promise<{ status: number; at: number }> {
  const res = await fetch(`${cli.url}/__sandbox/health`);
  await res.arrayBuffer();
  return { status: res.status, at: performance.now() };
}

describe("linear scan: JWT-shaped runs in attacker text cost a pass over it (issue 23 §2)", () => {
  it("health keeps answering while 32 paths of eyJ × 5260 under /s/…/ are redacted, each a 404 naming the session cut short", async () => {
    const started = performance.now();
    const [replies, healths] = await Promise.all([
      Promise.all(
        Array.from({ length: 32 }, async () => {
          const res = await fetch(cli.url + EYJ_PATH);
          return { status: res.status, body: (await res.json()) as { code: string; detail: string } };
        }),
      ),
      Promise.all(Array.from({ length: 12 }, () => health())),
    ]);
    for (const r of replies) {
      expect(r.status).toBe(404);
      expect(r.body.code).toBe("session_url_unknown");
      // Not a JWT (no dot): shown, cut to 64 characters.
      expect(r.body.detail).toMatch(/^There is no session '(eyJ){21}e' for this base URL/);
    }
    expect(healths.map((h) => h.status)).toEqual(healths.map(() => 200));
    // Generous: milliseconds each here; the former search held the loop 20–40 s for these 32.
    expect(Math.max(...healths.map((h) => h.at)) - started).toBeLessThan(10_000);
  });

  it("health keeps answering while POST /__sandbox/scan reads twelve 60 KB runs of eyJ, and eyJ. and short JWT shapes (none verifies: no hits)", async () => {
    const started = performance.now();
    const [replies, healths] = await Promise.all([
      Promise.all(
        [...Array.from({ length: 12 }, () => SCAN_TEXTS[0]!), ...SCAN_TEXTS.slice(1)].map(async (text) => {
          const res = await fetch(`${cli.url}/__sandbox/scan`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ text }),
          });
          return { status: res.status, body: await res.json() };
        }),
      ),
      Promise.all(Array.from({ length: 12 }, () => health())),
    ]);
    expect(replies).toEqual(replies.map(() => ({ status: 200, body: { hits: [] } })));
    expect(healths.map((h) => h.status)).toEqual(healths.map(() => 200));
    // Generous: the former search took 1.3 s for each eyJ run, 16 s for these twelve.
    expect(Math.max(...healths.map((h) => h.at)) - started).toBeLessThan(10_000);
  });
});
