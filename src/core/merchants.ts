import { hash, timingSafeEqual } from "node:crypto";
import { ConfigError, SCOPES, type Scope } from "./config.js";
import { SecretFingerprints, type SecretKind } from "./secret-fingerprints.js";
import { SecretIndex } from "./secret-index.js";

/**
 * Merchants: who may exchange credentials, pay and cash out. The registry indexes them by every
 * credential a request can carry, so each lookup is one map access.
 */

export interface MerchantInput {
  id: string;
  name?: string;
  apiKey: string;
  apiSecret: string;
  paymentToken: string;
  login?: { email: string; password: string };
  scopes?: Scope[];
  disabled?: boolean;
}

export interface Merchant {
  readonly id: string;
  readonly name: string;
  readonly apiKey: string;
  apiSecret: string;
  /**
   * Secrets a scenario rule rotated away, newest last (a few at most). They no longer get tokens,
   * but a client presenting one still proves who it is: its requests count in its own report.
   */
  readonly formerSecrets: string[];
  paymentToken: string;
  readonly login: { email: string; password: string } | undefined;
  readonly scopes: readonly Scope[];
  disabled: boolean;
  /** Set by a scenario rule: the payment token stops working, with a message that says why. */
  paymentTokenState?: "expired" | "revoked";
}

/**
 * What rules and actions change of a merchant, as replicas share it (JSON; it holds secrets, so it
 * is never logged): the rest is the scenario file's.
 */
export interface MerchantState {
  readonly id: string;
  readonly apiSecret: string;
  readonly formerSecrets: readonly string[];
  readonly paymentToken: string;
  readonly disabled: boolean;
  readonly paymentTokenState?: "expired" | "revoked";
}

export function merchantState(m: Merchant): MerchantState {
  const state: MerchantState = {
    id: m.id,
    apiSecret: m.apiSecret,
    formerSecrets: m.formerSecrets.slice(),
    paymentToken: m.paymentToken,
    disabled: m.disabled,
  };
  return m.paymentTokenState === undefined ? state : { ...state, paymentTokenState: m.paymentTokenState };
}

/** The built-in default merchant (docs/architecture.md): published sandbox values, redacted in logs all the same. */
export const DEFAULT_MERCHANT: Readonly<MerchantInput> = Object.freeze({
  id: "merchant_sandbox_default",
  name: "Sandbox Default Merchant",
  apiKey: "sandbox-api-key",
  apiSecret: "sandbox-api-secret",
  paymentToken: "sandbox-payment-token",
  login: { email: "merchant@sandbox.test", password: "sandbox-password" },
  scopes: ["payment", "cashout"] as Scope[],
});

/** What identifies a merchant: a MerchantInput, a Merchant, or what a scenario file gives of one. */
export interface MerchantIdentity {
  id?: string | undefined;
  apiKey?: string | undefined;
  paymentToken?: string | undefined;
  login?: { email?: string | undefined } | undefined;
}

/** One value that selects a merchant (see merchantIdentifiers). */
export interface MerchantIdentifier {
  readonly name: "id" | "api_key" | "payment token" | "login e-mail";
  /** Where a scenario file's merchant has it: ["api_key"], ["login", "email"]. */
  readonly field: readonly string[];
  /** Equal for two merchants that clash: the login e-mail in lower case, as login looks it up. */
  readonly value: string;
  /** How a message names it: "api_key 'k1'"; never the payment token itself, which is a secret. */
  readonly shown: string;
}

/**
 * The values that each select a merchant (a request names its merchant by any of them), so no two
 * merchants may share one: the one definition that the registry, a scenario joining the sandbox and
 * the scenario loader all check. Values that are missing are skipped.
 */
export function merchantIdentifiers(m: MerchantIdentity): MerchantIdentifier[] {
  const found: MerchantIdentifier[] = [];
  if (typeof m.id === "string") found.push({ name: "id", field: ["id"], value: m.id, shown: `id '${m.id}'` });
  if (typeof m.apiKey === "string") found.push({ name: "api_key", field: ["api_key"], value: m.apiKey, shown: `api_key '${m.apiKey}'` });
  if (typeof m.paymentToken === "string")
    found.push({ name: "payment token", field: ["payment_token"], value: m.paymentToken, shown: "payment token" });
  const email = m.login?.email;
  if (typeof email === "string")
    found.push({ name: "login e-mail", field: ["login", "email"], value: email.toLowerCase(), shown: `login e-mail '${email}'` });
  return found;
}

export class MerchantRegistry {
  private readonly byApiKey = new Map<string, Merchant>();
  private readonly byPaymentToken = new Map<string, Merchant>();
  private readonly byLogin = new Map<string, Merchant>();
  private readonly byId = new Map<string, Merchant>();
  /**
   * Every secret each merchant holds or has held (a rotated api_secret is still a secret a client
   * may send), for the redaction of request URLs; forgotten when the merchant is removed.
   */
  readonly secrets = new SecretIndex();
  /**
   * What the log scan remembers of every secret merchants held, their fingerprints: those of removed
   * merchants and rotated-out secrets stay (bounded) after this registry forgets the secrets themselves.
   */
  readonly fingerprints = new SecretFingerprints();
  /** Each merchant's secrets, with the role each was first held in. */
  private readonly held = new Map<Merchant, Map<string, SecretKind>>();

