import { type ProviderOptions, type RefusalKind, type RunningProvider, startProvider } from "./kit.js";

/**
 * A Lexik-shaped provider (see lexik.ts) that echoes the secrets it was sent, encoded, in its
 * answers: the api_secret in the token answer, the password in the login's, the payment token in
 * payment/init's, each in every form of `encodings`. A profile calibrated from it must hold none.
 */

/** Lexik's texts for each refusal (lexik.ts copies the bundle exactly; this one only needs the shape). */
const MESSAGES: Record<RefusalKind, [number, string]> = {
  bad_credentials: [401, "Invalid credentials."],
  unknown_key: [401, "Invalid credentials."],
  bad_login: [401, "Invalid credentials."],
  missing_secret: [400, 'The key "api_secret" must be provided.'],
  malformed_json: [400, "Invalid JSON."],
  no_token: [401, "JWT Token not found"],
  invalid_token: [401, "Invalid JWT Token"],
  expired_token: [401, "Expired JWT Token"],
  jwt_on_payment_init: [401, "Invalid credentials."],
  unknown_payment_token: [401, "Invalid credentials."],
};

export const ECHO_CREDENTIALS = {
  apiKey: "echo-key-51c0",
  // A '/' and a '+': their percent, JSON and base64 forms differ from the plain ones.
  apiSecret: "echo/s3cret+9f2c7e1a",
  paymentToken: "echo-pay/4b7d+e2a91c",
  email: "shop@echo-provider.test",
  password: "echo-pass/w0rd+5e2f",
  merchantId: "shop-7",
};

const bytesOf = (s: string) => [...Buffer.from(s, "utf8")];
const base64 = (s: string) => Buffer.from(s).toString("base64");
const base64url = (s: string) => Buffer.from(s).toString("base64url");

/** Every form a provider has been seen to echo a secret in, by name. */
export function encodings(s: string): Record<string, string> {
  return {
    percent_lower: bytesOf(s)
      .map((b) => `%${b.toString(16).padStart(2, "0")}`)
      .join(""),
    percent_upper: bytesOf(s)
      .map((b) => `%${b.toString(16).padStart(2, "0").toUpperCase()}`)
      .join(""),
    percent_some: encodeURIComponent(s),
    base64: base64(s),
    base64_inside_1: base64(`secret=${s}`),
    base64_inside_2: base64(`s=${s};`),
    base64url: base64url(s),
    base64url_inside_1: base64url(`secret=${s}`),
    base64url_inside_2: base64url(`s=${s};`),
    json_u_lower: s
      .split("")
      .map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
      .join(""),
    json_u_upper: s
      .split("")
      .map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0").toUpperCase()}`)
      .join(""),
    json_slash: s.replace(/\//g, "\\/"),
  };
}

/** The forms as sentences (with spaces, so calibrate's own look for token-like constants passes them by). */
function echoed(s: string): Record<string, string> {
  return Object.fromEntries(Object.entries(encodings(s)).map(([name, form]) => [`echo_${name}`, `we saw ${form} here`]));
}

export function startEchoProvider(options?: ProviderOptions): Promise<RunningProvider> {
  const c = ECHO_CREDENTIALS;
  return startProvider(
    {
      alg: "ES256",
      typ: "JWT",
      ttlSeconds: 3600,
      claims: () => ({ username: c.email }),
      token: (jwt) => ({ status: 200, body: { token: jwt, ...echoed(c.apiSecret) } }),
      login: (jwt) => ({ status: 200, body: { token: jwt, ...echoed(c.password) } }),
      refusal: (kind) => {
        const [status, message] = MESSAGES[kind];
        return { status, body: { code: status, message } };
      },
      paymentInit: (id) => ({ status: 201, body: { id, ...echoed(c.paymentToken) } }),
    },
    c,
    options,
  );
}
