/**
 * The placeholders each part of a profile may use, with the JSON type of their value (for the
 * OpenAPI document's schemas, template-schema.ts). A name not listed for a part is a load error.
 */

export type PlaceholderType =
  | "string"
  | "number"
  | "object"
  | "string|null"
  | "number|null"
  | "string|number"
  | "string|number|null"
  /** A TimeValue: text or a number, by the format the template names (time-value.ts). */
  | "time"
  | "time|null"
  /** A CountValue: an integer that moves by one per answer (count-value.ts). */
  | "counter"
  /** A CompanionTokenValue: a fresh token of the shape the template names (companion-token.ts). */
  | "companion";

/** What every part may use: the request's own values (one request id per answer, shared by its headers and body). */
const EVERY_PART = {
  request_id: "string",
  now: "time",
  method: "string",
  path: "string",
  /** The path without its leading '/' (Laravel's `$request->path()`). */
  route: "string",
  /** A gateway's counting header: N-1 down to 0 and round again; 1, 2, 3 up from the start. */
  count_down: "counter",
  count_up: "counter",
  /** An id made per answer in a shape of companion-token.ts (`acme_{{fresh:hex-12}}`). */
  fresh: "companion",
} as const;

const TOKEN = {
  ...EVERY_PART,
  status: "number",
  status_text: "string",
  access_token: "string",
  token_type: "string",
  expires_in: "number",
  expires_in_minutes: "number",
  expires_at: "time",
  expires_at_unix: "number",
  issued_at: "time",
  scope: "string",
  /** A refresh token and an id_token of the provider's shape, fresh per answer; no key accepts them. */
  refresh_token: "companion",
  id_token: "companion",
} as const;

const REFUSAL = {
  ...EVERY_PART,
  status_text: "string",
  /** The sandbox's own fix-it text, whatever `message` says. */
  explanation: "string",
  /** The RFC 6750 description the sandbox's challenge would carry. */
  error_description: "string",
  /** The refused token's exp, when the sandbox read one. */
  token_expires_at: "time|null",
  code: "string", // a number when `codes` gives one; see refusalCodeType
  sandbox_code: "string",
  message: "string",
  status: "number",
  error: "string|null",
  instance: "string",
} as const;

/** The members of payment/init's body (src/endpoints/payment-init.ts), each by its own name. */
const PAYMENT_INIT = {
  ...EVERY_PART,
  status_text: "string",
  payment_id: "string",
  checkout_url: "string",
  merchant_id: "string",
  status: "string",
  created_at: "string",
  expires_at: "string",
  amount: "string|number|null",
  currency: "string|null",
  order_id: "string|null",
  reference: "string|null",
  note: "string",
  sandbox: "object",
} as const;

const PROTECTED = { ...EVERY_PART, status: "number", status_text: "string", sandbox: "object", operation: "string", merchant_id: "string" } as const;

export type ProfilePart = "token" | "login" | "refusal" | "paymentInit" | "protected" | "headers";

export const PLACEHOLDERS: Readonly<Record<ProfilePart, Readonly<Record<string, PlaceholderType>>>> = {
  token: TOKEN,
  login: TOKEN,
  refusal: REFUSAL,
  paymentInit: PAYMENT_INIT,
  protected: PROTECTED,
  /** The profile-wide headers, on every answer: only what every answer knows. */
  headers: { ...EVERY_PART, status: "number", status_text: "string" },
};
