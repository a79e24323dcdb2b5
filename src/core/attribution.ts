import type { PaymentTokenTransport } from "./config.js";
import type { EndpointName } from "./context.js";
import { headerValue, type SandboxRequest } from "./http-types.js";
import type { Merchant, MerchantRegistry } from "./merchants.js";
import { decodeJson } from "./json-body.js";

/**
 * Which merchant a request comes from, read cheaply and without trusting anything: the api_key on
 * the token endpoint, the e-mail on the login, the payment token, or the `sub` of a bearer JWT
 * (decoded, not verified). It only picks the scenario whose rules and settings apply; the endpoint
 * then authenticates the request for real. Unattributed requests use the primary scenario.
 */
export function attributeMerchant(
  request: SandboxRequest,
  endpoint: EndpointName,
  registry: MerchantRegistry,
  transports: readonly PaymentTokenTransport[],
  maxBodyBytes: number,
  /** Claims of tokens already verified (saves decoding a known token again). */
  known: (token: string) => { sub?: unknown } | undefined = () => undefined,
): Merchant | undefined {
  switch (endpoint) {
    case "token": {
      const key = headerValue(request, "x-api-key");
      const fromHeader = key === undefined ? undefined : registry.byKey(key);
      if (fromHeader) return fromHeader;
      const body = jsonBody(request, maxBodyBytes);
      return typeof body?.api_key === "string" ? registry.byKey(body.api_key) : undefined;
    }
    case "login": {
      const body = jsonBody(request, maxBodyBytes);
      const id = typeof body?.username === "string" ? body.username : body?.email;
      return typeof id === "string" ? registry.byLoginEmail(id) : undefined;
    }
    case "payment":
    case "cashout": {
      const token = bearerOf(request);
      if (!token) return undefined;
      const sub = known(token)?.sub;
      return typeof sub === "string" ? registry.findById(sub) : byBearer(request, registry);
    }
    case "payment-init": {
      for (const t of transports) {
        const value =
          t.kind === "authorization"
            ? bearerOf(request)
            : t.kind === "header"
              ? headerValue(request, t.name)?.trim()
              : (jsonBody(request, maxBodyBytes)?.[t.field] as unknown);
        if (typeof value !== "string") continue;
        const merchant = registry.byPayment(value) ?? bySub(value, registry);
        if (merchant) return merchant;
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

/** The `jti` of the bearer JWT on the request, decoded without verification (journal, rules). */
export function presentedTokenId(request: SandboxRequest): string | undefined {
  const token = bearerOf(request);
  const jti = token === undefined ? undefined : unverifiedClaims(token)?.jti;
  return typeof jti === "string" ? jti.slice(0, 100) : undefined;
}

/**
 * The claims of a JWT-shaped token, decoded without checking anything: only ever used to pick a
 * scenario or name a token in the journal, never to trust it. Undefined for anything else.
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

function byBearer(request: SandboxRequest, registry: MerchantRegistry): Merchant | undefined {
  const token = bearerOf(request);
  if (!token) return undefined;
  return registry.byPayment(token) ?? bySub(token, registry);
}

/** The token of a well-formed `Authorization: Bearer <token>`, read leniently (no refusal here). */
export function bearerOf(request: SandboxRequest): string | undefined {
  const auth = headerValue(request, "authorization");
  const m = auth === undefined ? null : /^bearer +(\S+)\s*$/i.exec(auth);
  return m?.[1];
}

/** The merchant named by the `sub` of a JWT-shaped token, decoded without verification. */
function bySub(token: string, registry: MerchantRegistry): Merchant | undefined {
  const sub = unverifiedClaims(token)?.sub;
  return typeof sub === "string" ? registry.findById(sub) : undefined;
}

/** The body as a JSON object if it is one, else undefined; never throws (the endpoint reports errors). */
function jsonBody(request: SandboxRequest, maxBodyBytes: number): Record<string, unknown> | undefined {
  if (request.body.byteLength === 0 || request.body.byteLength > maxBodyBytes) return undefined;
  const decoded = decodeJson(request.body);
  if (decoded.kind !== "ok") return undefined;
  const parsed = decoded.value;
  return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
}
