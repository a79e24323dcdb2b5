import { randomBytes } from "node:crypto";
import { decodeJwt, decodeProtectedHeader, generateKeyPair, SignJWT } from "jose";
import type { Answer, Observation, ProbeName, Skipped } from "./observations.js";

/**
 * What calibrate sends to each route of the provider, in the order it sends it (probe.ts runs
 * them): the token route, the protected route, payment/init's refusals, the login, and, only with
 * --allow-writes, payment/init's success. Each probe is one request (twice for REPEATED_PROBES),
 * sent through the run's Prober, which counts them against its budget.
 */

/** The provider's credentials and calibrate's choices, as the probes read them (probe.ts's ProbeOptions has these). */
export interface ProbeCredentials {
  apiKey: string;
  apiSecret: string;
  paymentToken?: string | undefined;
  login?: { email: string; password: string } | undefined;
  expiredToken?: string | undefined;
  /** A token the provider revoked (--revoked-token), to observe that answer. */
  revokedToken?: string | undefined;
  protectedPath: string;
  allowWrites: boolean;
}

export type Init = { headers?: Record<string, string>; body?: string };

/** One request to the provider: which probe it is for, and what is sent. */
export interface Call {
  probe: ProbeName;
  method: string;
  path: string;
  init: Init;
}

/** A probe: its request, what the table says was sent, and for a repeated probe another second request. */
export interface Probe extends Call {
  sent: string;
  again?: Init;
}

/** One calibration's requests and what they observed, within the run's budget of MAX_REQUESTS. */
export interface Prober {
  /** One request, waiting once as a 429's Retry-After asks; not an observation (the access-token trials). */
  once(call: Call): Promise<Answer>;
  /** A probe, observed; a repeated one (REPEATED_PROBES) is sent twice, and what differs is per-request. */
  send(probe: Probe): Promise<Answer>;
  skip(probe: ProbeName, why: string): void;
  readonly observed: Observation[];
  readonly repeats: Observation[];
  readonly skipped: Skipped[];
  readonly secrets: string[];
  sentCount(): number;
}

