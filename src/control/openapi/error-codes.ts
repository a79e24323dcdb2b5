import { CATALOGUE_CODES, catalogueEntry, type ErrorCode, SIMULATED_CODE } from "../../core/error-catalogue.js";

/**
 * `components.schemas.ErrorCode`, read from the error catalogue (src/core/error-catalogue.ts):
 * every code with its statuses, OAuth error, meaning and fix; and the lists each response narrows
 * `code` to.
 */
export const errorCodeSchema = {
  title: "ErrorCode",
  description:
    "The stable refusal code: switch on this, never on the text. Each value below says when the sandbox gives it and how to fix the request; `simulated_<status>` is any other error status a scenario rule scripts.",
  anyOf: [
    ...CATALOGUE_CODES.map((code) => ({ const: code, description: codeDescription(code) })),
    { type: "string", pattern: SIMULATED_CODE.pattern, description: SIMULATED_CODE.meaning },
  ],
};

/** `401 invalid_token: <meaning> Fix: <fix>` */
function codeDescription(code: ErrorCode): string {
  const { status, error, meaning, fix } = catalogueEntry(code);
  return `${status.join(" or ")}${error.length > 0 ? ` ${error.join(" or ")}` : ""}: ${meaning} Fix: ${fix}`;
}

/** The codes each refusal of the API can carry, by endpoint and status. */
export const BODY_CODES = ["body_malformed_json", "body_not_object", "body_not_utf8"] as const;
export const BEARER_HEADER_CODES = [
  "authorization_not_bearer",
  "bearer_token_empty",
  "bearer_token_malformed",
  "authorization_header_repeated",
] as const;

export const TOKEN_400_CODES = [
  "api_key_missing",
  "api_secret_missing",
  "credential_conflict",
  "credential_sent_twice",
  "credential_not_string",
  "credential_header_repeated",
  ...BODY_CODES,
] as const;
export const TOKEN_401_CODES = ["unknown_api_key", "wrong_api_secret", "credentials_rejected", "merchant_disabled"] as const;

export const GROUP_400_CODES = [...BEARER_HEADER_CODES, "token_in_query"] as const;
export const GROUP_401_CODES = [
  "credentials_missing",
  "credentials_rejected",
  "payment_token_not_accepted",
  "token_malformed",
  "token_encrypted",
  "token_algorithm_rejected",
  "token_kid_missing",
  "token_unknown_kid",
  "token_signature_invalid",
  "token_unsupported",
  "token_claims_invalid",
  "token_not_access_token",
  "token_wrong_issuer",
  "token_wrong_audience",
  "token_unknown_merchant",
  "token_not_yet_valid",
  "token_expired",
  "token_revoked",
  "merchant_disabled",
] as const;

export const INIT_400_CODES = [...BEARER_HEADER_CODES, "payment_token_header_repeated", "payment_token_not_string", ...BODY_CODES] as const;
export const INIT_401_CODES = [
  "credentials_missing",
  "credentials_rejected",
  "access_token_on_payment_init",
  "payment_token_unknown",
  "payment_token_expired",
  "payment_token_revoked",
  "merchant_disabled",
] as const;

export const LOGIN_400_CODES = ["login_body_missing", "login_username_missing", "login_password_missing", ...BODY_CODES] as const;