  constructor(inputs: readonly MerchantInput[]) {
    for (const input of inputs) this.add(input);
  }

  add(input: MerchantInput): Merchant {
    const merchant = validateMerchant(input);
    const clash = this.clashWith(merchant);
    if (clash) throw new ConfigError(`two merchants share the same ${clash.identifier.shown}; each merchant needs its own`);
    this.byId.set(merchant.id, merchant);
    this.byApiKey.set(merchant.apiKey, merchant);
    this.byPaymentToken.set(merchant.paymentToken, merchant);
    if (merchant.login) this.byLogin.set(merchant.login.email.toLowerCase(), merchant);
    this.held.set(merchant, new Map());
    this.hold(merchant, merchant.apiSecret, "api_secret");
    this.hold(merchant, merchant.paymentToken, "payment_token");
    if (merchant.login) this.hold(merchant, merchant.login.password, "password");
    return merchant;
  }

  /** The registered merchant that already holds one of these identifiers, and which one (the first). */
  clashWith(m: MerchantIdentity): { identifier: MerchantIdentifier; holder: Merchant } | undefined {
    for (const identifier of merchantIdentifiers(m)) {
      const holder = this.holderOf(identifier);
      if (holder) return { identifier, holder };
    }
    return undefined;
  }

  private holderOf(identifier: MerchantIdentifier): Merchant | undefined {
    switch (identifier.name) {
      case "id":
        return this.byId.get(identifier.value);
      case "api_key":
        return this.byApiKey.get(identifier.value);
      case "payment token":
        return this.byPaymentToken.get(identifier.value);
      case "login e-mail":
        return this.byLogin.get(identifier.value);
    }
  }

  /** Forgets a merchant (a session that ended): its credentials stop working at once. */
  remove(merchant: Merchant): void {
    if (this.byId.get(merchant.id) !== merchant) return;
    this.byId.delete(merchant.id);
    this.byApiKey.delete(merchant.apiKey);
    this.byPaymentToken.delete(merchant.paymentToken);
    if (merchant.login) this.byLogin.delete(merchant.login.email.toLowerCase());
    for (const [secret, kind] of this.held.get(merchant) ?? []) {
      this.secrets.delete(secret);
      this.fingerprints.release(secret, { kind, merchant: merchant.id });
    }
    this.held.delete(merchant);
  }

  all(): Merchant[] {
    return [...this.byId.values()];
  }

  byKey(apiKey: string): Merchant | undefined {
    return this.byApiKey.get(apiKey);
  }

  findById(id: string): Merchant | undefined {
    return this.byId.get(id);
  }

  byPayment(token: string): Merchant | undefined {
    return this.byPaymentToken.get(token);
  }

  byLoginEmail(email: string): Merchant | undefined {
    return this.byLogin.get(email.toLowerCase());
  }

  /** Replaces a merchant's payment token (rotation), keeping the index in step. */
  setPaymentToken(merchant: Merchant, token: string): void {
    this.byPaymentToken.delete(merchant.paymentToken);
    merchant.paymentToken = token;
    this.byPaymentToken.set(token, merchant);
    this.hold(merchant, token, "payment_token");
  }

  /**
   * Replaces a merchant's api_secret (a scenario's rotate_secret), so the redaction knows the new
   * one too; the old one is kept as proof of identity (see rotateSecret), and redacted while it is.
   * A secret rotated out of that memory is no longer redacted: the secrets one merchant adds to the
   * redaction stay bounded however often a session rotates.
   */
  setApiSecret(merchant: Merchant, secret: string): void {
    const before = merchant.formerSecrets[0];
    rotateSecret(merchant, secret);
    this.hold(merchant, secret, "api_secret");
    if (before !== undefined && !merchant.formerSecrets.includes(before)) this.release(merchant, before);
  }

  /**
   * Gives a registered merchant the state another replica's copy of it had (`merchantState`), with
   * the redaction and the log scan in step: the secrets it holds now are redacted, a secret it
   * rotated away is held as after a rotation here, and one it no longer holds is let go.
   */
  restoreMerchant(merchant: Merchant, state: MerchantState): void {
    if (this.byId.get(merchant.id) !== merchant)
      throw new Error(`merchant '${merchant.id}' is not in this registry; restore only merchants it holds`);
    const problem = merchantStateProblem(merchant.id, state);
    if (problem) throw new TypeError(`the state of merchant '${merchant.id}' ${problem}; give what merchantState() returned`);
    if (state.paymentToken !== merchant.paymentToken) {
      const holder = this.byPaymentToken.get(state.paymentToken);
      if (holder) throw new Error(`merchant '${holder.id}' already holds the payment token the state of merchant '${merchant.id}' gives`);
      this.setPaymentToken(merchant, state.paymentToken);
    }
    const before = [merchant.apiSecret, ...merchant.formerSecrets];
    const after = [state.apiSecret, ...state.formerSecrets];
    if (before.length !== after.length || before.some((secret, i) => secret !== after[i])) {
      merchant.apiSecret = state.apiSecret;
      merchant.formerSecrets.splice(0, merchant.formerSecrets.length, ...state.formerSecrets);
      for (const secret of after) this.hold(merchant, secret, "api_secret");
      for (const secret of before) if (!after.includes(secret)) this.release(merchant, secret);
    }
    merchant.disabled = state.disabled;
    if (state.paymentTokenState === undefined) delete merchant.paymentTokenState;
    else merchant.paymentTokenState = state.paymentTokenState;
  }

