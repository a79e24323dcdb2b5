import type { Algorithm } from "../core/config.js";
import { generateSigningKey, type SigningKey } from "../core/keys.js";

/**
 * For `serve`, RSA key generation (~100 ms, on libuv's thread pool) starts as soon as the CLI begins
 * loading, so it overlaps the loading of the rest of the program instead of following it. Only
 * for `serve` with the default algorithm; the key is handed to createSandbox explicitly.
 */
const ALGORITHM: Algorithm = "RS256";
const wanted = process.argv.slice(2).includes("serve") && !process.argv.some((a) => a.startsWith("--signing-key") || a.startsWith("--alg"));

export const earlyStartKey: { alg: Algorithm; key: Promise<SigningKey> } | undefined = wanted
  ? { alg: ALGORITHM, key: generateSigningKey(ALGORITHM) }
  : undefined;
