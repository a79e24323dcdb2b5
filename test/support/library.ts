/**
 * The names of the scenario library (scenarios/*.yaml), sorted: written out rather than read from
 * the folder, so a scenario added or lost is a test failure until this list says so.
 */
export const LIBRARY = [
  "cashout-without-scope",
  "default",
  "login-gone",
  "merchant-disabled",
  "payment-token-expired",
  "secret-rotated",
  "server-clock-ahead",
  "server-clock-behind",
  "short-lived-tokens",
  "signing-key-rotation",
  "signing-key-rotation-overlap",
  "slow-token-endpoint",
  "token-connection-dropped",
  "token-endpoint-outage",
  "token-expires-after-calls",
  "token-rate-limited",
  "token-revoked-mid-session",
] as const;

/**
 * The library scenarios whose merchants are refused by script (a disabled merchant, an outage, a
 * rate limit, a missing scope, the login gone, an expired payment token, revoked tokens): the
 * OpenAPI tests drive every operation as each of them, so scripted refusals are checked too.
 */
export const REFUSING_SCENARIOS = [
  "merchant-disabled",
  "token-endpoint-outage",
  "token-rate-limited",
  "cashout-without-scope",
  "login-gone",
  "payment-token-expired",
  "token-revoked-mid-session",
] as const;
