import { internalsOf } from "../../src/app/internals.js";
import { decodeProtectedHeader } from "jose";
import { describe, expect, inject, it } from "vitest";
import { importSigningKey } from "../../src/core/keys.js";
import { POOL_SIZE } from "../support/key-pool.js";
import { testKeySource } from "../support/keys.js";
import { createSession, postJson, serversPerTest, type TestServer } from "../support/server.js";

/**
 * The test-only key source (test/support/keys.ts, createSandbox's `keySource`): test sandboxes
 * take the keys made once per run instead of generating a 2048-bit RSA key each, which was most of
 * the suite's time; a sandbox never gets one key twice; the tests about key generation still
 * generate. Kids are compared with the pool's, so these count keys generated, not time.
 */

const start = serversPerTest();

/** The kids of the run's keys of one algorithm, in the order a sandbox takes them. */
async function poolKids(alg: "RS256" | "ES256" | "HS256"): Promise<string[]> {
  return Promise.all(inject("testKeys")[alg].map(async (text) => (await importSigningKey(alg, text)).kid));
}

async function tokenKid(t: TestServer, apiKey: string, apiSecret: string): Promise<string> {
  const r = await t.call("/api/v2/auth/token", postJson({ api_key: apiKey, api_secret: apiSecret }));
  expect(r.status, r.text).toBe(200);
  return decodeProtectedHeader(r.json.access_token as string).kid!;
}

describe("operation count: test sandboxes generate no key", () => {
  it("a test server starts on the run's first key of each algorithm; another server starts on it too", async () => {
    for (const alg of ["RS256", "ES256", "HS256"] as const) {
      const first = (await poolKids(alg))[0];
      const [a, b] = [await start({ algorithm: alg }), await start({ algorithm: alg })];
      expect(a.sandbox.keys.signing.kid, alg).toBe(first);
      expect(b.sandbox.keys.signing.kid, alg).toBe(first);
      expect(await tokenKid(a, "sandbox-api-key", "sandbox-api-secret"), alg).toBe(first);
    }
  });

  it("sessions of a rotating scenario, and their rotations, take the pool's next keys: every kid differs", async () => {
    const kids = await poolKids("RS256");
    const t = await start({ scenarios: ["signing-key-rotation"] });
    const sessions = [await createSession(t, "signing-key-rotation"), await createSession(t, "signing-key-rotation")];
    const seen = [t.sandbox.keys.signing.kid];
    for (const s of sessions) seen.push(await tokenKid(t, s.merchant.api_key, s.merchant.api_secret));
    const rotated = await t.call(`/__sandbox/sessions/${sessions[0]!.id}/actions`, postJson({ now: { rotate_signing_key: true } }));
    expect(rotated.status, rotated.text).toBe(200);
    seen.push(await tokenKid(t, sessions[0]!.merchant.api_key, sessions[0]!.merchant.api_secret));
    // The sandbox's start key comes first (the default scenario's); then the rotating scenario's
    // own, one per session, and the rotation's: the pool's next four, in order.
    expect(t.sandbox.scenario("default")!.keys.signing.kid).toBe(kids[0]);
    expect(seen).toEqual(kids.slice(1, 5));
  });

  it("a minted foreign_key token is signed with a key that is not the sandbox's, from the pool too", async () => {
    const kids = await poolKids("RS256");
    const t = await start();
    const r = await t.call("/__sandbox/tokens", postJson({ variant: "foreign_key" }));
    expect(r.status, r.text).toBe(201);
    const kid = decodeProtectedHeader(r.json.token as string).kid!;
    expect(kid).toBe(kids[1]);
    expect(internalsOf(t.sandbox).ring.find(kid)).toBeUndefined();
    expect(r.json.expected_error).toBe("token_unknown_kid");
  });

  it("past the pool a sandbox generates: no key comes twice to one sandbox", async () => {
    const source = testKeySource();
    const kids = new Set<string>();
    for (let i = 0; i < POOL_SIZE + 2; i++) kids.add((await source("ES256")).kid);
    expect(kids.size).toBe(POOL_SIZE + 2);
    expect([...kids].slice(0, POOL_SIZE)).toEqual(await poolKids("ES256"));
  });
});

describe("the tests about key generation still generate", () => {
  const generating = serversPerTest({ generateKeys: true });

  it("generateKeys: true: the start key and a rotation's key are none of the run's", async () => {
    const kids = await poolKids("RS256");
    const t = await generating({ scenarios: ["signing-key-rotation"] });
    expect(kids).not.toContain(t.sandbox.keys.signing.kid);
    const s = await createSession(t, "signing-key-rotation");
    const kid = await tokenKid(t, s.merchant.api_key, s.merchant.api_secret);
    expect(kids).not.toContain(kid);
    expect(kid).not.toBe(t.sandbox.keys.signing.kid);
  });
});
