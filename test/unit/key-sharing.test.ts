import { compactVerify } from "jose";
import { describe, expect, it } from "vitest";
import type { Algorithm } from "../../src/core/config.js";
import { signCompactJws } from "../../src/core/jws.js";
import { exportSigningKey, generateSigningKey, importSharedKey, KeyRing, type SigningKey } from "../../src/core/keys.js";
import { ScenarioKeys } from "../../src/core/scenario-keys.js";
import { testKeySource } from "../support/keys.js";

/**
 * Signing keys as replicas share them: exported with their private part, imported back as the same
 * key; a ring that shares hands over the keys it made and takes in the others'; a scenario's keys
 * as kids, restored on a ring that holds them.
 */

/** A token signed with `key`, verified with `other`'s verification key: the same key, or jose throws. */
async function signsAs(key: SigningKey, other: SigningKey): Promise<string> {
  const jws = await signCompactJws({ alg: key.alg, typ: "JWT", kid: key.kid }, { sub: "x" }, key);
  const { payload } = await compactVerify(jws, other.verifyKey);
  return new TextDecoder().decode(payload);
}

async function keyOf(alg: Algorithm): Promise<SigningKey> {
  return alg === "RS256" ? testKeySource()(alg) : generateSigningKey(alg, { extractable: true });
}

describe("a signing key as JSON", () => {
  for (const alg of ["RS256", "ES256", "HS256"] as const) {
    it(`${alg}: imported back, it is the same key (kid, signatures, public JWK)`, async () => {
      const key = await keyOf(alg);
      const json = exportSigningKey(key);
      expect(json.startsWith(`{"kid":"${key.kid}","alg":"${alg}",`)).toBe(true);
      const back = await importSharedKey(json);
      expect([back.kid, back.alg, back.publicJwk]).toEqual([key.kid, key.alg, key.publicJwk]);
      expect(await signsAs(back, key)).toBe('{"sub":"x"}');
      expect(await signsAs(key, back)).toBe('{"sub":"x"}');
      expect(exportSigningKey(back)).toBe(json);
    });
  }

  it("a generated key is extractable only when asked", async () => {
    const plain = await generateSigningKey("ES256");
    const shared = await generateSigningKey("ES256", { extractable: true });
    expect([(plain.privateKey as CryptoKey).extractable, (shared.privateKey as CryptoKey).extractable]).toEqual([false, true]);
  });

  it("refuses what is not a shared key, naming it by kid and never showing the key", async () => {
    const key = await generateSigningKey("HS256");
    const json = JSON.parse(exportSigningKey(key)) as { kid: string; secret: string };
    const other = { ...json, kid: "hs-other" };
    await expect(importSharedKey(JSON.stringify(other))).rejects.toThrow(
      new Error(`a shared signing key 'hs-other' holds the key of kid '${key.kid}'; it must be what exportSigningKey made`),
    );
    await expect(importSharedKey("{")).rejects.toThrow("a shared signing key is not JSON; it must be what exportSigningKey made");
    await expect(importSharedKey('{"kid":"k","alg":"none"}')).rejects.toThrow("a shared signing key has no kid or no known alg");
    const noPrivate = await importSharedKey('{"kid":"k","alg":"ES256","jwk":{"kty":"EC"}}').catch((e: Error) => e.message);
    expect(noPrivate).toBe("a shared signing key 'k' has no private JWK; it must be what exportSigningKey made");
    const broken = await importSharedKey(JSON.stringify({ ...other, kid: key.kid, secret: 5 })).catch((e: Error) => e.message);
    expect(broken).toBe(`a shared signing key '${key.kid}' has no secret; it must be what exportSigningKey made`);
    expect(String(broken)).not.toContain(json.secret);
  });
});

