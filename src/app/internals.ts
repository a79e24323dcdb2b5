import type { AccessTokens } from "../core/access-tokens.js";
import type { KeyRing } from "../core/keys.js";
import type { MerchantRegistry } from "../core/merchants.js";
import type { TokenLedger } from "../core/token-ledger.js";

/**
 * What the adapters, the CLI and the tests reach inside a sandbox for, and the library's users may
 * not: the public `Sandbox` is what docs/in-process.md documents, and these would freeze internals.
 * Held under a symbol no public module exports, so they are neither members of the `Sandbox` type
 * nor string keys of the object.
 */
export interface SandboxInternals {
  /** Every merchant of every scenario and session, and the secret index the redaction reads. */
  readonly merchants: MerchantRegistry;
  /** Every signing key of the sandbox, by kid (`find`, `size`). */
  readonly ring: KeyRing;
  readonly ledger: TokenLedger;
  readonly tokens: AccessTokens;
}

export const INTERNALS: unique symbol = Symbol("merchant-sandbox internals");

/** The internals of a sandbox `createSandbox` made. */
export function internalsOf(sandbox: object): SandboxInternals {
  const internals = (sandbox as { [INTERNALS]?: SandboxInternals })[INTERNALS];
  if (internals === undefined) throw new TypeError("not a sandbox made by createSandbox()");
  return internals;
}
