import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { runCliToEnd, startCliServer } from "../support/cli.js";
import { ENVELOPE_CREDENTIALS } from "../support/providers/envelope.js";
import { type RefusalKind, startProvider } from "../support/providers/kit.js";
import { postJson } from "../support/server.js";

/**
 * Issue 33, point 2: a token answer with a second token beside the access token. calibrate must
 * bind {{access_token}} to the one the protected route accepts (not the first JWT it meets) and
 * write the other as a placeholder of its own; the sandbox serving the profile makes a fresh value
 * of that shape each time, which no protected route accepts.
 */

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
/** A refresh token of Keycloak's form (HS512, typ Refresh), signed by no key the provider verifies with. */
const refreshToken = () =>
  `${b64({ alg: "HS512", typ: "JWT" })}.${b64({ typ: "Refresh", jti: randomUUID(), iat: 1, exp: 2 })}.${randomBytes(64).toString("base64url")}`;

const dir = mkdtempSync(join(tmpdir(), "calibrate-second-token-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("calibrate against a token answer whose names do not say which JWT is the access token", () => {
  it("tries each on the protected route, binds the accepted one, and the sandbox serves a fresh refresh token no route accepts", async () => {
    const provider = await startProvider(
      {
        alg: "RS256",
        typ: "JWT",
        ttlSeconds: 900,
        claims: (merchantId) => ({ sub: merchantId }),
        // The refresh token first: the first JWT met is not the access token.
        token: (jwt, ttl) => ({ status: 200, body: { a: refreshToken(), b: jwt, ttl } }),
        refusal: (kind: RefusalKind) => ({ status: kind === "malformed_json" || kind === "missing_secret" ? 400 : 401, body: { error: kind } }),
        paymentInit: (id) => ({ status: 201, body: { id } }),
      },
      ENVELOPE_CREDENTIALS,
    );
    const file = join(dir, "two-tokens.yaml");
    try {
      const c = provider.credentials;
      const run = await runCliToEnd(["calibrate", "--url", provider.url, "--api-key", c.apiKey, "--api-secret", c.apiSecret, "--out", file]);
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      const profile = YAML.parse(readFileSync(file, "utf8"));
      expect(profile.token.body).toEqual({ a: "{{refresh_token:jwt}}", b: "{{access_token}}", ttl: "{{expires_in}}" });
      const rows = run.stdout.split("\n");
      // The table's last column, as far as its first line goes.
      expect(rows.find((r) => r.startsWith("token_body"))).toContain("inferred: a: another token, written as {{refresh_token:jwt}}");
      // The protected route answered 200 to the fresh token: b, not a.
      expect(rows.find((r) => r.startsWith("protected_fresh"))).toMatch(/^protected_fresh +200 /);
    } finally {
      await provider.close();
    }

    const sandbox = await startCliServer(["--profile", file]);
    try {
      const exchange = async () => {
        const r = await fetch(`${sandbox.url}/api/v2/auth/token`, postJson({ api_key: "sandbox-api-key", api_secret: "sandbox-api-secret" }));
        expect([r.status, r.headers.get("content-type")]).toEqual([200, "application/json"]);
        return (await r.json()) as { a: string; b: string; ttl: number };
      };
      const first = await exchange();
      const second = await exchange();
      const jwtForm = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
      expect(first.a).toMatch(jwtForm);
      expect(first.a).not.toBe(second.a);
      expect(first.a).not.toBe(first.b);
      // The provider's lifetime, as the profile's jwt.ttl learnt it.
      expect(first.ttl).toBe(900);
      expect(JSON.parse(Buffer.from(first.a.split(".")[0]!, "base64url").toString())).toEqual({ alg: "HS256", typ: "JWT" });
      const call = (token: string) => fetch(`${sandbox.url}/api/v2/payment/p_1`, { headers: { authorization: `Bearer ${token}` } });
      const answered = await call(first.b);
      expect([answered.status, answered.headers.get("content-type"), await answered.json()]).toEqual([
        200,
        "application/json",
        { ok: true, path: "/api/v2/payment/status" },
      ]);
      // The refresh token as a bearer token: refused as the provider refuses a JWT no key of its made.
      const refused = await call(first.a);
      expect([refused.status, refused.headers.get("content-type"), await refused.json()]).toEqual([
        401,
        "application/json",
        { error: "invalid_token" },
      ]);
    } finally {
      sandbox.child.kill();
      await sandbox.exited;
    }
  }, 60_000);
});
