import { bearerTokenOf, queryToken } from "./bearer.js";
import type { CredentialPrecedence, PaymentTokenTransport } from "./config.js";
import { extractCredentials } from "./credentials.js";
import type { EndpointName } from "./context.js";
import { headerValue, type SandboxRequest } from "./http-types.js";
import { secretMatches, type Merchant, type MerchantRegistry } from "./merchants.js";
import type { RequestBody } from "./json-body.js";

/**
 * Which merchant a request comes from, and whether it proved it. A request may only *name* a
 * merchant (an api_key with a wrong secret, a JWT whose `sub` anyone can write); only a proven
 * identity may fire that merchant's scenario rules, count its calls, change its state or produce
 * findings in its report. Proof is what the real provider would accept as proof of who is calling:
 *
 * - the token endpoint: the api_key with a matching api_secret (the current one, or one a rule
 *   rotated away: the client had it legitimately);
 * - the login: the e-mail with its password;
 * - a bearer JWT whose signature verifies with one of the sandbox's keys (expired, revoked or
 *   otherwise refused tokens still prove who they were issued to);
 * - payment/init: the merchant's payment token (or a JWT, as above);
 * - a token in the query string (refused all the same, `token_in_query`) that proves its merchant
 *   as above: it is the merchant's own client that put it there, so its report must see it. One
 *   that proves nothing names nobody: the query is not a place the API reads credentials from.
 *
 * The endpoint then authenticates the request for real; this only decides whose scenario applies.
 */
export interface Attribution {
  merchant: Merchant;
  /** False when the request only names the merchant: journaled as unverified, no rules, no findings. */
  proven: boolean;
  /**
   * Proven by a token in the query string, which the endpoint refuses whatever it is: the request is
   * the merchant's, but its rules must not answer instead of that refusal nor count it.
   */
  fromQuery?: true;
}

export interface AttributionDeps {
  registry: MerchantRegistry;
  /** Every place a payment token may be sent, across scenarios. */
  transports: readonly PaymentTokenTransport[];
  maxBodyBytes: number;
  /** The credential precedence of the scenario a merchant belongs to: the copy of api_secret its endpoint reads. */
  credentialPrecedence: (merchant: Merchant) => CredentialPrecedence;
  /** The `sub` of a token whose signature verifies with a sandbox key, else undefined; never throws. */
  provenSubject: (token: string) => Promise<string | undefined>;
}

type Attributor = (request: SandboxRequest, body: RequestBody, deps: AttributionDeps) => Promise<Attribution | undefined> | Attribution | undefined;

/**
 * How each endpoint whose requests can name a merchant names it. The one list of those endpoints:
 * namesMerchant answers from its keys, so the two cannot disagree.
 */
const attributors: ReadonlyMap<EndpointName, Attributor> = new Map<EndpointName, Attributor>([
  ["token", (request, body, deps) => byApiKey(request, jsonBody(body, deps.maxBodyBytes), deps)],
  ["login", (_request, body, deps) => byLogin(jsonBody(body, deps.maxBodyBytes), deps)],
  ["payment", byBearer],
  ["cashout", byBearer],
  ["payment-init", byPaymentTransports],
]);

/** The endpoints whose requests can name a merchant: for any other, attributeMerchant is not called. */
export function namesMerchant(endpoint: EndpointName): boolean {
  return attributors.has(endpoint);
}

export async function attributeMerchant(
  request: SandboxRequest,
  body: RequestBody,
  endpoint: EndpointName,
  deps: AttributionDeps,
): Promise<Attribution | undefined> {
  return attributors.get(endpoint)?.(request, body, deps);
}

/** The login's e-mail (or username) names the merchant; its password proves it. */
function byLogin(fields: Record<string, unknown> | undefined, deps: AttributionDeps): Attribution | undefined {
  const id = typeof fields?.username === "string" ? fields.username : fields?.email;
  const merchant = typeof id === "string" ? deps.registry.byLoginEmail(id) : undefined;
  if (!merchant) return undefined;
  const password = fields?.password;
  const proven = typeof password === "string" && merchant.login !== undefined && secretMatches(password, merchant.login.password);
  return { merchant, proven };
}

/** The bearer token (payment, cashout), else a token in the query string that proves its merchant. */
async function byBearer(request: SandboxRequest, _body: RequestBody, deps: AttributionDeps): Promise<Attribution | undefined> {
  const token = bearerTokenOf(request);
  return (token === undefined ? undefined : await byToken(token, deps)) ?? byQueryToken(request, deps);
}

