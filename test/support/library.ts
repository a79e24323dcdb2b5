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
