import type { Faker } from "@faker-js/faker";
import { jwtShape } from "../core/jwt-runs.js";
import type { PaymentTokenTransport, SandboxSettings } from "../core/config.js";
import { jsonResponse, type Endpoint } from "../core/context.js";
import { InvalidRequest, InvalidToken, MissingCredentials } from "../core/errors.js";
import { headerCount, headerValue, type SandboxRequest } from "../core/http-types.js";
import { readJsonObject, type JsonBodyOptions } from "../core/json-body.js";
import { assertNoTokenInQuery, readBearerToken } from "../core/bearer.js";
import { requireSessionMerchant } from "../core/session-binding.js";

/**
 * POST /api/v2/payment/init: a hosted payment, authorised by the merchant payment token (not the
 * JWT). Sending the access token here is the mistake integrations make most, so that refusal
 * explains the two tokens.
 */
export const paymentInitEndpoint: Endpoint = async (request, ctx, trace) => {
  // Its form (method, size, JSON) was checked before (request-form.ts).
  assertNoTokenInQuery(request);
  // The transport of the scenario the token belongs to (found wherever it was sent), else the primary's.
  const transport = trace.scenario.settings.paymentTokenTransport;
  const body = readJsonObject(request, trace.body, paymentInitBody(trace.scenario.settings));
  const presented = readPaymentToken(request, body, transport);
  if (trace.effects.rejectCredentials) {
    throw new InvalidToken(
      "credentials_rejected",
      `The merchant payment token was rejected (scenario '${trace.scenario.name}' simulates this). Your integration should report it and not retry in a loop.`,
    );
  }

  if (jwtShape(presented) !== undefined) {
    throw new InvalidToken(
      "access_token_on_payment_init",
      `This is a JWT access token, but POST /api/v2/payment/init is authorised by the merchant payment token (a separate, long-lived opaque token configured per merchant), not by the token from /api/v2/auth/token. Send the payment token ${describeTransport(transport)}.`,
    );
  }
  // Found by the whole token as the key, so a constant-time comparison after the lookup would hide
  // nothing (it cost two SHA-256 hashes per call): the token is only checked to be the current one.
  const merchant = ctx.merchants.byPayment(presented);
  if (!merchant || merchant.paymentToken !== presented) {
    throw new InvalidToken(
      "payment_token_unknown",
      `The merchant payment token is not known to this sandbox (expired, revoked, or mistyped). Use the payment token configured for your merchant (the built-in merchant's is in the README).`,
    );
  }
  requireSessionMerchant(trace, merchant, ctx.scenarios);
  trace.merchantId = merchant.id;
  if (merchant.paymentTokenState) {
    throw new InvalidToken(
      `payment_token_${merchant.paymentTokenState}`,
      `The merchant payment token of '${merchant.id}' has been ${merchant.paymentTokenState}. Get the merchant's current payment token from its configuration; payment/init cannot work until then.`,
    );
  }
  if (merchant.disabled) {
    throw new InvalidToken(
      "merchant_disabled",
      `The merchant of this payment token ('${merchant.id}') is disabled, so it cannot start payments. Use an active merchant's payment token.`,
    );
  }

  const paymentId = paymentIdOf(ctx.faker);
  const createdAt = new Date(ctx.scenarios.of(merchant).clock.now());

  const answer = {
    payment_id: paymentId,
    checkout_url: `https://checkout.sandbox.test/pay/${paymentId}`,
    merchant_id: merchant.id,
    status: "created",
    created_at: createdAt.toISOString(),
    expires_at: new Date(createdAt.getTime() + 30 * 60_000).toISOString(),
    ...echoOrderFields(body),
    note: "Hosted checkout is not simulated beyond this answer; the URL is a sandbox placeholder.",
  };
  const headers = { location: `/api/v2/payment/${paymentId}` };
  return ctx.scenarios.of(merchant).shaper?.paymentInit(answer, headers, trace.facts) ?? jsonResponse(201, answer, headers);
};

/**
 * payment/init's body: JSON only when the scenario takes the payment token in it; otherwise a body
 * not declared as JSON is not read at all (the spec leaves the payload open).
 */
export function paymentInitBody(settings: SandboxSettings): JsonBodyOptions {
  const transport = settings.paymentTokenTransport;
  return {
    strictContentType: transport.kind === "body",
    endpoint: "POST /api/v2/payment/init",
    example: transport.kind === "body" ? `{"${transport.field}": "...", "amount": 1999, "currency": "EUR"}` : '{"amount": 1999, "currency": "EUR"}',
  };
}

/** What a payment id is made of: faker's alphanumeric characters, lower case. */
const PAYMENT_ID_CHARACTERS: readonly string[] = [..."0123456789abcdefghijklmnopqrstuvwxyz"];

/**
 * `pay_` and 24 characters drawn as faker.string.alphanumeric({ length: 24, casing: "lower" })
 * draws them (helpers.arrayElement over the 36 characters, one draw each), so a seed gives the same
 * ids as before (payment-init.test.ts pins two), without the character arrays that call builds on
 * every request.
 */
function paymentIdOf(faker: Faker): string {
  let id = "pay_";
  for (let i = 0; i < 24; i++) id += faker.helpers.arrayElement(PAYMENT_ID_CHARACTERS);
  return id;
}

function readPaymentToken(request: SandboxRequest, body: Record<string, unknown> | undefined, transport: PaymentTokenTransport): string {
  if (transport.kind === "authorization") {
    return readBearerToken(request, {
      tokenName: "merchant payment token",
      howToGet: "the payment token configured for your merchant, not the JWT from /api/v2/auth/token",
    });
  }
  if (transport.kind === "header") {
    if (headerCount(request, transport.name) > 1)
      throw new InvalidRequest("payment_token_header_repeated", `The ${transport.name} header was sent more than once. Send it once.`);
    const value = headerValue(request, transport.name)?.trim();
    if (!value) throw new MissingCredentials(`No merchant payment token was sent. Send it ${describeTransport(transport)}.`);
    return value;
  }
  const value = body?.[transport.field];
  if (value === undefined || value === "") {
    throw new MissingCredentials(`No merchant payment token was sent. Send it ${describeTransport(transport)}.`);
  }
  if (typeof value !== "string") {
    throw new InvalidRequest("payment_token_not_string", `The body field "${transport.field}" must be a string holding the merchant payment token.`);
  }
  return value;
}

function describeTransport(t: PaymentTokenTransport): string {
  if (t.kind === "authorization") return "as 'Authorization: Bearer <payment token>'";
  if (t.kind === "header") return `in the '${t.name}' header`;
  return `as the JSON body field "${t.field}"`;
}

/** Echo only plain order fields the caller sent, so the placeholder is recognisably theirs. */
function echoOrderFields(body: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!body) return {};
  const out: Record<string, unknown> = {};
  for (const field of ["amount", "currency", "order_id", "reference"]) {
    const v = body[field];
    if (typeof v === "string" ? v.length <= 200 : typeof v === "number" && Number.isFinite(v)) out[field] = v;
  }
  return out;
}