const TOKEN = "/api/v2/auth/token";
const INIT = "/api/v2/payment/init";
const LOGIN = "/api/login_check";
const json = (body: unknown): Init => ({ headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
export const bearer = (token: string): Init => ({ headers: { authorization: `Bearer ${token}` } });
/** payment/init with a bearer token and an empty order: even a provider that took the token could not create a payment from it. */
const emptyOrder = (token: string): Init => ({ headers: { ...bearer(token).headers, "content-type": "application/json" }, body: "{}" });

/** The token route: both ways of sending the credentials, and each way of getting them wrong. The first answer is the token's. */
export async function probeTokenRoute(p: Prober, o: ProbeCredentials): Promise<Answer> {
  const post = (probe: ProbeName, sent: string, init: Init) => p.send({ probe, sent: `POST ${TOKEN}, ${sent}`, method: "POST", path: TOKEN, init });
  const first = await post("token_body", "api_key and api_secret in the JSON body", json({ api_key: o.apiKey, api_secret: o.apiSecret }));
  await post("token_headers", "X-Api-Key and X-Api-Secret headers, no body", { headers: { "x-api-key": o.apiKey, "x-api-secret": o.apiSecret } });
  await post("wrong_secret", "the api_key with a wrong api_secret", json({ api_key: o.apiKey, api_secret: "calibrate-wrong-secret" }));
  await post("unknown_key", "an api_key no merchant has", json({ api_key: "calibrate-unknown-key", api_secret: "calibrate-unknown-secret" }));
  await post("missing_secret", "the api_key without api_secret", json({ api_key: o.apiKey }));
  await post("missing_key", "an api_secret without api_key", json({ api_secret: "calibrate-unknown-secret" }));
  await post("malformed_json", "a body that is not valid JSON", { headers: { "content-type": "application/json" }, body: '{"api_key": ' });
  return first;
}

/** The protected route: with the fresh token, and with every kind of wrong credential. */
export async function probeProtectedRoute(p: Prober, o: ProbeCredentials, fresh: string | undefined): Promise<void> {
  const path = o.protectedPath;
  const get = (probe: ProbeName, sent: string, init: Init) => p.send({ probe, sent: `GET ${path} ${sent}`, method: "GET", path, init });
  if (fresh) await get("protected_fresh", "with the fresh token", bearer(fresh));
  else p.skip("protected_fresh", "no token was issued");
  await get("no_authorization", "without Authorization", {});
  await get("other_scheme", "with Authorization: Basic", {
    headers: { authorization: `Basic ${Buffer.from("calibrate:calibrate").toString("base64")}` },
  });
  await get("empty_bearer", "with Authorization: Bearer and no token", { headers: { authorization: "Bearer" } });
  if (o.paymentToken) await get("payment_token_protected", "with the payment token as its bearer token", bearer(o.paymentToken));
  else p.skip("payment_token_protected", "no --payment-token: that answer is inferred from the unknown payment token's");
  await get("malformed_token", "with a token that is not a JWT", bearer("calibrate-not-a-jwt"));
  await get("foreign_jwt", "with a JWT signed by a key of calibrate's", bearer(await foreignJwt(fresh)));
  if (o.expiredToken) await get("expired_token", "with --expired-token", bearer(o.expiredToken));
  else p.skip("expired_token", "no --expired-token: the expired answer is inferred from the foreign-key JWT's");
  if (o.revokedToken) await get("revoked_token", "with --revoked-token", bearer(o.revokedToken));
  else p.skip("revoked_token", "no --revoked-token: the revoked answer is inferred from the foreign-key JWT's");
}

/** payment/init's refusals: the access token where the payment token belongs, and a payment token no merchant has. */
export async function probePaymentInitRefusals(p: Prober, fresh: string | undefined): Promise<void> {
  if (fresh)
    await p.send({
      probe: "payment_init_jwt",
      sent: `POST ${INIT} with the JWT (and an empty order)`,
      method: "POST",
      path: INIT,
      init: emptyOrder(fresh),
    });
  else p.skip("payment_init_jwt", "no token was issued");
  await p.send({
    probe: "wrong_payment_token",
    sent: `POST ${INIT} with a payment token no merchant has (and an empty order)`,
    method: "POST",
    path: INIT,
    init: emptyOrder("calibrate-unknown-payment-token"),
  });
}

/** The deprecated login, with --login: its answer, and its refusal of a wrong password. */
export async function probeLogin(p: Prober, o: ProbeCredentials): Promise<void> {
  if (!o.login) {
    p.skip("login", "no --login: the login's answer is not in the profile");
    return;
  }
  const { email, password } = o.login;
  await p.send({ probe: "login", sent: `POST ${LOGIN} with --login`, method: "POST", path: LOGIN, init: json({ username: email, password }) });
  await p.send({
    probe: "wrong_password",
    sent: `POST ${LOGIN} with --login's e-mail and a wrong password`,
    method: "POST",
    path: LOGIN,
    init: json({ username: email, password: "calibrate-wrong-password" }),
  });
}

/** payment/init's success, only with --allow-writes and --payment-token: it creates two test payments. What was sent, or undefined. */
export async function probePaymentInit(p: Prober, o: ProbeCredentials, startedAt: number): Promise<Record<string, string | number> | undefined> {
  if (!o.allowWrites || !o.paymentToken) {
    p.skip(
      "payment_init",
      o.allowWrites
        ? "no --payment-token: payment/init's success is not in the profile"
        : "a write: sent only with --allow-writes (and --payment-token)",
    );
    return undefined;
  }
  const order = { amount: 100, currency: "EUR", order_id: `calibrate-${startedAt}` };
  const headers = { ...bearer(o.paymentToken).headers, "content-type": "application/json" };
  await p.send({
    probe: "payment_init",
    sent: `POST ${INIT} with the payment token (creates two test payments)`,
    method: "POST",
    path: INIT,
    init: { headers, body: JSON.stringify(order) },
    again: { headers, body: JSON.stringify({ ...order, order_id: `calibrate-${startedAt}-2` }) },
  });
  return order;
}

/**
 * A JWT the provider's keys did not sign: the same alg, typ and claims as its own token (so it is
 * refused for its signature, not its shape), signed by a key calibrate makes up and names.
 */
async function foreignJwt(fresh: string | undefined): Promise<string> {
  let header: Record<string, unknown> = {};
  let payload: Record<string, unknown> = {};
  if (fresh) {
    header = decodeProtectedHeader(fresh) as Record<string, unknown>;
    payload = decodeJwt(fresh) as Record<string, unknown>;
  }
  const alg = ["RS256", "ES256", "HS256", "PS256", "EdDSA"].includes(String(header.alg)) ? String(header.alg) : "RS256";
  const key = alg === "HS256" ? new Uint8Array(randomBytes(32)) : (await generateKeyPair(alg)).privateKey;
  // The times of the provider's own token, on the provider's clock: a provider that checks expiry
  // before the signature (Lexik) must refuse it for its signature, however its clock differs from ours.
  const now = Math.floor(Date.now() / 1000);
  const times = typeof payload.iat === "number" && typeof payload.exp === "number" ? {} : { iat: now, exp: now + 300 };
  // A kid only where the provider's own tokens name one: a kid-less provider sees its own header shape.
  const kid = fresh === undefined || typeof header.kid === "string" ? { kid: "merchant-sandbox-calibrate-foreign-key" } : {};
  return new SignJWT({ ...payload, ...times })
    .setProtectedHeader({ alg, ...kid, ...(typeof header.typ === "string" && { typ: header.typ }) })
    .sign(key);
}