describe("KeyRing sharing", () => {
  it("without shareKeys it keeps nothing to take", async () => {
    const ring = new KeyRing(undefined, undefined, testKeySource());
    await ring.startKey("ES256");
    await ring.generate("ES256");
    expect(ring.takeNewKeys()).toEqual([]);
  });

  it("shares the keys it made (the earlier ones first), once; another ring takes them in once", async () => {
    const a = new KeyRing();
    const start = await a.startKey("ES256");
    a.shareKeys();
    const rotated = await a.generate("ES256");
    expect((rotated.privateKey as CryptoKey).extractable).toBe(true);
    const taken = a.takeNewKeys();
    expect(taken.map((k) => k.kid)).toEqual([start.kid, rotated.kid]);
    expect(taken.map((k) => k.json)).toEqual([exportSigningKey(start), exportSigningKey(rotated)]);
    expect(a.takeNewKeys()).toEqual([]);
    const b = new KeyRing();
    await b.absorbKeys(taken.map((k) => k.json));
    // Outside the ring until a scenario here uses one: not found, not published, no algorithm of its.
    expect([b.find(start.kid), b.size, b.hasAlgorithm("ES256"), b.jwks([start.kid])]).toEqual([undefined, 0, false, { keys: [] }]);
    expect(b.verifier(start.kid)?.publicJwk).toEqual(start.publicJwk);
    const held = b.held(start.kid);
    expect([held.publicJwk, b.held(rotated.kid).publicJwk]).toEqual([start.publicJwk, rotated.publicJwk]);
    expect([b.find(start.kid), b.size, b.jwks([start.kid])]).toEqual([held, 2, { keys: [start.publicJwk] }]);
    await b.absorbKeys(taken.map((k) => k.json));
    expect(b.find(start.kid)).toBe(held);
    expect(b.size).toBe(2);
    // Taken in, not made here: not b's to share.
    b.shareKeys();
    expect(b.takeNewKeys().map((k) => k.kid)).toEqual([]);
  });

  it("never shares the configured key: each replica is given it", async () => {
    const pem = (await import("node:crypto")).generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "pem" });
    const ring = new KeyRing({ alg: "ES256", text: String(pem) });
    const configured = await ring.startKey("ES256");
    ring.shareKeys();
    const made = await ring.generate("ES256");
    expect(ring.takeNewKeys().map((k) => k.kid)).toEqual([made.kid]);
    expect(ring.startKids()).toEqual({ ES256: configured.kid });
  });

  it("a key it let go is not taken back in, and absorbing known keys imports nothing", async () => {
    const a = new KeyRing();
    a.shareKeys();
    const gone = await a.generate("HS256");
    const json = a.takeNewKeys()[0]!.json;
    a.retire([gone.kid], false);
    await a.absorbKeys([json]);
    expect(a.find(gone.kid)).toBeUndefined();
    // A key it holds is skipped before any parsing: a broken body behind a known kid is not read.
    const b = new KeyRing();
    await b.absorbKeys([json]);
    await b.absorbKeys([`{"kid":"${gone.kid}","alg":"HS256","secret":5}`]);
    expect(b.held(gone.kid).kid).toBe(gone.kid);
  });

  it("takes in the readable keys of a batch and rejects naming those it could not read", async () => {
    const key = await generateSigningKey("HS256");
    const ring = new KeyRing();
    await expect(ring.absorbKeys(["{", exportSigningKey(key)])).rejects.toThrow(
      "1 shared signing key(s) could not be absorbed: a shared signing key is not JSON; it must be what exportSigningKey made",
    );
    expect(ring.held(key.kid).kid).toBe(key.kid);
  });

  it("keys taken in that no scenario here uses stay bounded: the oldest are kept only to verify", async () => {
    const ring = new KeyRing();
    const keys = await Promise.all(Array.from({ length: KeyRing.MAX_UNCLAIMED + 2 }, () => generateSigningKey("HS256")));
    await ring.absorbKeys(keys.slice(0, 2).map(exportSigningKey));
    ring.held(keys[0]!.kid);
    await ring.absorbKeys(keys.slice(2).map(exportSigningKey));
    expect(ring.held(keys.at(-1)!.kid).kid).toBe(keys.at(-1)!.kid);
    expect(ring.held(keys[2]!.kid).kid).toBe(keys[2]!.kid);
    expect(() => ring.held(keys[1]!.kid)).toThrow(/holds no key/);
    expect(ring.verifier(keys[1]!.kid)?.kid).toBe(keys[1]!.kid);
    expect([ring.size, ring.retiredCount]).toEqual([3, 1]);
  });

  it("adopts the start key another replica made: scenarios started later sign with it", async () => {
    const a = new KeyRing();
    a.shareKeys();
    const start = await a.startKey("ES256");
    expect(a.startKids()).toEqual({ ES256: start.kid });
    const b = new KeyRing();
    await b.absorbKeys(a.takeNewKeys().map((k) => k.json));
    b.adoptStartKey("ES256", start.kid);
    expect((await b.startKey("ES256")).kid).toBe(start.kid);
    expect(b.startKids()).toEqual({ ES256: start.kid });
    expect(() => b.adoptStartKey("RS256", start.kid)).toThrow(`the key '${start.kid}' is an ES256 key, not an RS256 start key`);
    expect(() => b.adoptStartKey("ES256", "nope")).toThrow(
      "the key ring holds no key 'nope' that a shared scenario state names; absorb the shared keys (absorbKeys) before restoring the states",
    );
  });
});

