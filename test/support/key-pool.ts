import { generateKeyPair, randomBytes } from "node:crypto";
import { promisify } from "node:util";
import type { TestProject } from "vitest/node";
import type { Algorithm } from "../../src/core/config.js";

/**
 * vitest globalSetup: the signing keys test sandboxes start with, made once per run and handed to
 * every test file (`inject("testKeys")`, read by test/support/keys.ts). A generated 2048-bit RSA key
 * is most of a test sandbox's start (docs/performance.md); the tests about key generation still
 * generate (`generateKeys: true`). A few keys per algorithm: a sandbox takes them in order, so its
 * rotations and sessions of rotating scenarios get keys of different kids, as generated ones would.
 */
export const POOL_SIZE = 6;

export type TestKeys = Record<Algorithm, string[]>;

declare module "vitest" {
  export interface ProvidedContext {
    testKeys: TestKeys;
  }
}

const generate = promisify(generateKeyPair);
const PKCS8 = { type: "pkcs8", format: "pem" } as const;
const SPKI = { type: "spki", format: "pem" } as const;

export default async function keyPool(project: TestProject): Promise<void> {
  const many = <T>(make: () => Promise<T>) => Promise.all(Array.from({ length: POOL_SIZE }, make));
  const [rsa, ec] = await Promise.all([
    many(() => generate("rsa", { modulusLength: 2048, privateKeyEncoding: PKCS8, publicKeyEncoding: SPKI })),
    many(() => generate("ec", { namedCurve: "P-256", privateKeyEncoding: PKCS8, publicKeyEncoding: SPKI })),
  ]);
  project.provide("testKeys", {
    RS256: rsa.map((k) => k.privateKey),
    ES256: ec.map((k) => k.privateKey),
    // importSigningKey takes an HS256 key's text as its bytes: 43 characters, over the 32 bytes it needs.
    HS256: Array.from({ length: POOL_SIZE }, () => randomBytes(32).toString("base64url")),
  });
}
