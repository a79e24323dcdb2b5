import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { afterAll, describe, expect, it } from "vitest";
import { runCliToEnd } from "../support/cli.js";
import { ENVELOPE_CREDENTIALS } from "../support/providers/envelope.js";
import { type RefusalKind, startProvider } from "../support/providers/kit.js";

/**
 * calibrate copies live provider credentials into the profile (attack round four, class 2): a
 * provider whose token exchange and login answer with a session cookie and a refresh token in
 * headers. Each is a live credential at the provider: the profile must hold neither, and the
 * table says what was left out and why.
 */

const dir = mkdtempSync(join(tmpdir(), "calibrate-credentials-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const REFUSALS: Record<RefusalKind, number> = {
  bad_credentials: 401,
  unknown_key: 401,
  bad_login: 401,
  missing_secret: 400,
  malformed_json: 400,
  no_token: 401,
  invalid_token: 401,
  expired_token: 401,
  jwt_on_payment_init: 401,
  unknown_payment_token: 401,
};

describe("calibrate copies live provider credentials into the profile", () => {
  it("writes no Set-Cookie and no refresh token of the token exchange or the login, and says so", async () => {
    const given: string[] = [];
    const credentials = () => {
      const cookie = `SESSIONID=${randomBytes(20).toString("hex")}`;
      const refresh = `rt_${randomBytes(24).toString("hex")}`;
      given.push(cookie, refresh);
      return { "set-cookie": `${cookie}; Path=/; HttpOnly`, "x-refresh-token": refresh };
    };
    const provider = await startProvider(
      {
        alg: "RS256",
        typ: "JWT",
        ttlSeconds: 3600,
        claims: (merchantId) => ({ sub: merchantId }),
        token: (jwt, ttl) => ({ status: 200, headers: credentials(), body: { access_token: jwt, token_type: "Bearer", expires_in: ttl } }),
        login: (jwt) => ({ status: 200, headers: credentials(), body: { token: jwt } }),
        refusal: (kind) => ({ status: REFUSALS[kind], body: { error: kind } }),
        paymentInit: (id) => ({ status: 201, body: { payment_id: id } }),
      },
      ENVELOPE_CREDENTIALS,
    );
    const c = provider.credentials;
    const file = join(dir, "cookies.profile.yaml");
    const run = await runCliToEnd([
      "calibrate",
      "--url",
      provider.url,
      "--api-key",
      c.apiKey,
      "--api-secret",
      c.apiSecret,
      "--login",
      `${c.email}:${c.password}`,
      "--out",
      file,
    ]);
    expect(run.code).toBe(0);
    const written = readFileSync(file, "utf8");
    expect(given.length).toBeGreaterThanOrEqual(4);
    for (const credential of given) {
      expect(written).not.toContain(credential);
      expect(run.stdout + run.stderr).not.toContain(credential);
    }
    expect(written.toLowerCase()).not.toContain("set-cookie");
    // The refresh token changed between the two identical logins in a shape the sandbox makes:
    // a fresh one each answer, never the provider's.
    expect(YAML.parse(written).login.headers).toEqual({ "X-Refresh-Token": "rt_{{fresh:hex-48}}" });
    // The table's row: what was left out, and why.
    expect(run.stdout).toMatch(/^credentials +headers: Set-Cookie \(a cookie\) +left out +inferred: a credential the provider gave/m);
    await provider.close();
  });
});