describe("ScenarioKeys state", () => {
  /** Two replicas' copies of one rotating scenario: each started on a key of its own. */
  async function copies() {
    const ringA = new KeyRing();
    ringA.shareKeys();
    const ringB = new KeyRing();
    const a = new ScenarioKeys(ringA, await ringA.generate("ES256"), true);
    const bStart = await ringB.generate("ES256");
    const b = new ScenarioKeys(ringB, bStart, true);
    return { ringA, ringB, a, b, bStart };
  }

  it("restored on another ring holding the keys, it signs and accepts as the original; keys it made and no longer uses leave", async () => {
    const { ringA, ringB, a, b, bStart } = await copies();
    const first = await a.rotate(true);
    const second = await a.rotate(true);
    const third = await a.rotate(false);
    await ringB.absorbKeys(ringA.takeNewKeys().map((k) => k.json));
    const state = JSON.parse(JSON.stringify(a.toState()));
    expect(state).toEqual({ accepted: [third!.kid], own: [state.start, third!.kid], start: state.start, current: third!.kid });
    b.restore(state);
    expect(JSON.stringify(b.toState())).toBe(JSON.stringify(a.toState()));
    expect(b.signing.kid).toBe(third!.kid);
    expect([...b.accepted]).toEqual([third!.kid]);
    expect(ringB.find(bStart.kid)).toBeUndefined();
    // The keys rotated away left A's ring; B never used them: they are not in its ring either.
    expect([first, second].flatMap((k) => [ringA.find(k!.kid), ringB.find(k!.kid)])).toEqual([undefined, undefined, undefined, undefined]);
    expect(ringB.size).toBe(ringA.size);
    b.reset();
    a.reset();
    expect(JSON.stringify(b.toState())).toBe(JSON.stringify(a.toState()));
    expect(b.signing.kid).toBe(state.start);
  });

  it("refuses a state naming a key the ring lacks, and stays as it was", async () => {
    const { b, bStart } = await copies();
    const before = JSON.stringify(b.toState());
    expect(() => b.restore({ start: bStart.kid, current: "kid-elsewhere", accepted: ["kid-elsewhere"], own: [] })).toThrow(
      "the key ring holds no key 'kid-elsewhere' that a shared scenario state names; absorb the shared keys (absorbKeys) before restoring the states",
    );
    expect(() => b.restore({ start: bStart.kid, accepted: [], own: [] })).toThrow(/both a start and a current kid, or neither/);
    expect(() => b.restore({ accepted: "x", own: [] } as never)).toThrow(/needs accepted: a list of kids/);
    expect(JSON.stringify(b.toState())).toBe(before);
  });

  it("a start key still on its way does not undo a state restored meanwhile", async () => {
    const ringA = new KeyRing();
    const a = new ScenarioKeys(ringA, await ringA.startKey("ES256"));
    ringA.shareKeys();
    const ringB = new KeyRing();
    await ringB.absorbKeys(ringA.takeNewKeys().map((k) => k.json));
    let arrive: (key: SigningKey) => void = () => {};
    const late = await generateSigningKey("ES256");
    const b = new ScenarioKeys(ringB, new Promise<SigningKey>((resolve) => (arrive = resolve)), true);
    b.restore(a.toState());
    arrive(late);
    await ringB.ready;
    expect(b.signing.kid).toBe(a.signing.kid);
    expect(JSON.stringify(b.toState())).toBe(JSON.stringify(a.toState()));
  });
});
