import { randomBytes, randomUUID } from "node:crypto";
import { encodeJwsHeader } from "../core/jws.js";
import { ALNUM, pick } from "./request-id.js";

/**
 * `{{refresh_token:<shape>}}` and `{{id_token:<shape>}}`: the other tokens a provider's token
 * answer carries beside the access token (OAuth's refresh_token, OpenID Connect's id_token); and
 * `{{fresh:<shape>}}`, in every part, an id made per answer that no request-id shape fits (a
 * payment's `acme_3f9c0a1b2c4d`, Stripe's `req_…`). The
 * sandbox has no refresh grant and no OpenID layer: it makes a fresh value of the provider's shape
 * for each answer, so a client that stores or logs it sees what it would see, and one that sends it
 * as a bearer token is refused (its signature is random bytes no key made). Shapes:
 * - `jwt`: a JWT of the provider's form (`{"alg":"HS256","typ":"JWT"}`, jti, iat, exp, typ);
 * - `uuid`; `hex-N`, `base64url-N`, `alnum-N`: N characters of that alphabet (8 to 512).
 * A prefix the provider puts before it (`rt_`) stays literal text in the template.
 */

export const COMPANION_SHAPE = /^(jwt|uuid|(hex|base64url|alnum)-(\d{1,3}))$/;

/** The alphabets of `<alphabet>-N` shapes, as regular-expression character classes (the OpenAPI patterns). */
export const COMPANION_ALPHABETS = { hex: "[0-9a-f]", base64url: "[A-Za-z0-9_-]", alnum: "[A-Za-z0-9]" } as const;
export type CompanionAlphabet = keyof typeof COMPANION_ALPHABETS;

/**
 * An id as a shape the sandbox makes: an optional short prefix kept literal (`rt_`, `req_`), then 8
 * to 512 id characters, of the narrowest alphabet that holds them. Undefined for anything else.
 * What calibrate writes as `{{fresh:…}}` and `{{refresh_token:…}}`.
 */
export function idShapeOf(value: string): { prefix: string; body: string; shape: `${CompanionAlphabet}-${number}` } | undefined {
  const m = /^([A-Za-z]{1,8}[_-])?([A-Za-z0-9_-]{8,512})$/.exec(value);
  if (!m) return undefined;
  const body = m[2]!;
  const alphabet: CompanionAlphabet = /^[0-9a-f]+$/.test(body) ? "hex" : /^[A-Za-z0-9]+$/.test(body) ? "alnum" : "base64url";
  return { prefix: m[1] ?? "", body, shape: `${alphabet}-${body.length}` };
}
/** The JWT form's header, the same for every token: encoded once. */
const JWT_HEADER = encodeJwsHeader({ alg: "HS256", typ: "JWT" });
export const COMPANION_LENGTHS = { least: 8, most: 512 } as const;

/** Whether a shape is one the sandbox makes, and the problem when it is not. */
export function companionShapeProblem(name: string, shape: string | undefined): string | undefined {
  const m = shape === undefined ? null : COMPANION_SHAPE.exec(shape);
  const length = m?.[3] === undefined ? undefined : Number(m[3]);
  if (m && (length === undefined || (length >= COMPANION_LENGTHS.least && length <= COMPANION_LENGTHS.most))) return undefined;
  const written = shape === undefined ? `{{${name}}}` : `{{${name}:${shape}}}`;
  return `'${written}': say the token's shape: jwt, uuid, or hex-N, base64url-N, alnum-N with N from ${COMPANION_LENGTHS.least} to ${COMPANION_LENGTHS.most} (such as {{${name}:jwt}} or rt_{{${name}:hex-48}})`;
}

/** One answer's companion token: made once per shape asked, so its header and body agree. */
export class CompanionTokenValue {
  private readonly made = new Map<string, string>();

  constructor(
    /** What the JWT form says it is (`Refresh`, `ID`: Keycloak's typ claims). */
    private readonly kind: string,
    /** The JWT form's iat and exp, read only when that form is made. */
    private readonly times: () => { issuedAt: number; expiresAt: number },
  ) {}

  format(shape: string | undefined): string {
    const key = shape ?? "jwt";
    let value = this.made.get(key);
    if (value === undefined) {
      value = this.make(key);
      this.made.set(key, value);
    }
    return value;
  }

  private make(shape: string): string {
    if (shape === "uuid") return randomUUID();
    const m = COMPANION_SHAPE.exec(shape);
    const length = Number(m?.[3] ?? 43);
    if (m?.[2] === "hex")
      return randomBytes(Math.ceil(length / 2))
        .toString("hex")
        .slice(0, length);
    if (m?.[2] === "base64url")
      return randomBytes(Math.ceil((length * 3) / 4))
        .toString("base64url")
        .slice(0, length);
    if (m?.[2] === "alnum") return pick(ALNUM, length);
    const { issuedAt, expiresAt } = this.times();
    const claims = { exp: expiresAt, iat: issuedAt, jti: randomUUID(), typ: this.kind };
    return `${JWT_HEADER}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.${randomBytes(32).toString("base64url")}`;
  }
}
