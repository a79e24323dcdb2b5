/**
 * The placeholders each part of a profile may use, with the JSON type of their value (for the
 * OpenAPI document's schemas, template-schema.ts). A name not listed for a part is a load error.
 */

export type PlaceholderType = "string" | "number" | "object" | "string|null" | "number|null" | "string|number" | "string|number|null";

const TOKEN = {
  access_token: "string",
  token_type: "string",
  expires_in: "number",
  expires_in_minutes: "number",
  expires_at: "string",
  expires_at_unix: "number",
  issued_at: "string",
  scope: "string",
} as const;

const REFUSAL = {
  code: "string", // a number when `codes` gives one; see refusalCodeType
  sandbox_code: "string",
  message: "string",
  status: "number",
  error: "string|null",
  instance: "string",
} as const;

/** The members of payment/init's body (src/endpoints/payment-init.ts), each by its own name. */
const PAYMENT_INIT = {
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

const PROTECTED = { sandbox: "object", operation: "string" } as const;

export type ProfilePart = "token" | "login" | "refusal" | "paymentInit" | "protected";

export const PLACEHOLDERS: Readonly<Record<ProfilePart, Readonly<Record<string, PlaceholderType>>>> = {
  token: TOKEN,
  login: TOKEN,
  refusal: REFUSAL,
  paymentInit: PAYMENT_INIT,
  protected: PROTECTED,
};