  private hold(merchant: Merchant, secret: string, kind: SecretKind): void {
    const held = this.held.get(merchant);
    if (!held || held.has(secret)) return;
    held.set(secret, kind);
    this.secrets.add(secret);
    this.fingerprints.hold(secret, { kind, merchant: merchant.id });
  }

  /** Stops redacting one secret of the merchant's, unless it still holds it in another role. */
  private release(merchant: Merchant, secret: string): void {
    const held = this.held.get(merchant);
    const kind = held?.get(secret);
    if (!held || kind === undefined) return;
    if (secret === merchant.apiSecret || secret === merchant.paymentToken || secret === merchant.login?.password) return;
    held.delete(secret);
    this.secrets.delete(secret);
    this.fingerprints.release(secret, { kind, merchant: merchant.id });
  }
}

/** What does not fit merchant `id` in a merchant state (see restoreMerchant), or undefined. */
export function merchantStateProblem(id: string, s: MerchantState): string | undefined {
  if (typeof s !== "object" || s === null) return "is not an object";
  if (s.id !== id) return `is of merchant '${String(s.id)}'`;
  if (typeof s.apiSecret !== "string" || s.apiSecret === "") return "needs an apiSecret";
  if (!Array.isArray(s.formerSecrets) || !s.formerSecrets.every((f) => typeof f === "string" && f !== "")) return "needs formerSecrets: a list";
  if (s.formerSecrets.length > FORMER_SECRETS_KEPT) return `holds more than ${FORMER_SECRETS_KEPT} formerSecrets`;
  if (typeof s.paymentToken !== "string" || s.paymentToken === "") return "needs a paymentToken";
  if (typeof s.disabled !== "boolean") return "needs disabled: true or false";
  if (s.paymentTokenState !== undefined && s.paymentTokenState !== "expired" && s.paymentTokenState !== "revoked")
    return "has a paymentTokenState other than expired or revoked";
  return undefined;
}

/** How many rotated-away secrets a merchant remembers as proof of identity. */
const FORMER_SECRETS_KEPT = 4;

/** Replaces a merchant's api_secret (a scenario rule), remembering the old one as proof of identity. */
export function rotateSecret(merchant: Merchant, secret: string): void {
  if (secret === merchant.apiSecret) return;
  merchant.formerSecrets.push(merchant.apiSecret);
  if (merchant.formerSecrets.length > FORMER_SECRETS_KEPT) merchant.formerSecrets.shift();
  merchant.apiSecret = secret;
}

/**
 * Compares a presented secret with the stored one in constant time (no early exit on a prefix);
 * hashed first, so the comparison does not reveal the length either. One-shot `hash` rather than
 * `createHash` objects: a token exchange compares twice (attribution, then the endpoint), and the
 * Hash objects were a large share of its CPU (docs/performance.md#secret-comparison).
 */
export function secretMatches(presented: string, stored: string): boolean {
  return timingSafeEqual(hash("sha256", presented, "buffer"), hash("sha256", stored, "buffer"));
}

function validateMerchant(input: MerchantInput): Merchant {
  const where = `merchant '${input?.id ?? "?"}'`;
  for (const field of ["id", "apiKey", "apiSecret", "paymentToken"] as const) {
    const v = input?.[field];
    if (typeof v !== "string" || v.length === 0) throw new ConfigError(`${where}: ${field} must be a non-empty string`);
    if (/[\s\x00-\x1f\x7f]/.test(v)) throw new ConfigError(`${where}: ${field} must not contain spaces or control characters`);
  }
  const scopes = input.scopes ?? [...SCOPES];
  for (const scope of scopes) {
    if (!(SCOPES as readonly string[]).includes(scope))
      throw new ConfigError(`${where}: scope '${scope}' is not known; use ${SCOPES.join(" and/or ")}`);
  }
  if (
    input.login &&
    (typeof input.login.email !== "string" || typeof input.login.password !== "string" || !input.login.email || !input.login.password)
  )
    throw new ConfigError(`${where}: login needs a non-empty email and password`);
  return {
    id: input.id,
    name: input.name ?? input.id,
    apiKey: input.apiKey,
    apiSecret: input.apiSecret,
    formerSecrets: [],
    paymentToken: input.paymentToken,
    login: input.login ? { ...input.login } : undefined,
    scopes: [...new Set(scopes)],
    disabled: input.disabled ?? false,
  };
}
