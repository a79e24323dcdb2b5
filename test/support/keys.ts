import { inject } from "vitest";
import { createSandbox, type Sandbox, type SandboxOptions } from "../../src/app/sandbox.js";
import type { Algorithm } from "../../src/core/config.js";
import { generateSigningKey, importSigningKey, type KeySource, type SigningKey } from "../../src/core/keys.js";

/**
 * Test sandboxes' keys: the ones made once per run (test/support/key-pool.ts) instead of a new
 * 2048-bit RSA key per sandbox. Each sandbox takes the pool's keys in order, from the first: its
 * start key, then one per rotation (or session of a rotating scenario, or minted foreign key), so
 * no key comes twice to one sandbox; past the pool it generates. Two sandboxes thus start on the
 * same key, like replicas given one signing key: a test about keys differing between sandboxes, or
 * about generation itself, asks for generated keys (`generateKeys: true`).
 */
export interface TestKeyOptions {
  /** Generate every key as the sandbox does outside the tests: for the tests about key generation. */
  generateKeys?: boolean;
}

/** The pool's keys, imported once per test file (a SigningKey is never changed once made). */
const imported = new Map<string, Promise<SigningKey>>();

function pooled(alg: Algorithm, index: number, text: string): Promise<SigningKey> {
  const id = `${alg}:${index}`;
  let key = imported.get(id);
  if (!key) {
    key = importSigningKey(alg, text);
    imported.set(id, key);
  }
  return key;
}

/** A key source for one sandbox: the pool's keys in order, then generated ones. */
export function testKeySource(): KeySource {
  const taken: Partial<Record<Algorithm, number>> = {};
  return (alg) => {
    const index = taken[alg] ?? 0;
    taken[alg] = index + 1;
    const text = inject("testKeys")[alg][index];
    return text === undefined ? generateSigningKey(alg) : pooled(alg, index, text);
  };
}

/** The options with the test key source, unless the test gives its own keys or asks for generated ones. */
export function withTestKeys(options: SandboxOptions & TestKeyOptions): SandboxOptions {
  const { generateKeys, ...rest } = options;
  return generateKeys || rest.keySource !== undefined ? rest : { ...rest, keySource: testKeySource() };
}

/** createSandbox with the run's keys (see withTestKeys). */
export function testSandbox(options: SandboxOptions & TestKeyOptions = {}): Promise<Sandbox> {
  return createSandbox(withTestKeys(options));
}
