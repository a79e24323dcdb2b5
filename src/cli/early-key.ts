import type { Algorithm } from "../core/config.js";
import { generateSigningKey, type SigningKey } from "../core/keys.js";

/** A start key being generated before the program has loaded, for createSandbox's pregeneratedKey. */
export interface EarlyKey {
  alg: Algorithm;
  key: Promise<SigningKey>;
}

const ALGORITHM: Algorithm = "RS256";

/**
 * For `serve`, RSA key generation (on libuv's thread pool; docs/performance.md#start) starts as soon as the CLI begins
 * loading, so it overlaps the loading of the rest of the program instead of following it. main.ts
 * calls this first, with the command line (without node and the script), before it imports the
 * program. Only for `serve` with the default algorithm; undefined otherwise.
 */
export function startEarlyKey(args: readonly string[]): EarlyKey | undefined {
  const wanted = args.includes("serve") && !args.some((a) => a.startsWith("--signing-key") || a.startsWith("--alg"));
  return wanted ? keyInTheMaking(ALGORITHM) : undefined;
}

/** Starts generating a start key now; createSandbox takes it as pregeneratedKey and does not wait for it. */
export function keyInTheMaking(alg: Algorithm): EarlyKey {
  const key = generateSigningKey(alg);
  // Handled at once: a failure before createSandbox takes the promise (the program is still
  // loading) must not end the process as an unhandled rejection with a stack trace. The sandbox's
  // `ready` still rejects with it, and serve stops saying why.
  key.catch(() => undefined);
  return { alg, key };
}