/** payment/init: the first place a payment token may be sent (across scenarios) that holds one naming a merchant. */
async function byPaymentTransports(request: SandboxRequest, body: RequestBody, deps: AttributionDeps): Promise<Attribution | undefined> {
  for (const t of deps.transports) {
    const value =
      t.kind === "authorization"
        ? bearerTokenOf(request)
        : t.kind === "header"
          ? headerValue(request, t.name)?.trim()
          : (jsonBody(body, deps.maxBodyBytes)?.[t.field] as unknown);
    if (typeof value !== "string") continue;
    const found = await byToken(value, deps);
    if (found) return found;
  }
  return byQueryToken(request, deps);
}

/**
 * The api_key (header first, then body) names the merchant; the api_secret the endpoint will read
 * (by its scenario's credential precedence) proves it when it matches. A copy the endpoint ignores
 * proves nothing: a request refused wrong_api_secret must not count because its other copy was right.
 */
function byApiKey(request: SandboxRequest, body: Record<string, unknown> | undefined, deps: AttributionDeps): Attribution | undefined {
  const headerKey = headerValue(request, "x-api-key");
  const merchant =
    (headerKey === undefined ? undefined : deps.registry.byKey(headerKey)) ??
    (typeof body?.api_key === "string" ? deps.registry.byKey(body.api_key) : undefined);
  if (!merchant) return undefined;
  let read: { apiKey: string; apiSecret: string };
  try {
    read = extractCredentials(request, body, deps.credentialPrecedence(merchant));
  } catch {
    // Credentials the endpoint refuses to read (missing, sent twice differently) prove nothing.
    return { merchant, proven: false };
  }
  const secret = read.apiSecret;
  const proven =
    read.apiKey === merchant.apiKey &&
    (secretMatches(secret, merchant.apiSecret) || merchant.formerSecrets.some((old) => secretMatches(secret, old)));
  return { merchant, proven };
}

/** A payment token proves its merchant; a JWT proves its `sub` only when a sandbox key signed it. */
async function byToken(token: string, deps: AttributionDeps): Promise<Attribution | undefined> {
  const byPayment = deps.registry.byPayment(token);
  if (byPayment) return { merchant: byPayment, proven: true };
  const verifiedSub = await deps.provenSubject(token);
  const verified = verifiedSub === undefined ? undefined : deps.registry.findById(verifiedSub);
  if (verified) return { merchant: verified, proven: true };
  const claimed = unverifiedClaims(token)?.sub;
  const merchant = typeof claimed === "string" ? deps.registry.findById(claimed) : undefined;
  return merchant && { merchant, proven: false };
}

/** A token in the query string, when it proves its merchant (see Attribution.fromQuery). */
async function byQueryToken(request: SandboxRequest, deps: AttributionDeps): Promise<Attribution | undefined> {
  const token = queryToken(request)?.value;
  if (!token) return undefined;
  const found = await byToken(token, deps);
  return found?.proven ? { merchant: found.merchant, proven: true, fromQuery: true } : undefined;
}

/** The `jti` of the bearer JWT on the request, decoded without verification (journal, rules). */
export function presentedTokenId(request: SandboxRequest): string | undefined {
  const token = bearerTokenOf(request);
  const jti = token === undefined ? undefined : unverifiedClaims(token)?.jti;
  return typeof jti === "string" ? jti.slice(0, 100) : undefined;
}

/**
 * The claims of a JWT-shaped token, decoded without checking anything: only ever used to name the
 * merchant a request claims to be (marked unverified) or a token in the journal, never to trust it.
 */
function unverifiedClaims(token: string): { sub?: unknown; jti?: unknown } | undefined {
  const parts = token.split(".");
  if (parts.length !== 3 || parts[1]!.length > 4096) return undefined;
  try {
    const claims: unknown = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8"));
    return claims && typeof claims === "object" ? (claims as { sub?: unknown; jti?: unknown }) : undefined;
  } catch {
    return undefined;
  }
}

/** The body as a JSON object if it is one, else undefined; never throws (the endpoint reports errors). */
function jsonBody(body: RequestBody, maxBodyBytes: number): Record<string, unknown> | undefined {
  if (body.bytes.byteLength === 0 || body.bytes.byteLength > maxBodyBytes) return undefined;
  const decoded = body.decoded();
  if (decoded.kind !== "ok") return undefined;
  const parsed = decoded.value;
  return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
}
