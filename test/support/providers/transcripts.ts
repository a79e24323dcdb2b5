/** The Go service's client against it (go-service.ts). */
const GO = [
  "token by body: ok 200 kept the token",
  "token by headers: ok 200 kept the token",
  "protected call: ok 200 read the answer",
  'expired token: ok 401→200→200 "token has invalid claims: token is expired": renewed the token, retried: read the answer',
  'invalid signature: ok 401→200→200 "token signature is invalid: signature is invalid": re-authenticated, retried: read the answer',
  'not a JWT: ok 401→200→200 "token is malformed: token contains an invalid number of segments": re-authenticated, retried: read the answer',
  'no token: ok 401→200→200 "missing bearer token": re-authenticated, retried: read the answer',
  "wrong secret: refused 401 wrong credentials",
  "missing secret: refused 400 request rejected: api_key and api_secret are required",
  "payment/init with the payment token: ok 201 payment created",
  "payment/init with a JWT: refused 401 payment token refused: payment token required",
  "login: ok 200 kept the token",
  "protected call with the login's token: ok 200 read the answer",
];

/**
 * The transcripts of frameworkFlow (framework-flow.ts) each framework client gives against its own
 * fake provider; the sandbox serving the profile calibrate learned from that fake must give the
 * same (calibrate-frameworks.test.ts).
 */
export const FRAMEWORK_TRANSCRIPTS = {
  lexik: [
    "token by body: ok 200 kept the token",
    "token by headers: ok 200 kept the token",
    "protected call: ok 200 read the answer",
    'expired token: ok 401→200→200 "Expired JWT Token": renewed the token, retried: read the answer',
    'invalid signature: ok 401→200→200 "Invalid JWT Token": re-authenticated, retried: read the answer',
    'not a JWT: ok 401→200→200 "Invalid JWT Token": re-authenticated, retried: read the answer',
    'no token: ok 401→200→200 "JWT Token not found": re-authenticated, retried: read the answer',
    "wrong secret: refused 401 wrong credentials",
    "missing secret: refused 400 request rejected: Bad Request",
    "payment/init with the payment token: ok 201 payment created",
    "payment/init with a JWT: refused 401 payment token refused",
    "login: ok 200 kept the token",
    "protected call with the login's token: ok 200 read the answer",
  ],
  spring: [
    "token by body: ok 200 kept the token",
    "token by headers: ok 200 kept the token",
    "protected call: ok 200 read the answer",
    "expired token: ok 401→200→200 invalid_token, Jwt expired: renewed the token, retried: read the answer",
    "invalid signature: ok 401→200→200 invalid_token (An error occurred while attempting to decode the Jwt: Signed JWT rejected: Invalid signature): re-authenticated, retried: read the answer",
    "not a JWT: ok 401→200→200 invalid_token (An error occurred while attempting to decode the Jwt: Malformed token): re-authenticated, retried: read the answer",
    "no token: ok 401→200→200 no token taken (Bearer): re-authenticated, retried: read the answer",
    "wrong secret: refused 401 wrong credentials",
    "missing secret: refused 400 request rejected: Bad Request",
    "payment/init with the payment token: ok 201 payment created",
    "payment/init with a JWT: refused 401 payment token refused: invalid_token (Provided token isn't active)",
    "login: ok 200 kept the token",
    "protected call with the login's token: ok 200 read the answer",
  ],
  laravel: [
    "token by body: ok 200 kept the token",
    "token by headers: ok 200 kept the token",
    "protected call: ok 200 read the answer",
    'expired token: ok 401→200→200 "Token has expired": renewed the token, retried: read the answer',
    'invalid signature: ok 401→200→200 "Token Signature could not be verified.": re-authenticated, retried: read the answer',
    'not a JWT: ok 401→200→200 "Wrong number of segments": re-authenticated, retried: read the answer',
    'no token: ok 401→200→200 "Token not provided": re-authenticated, retried: read the answer',
    "wrong secret: refused 401 wrong credentials",
    "missing secret: refused 422 validation failed: api_secret",
    "payment/init with the payment token: ok 201 payment created",
    "payment/init with a JWT: refused 401 payment token refused",
    "login: ok 200 kept the token",
    "protected call with the login's token: ok 200 read the answer",
  ],
  go: GO,
  // Behind the gateway, nginx's page answers where the Go service said "missing bearer token".
  gateway: GO.map((line) =>
    line.startsWith("no token:") ? "no token: ok 401→200→200 the gateway's 401 page: re-authenticated, retried: read the answer" : line,
  ),
  keycloak: [
    "token by body: ok 200 kept the token",
    "token by headers: ok 200 kept the token",
    "protected call: ok 200 read the answer",
    'expired token: ok 401→200→200 "Token is not active": renewed the token, retried: read the answer',
    'invalid signature: ok 401→200→200 "Invalid token signature": re-authenticated, retried: read the answer',
    'not a JWT: ok 401→200→200 "Failed to parse JWT": re-authenticated, retried: read the answer',
    "no token: ok 401→200→200 no token taken: re-authenticated, retried: read the answer",
    "wrong secret: refused 401 wrong credentials",
    "missing secret: refused 401 wrong credentials",
    "payment/init with the payment token: ok 201 payment created",
    "payment/init with a JWT: refused 401 payment token refused: Payment token required",
    "login: ok 200 kept the token",
    "protected call with the login's token: ok 200 read the answer",
  ],
};
