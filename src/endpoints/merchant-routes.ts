/**
 * The merchant API's routes as the OpenAPI document writes them: the exact paths of
 * src/core/router.ts, each with the methods its endpoint takes (the rest answer 405), and the two
 * protected groups, which take any method on any path under their prefix (`{path}`).
 */
const ANY_METHOD = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] as const;

export const MERCHANT_ROUTE_TABLE: ReadonlyArray<{ path: string; methods: readonly string[] }> = [
  { path: "/api/v2/auth/token", methods: ["POST"] },
  { path: "/api/v2/payment/init", methods: ["POST"] },
  { path: "/api/v2/payment/{path}", methods: ANY_METHOD },
  { path: "/api/v2/cashout/{path}", methods: ANY_METHOD },
  { path: "/.well-known/jwks.json", methods: ["GET", "HEAD"] },
  { path: "/api/login_check", methods: ["POST"] },
];
