import { describe, expect, it } from "vitest";
import { runCli, startCliServer } from "../support/cli.js";
import { postJson, type TestServer, serversPerTest } from "../support/server.js";

/**
 * Issue 10 §2: only a proven identity (a matching secret or password, the payment token, a JWT a
 * sandbox key signed) fires a merchant's rules, counts its calls, changes its state or produces
 * findings. A request that merely names a merchant (a wrong secret, a forged or unsigned JWT with
 * its `sub`) is journaled as unverified and reported as `info` at most.
 */

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

/** A JWT that names `sub` but that no sandbox key signed: what anyone can write. */
function forgedToken(sub: string, alg: "RS256" | "none" = "RS256"): string {
  const now = Math.floor(Date.UTC(2026, 0, 1) / 1000);
  const header = { alg, typ: "at+jwt", kid: "forged-kid" };
  const claims = {
    iss: "https://merchant-sandbox.test",
    aud: "merchant-api",
    sub,
    jti: `forged-${sub}`,
    iat: now,
    exp: now + 3600,
    scope: "payment cashout",
  };
  return `${b64(header)}.${b64(claims)}.${alg === "none" ? "" : "c2lnbmF0dXJl"}`;
}

/** Credentials of a library scenario's merchant, as scenarios/<name>.yaml declares them. */
function creds(name: string) {
  return { id: `m_${name.replace(/-/g, "_")}`, apiKey: `${name}-key`, apiSecret: `${name}-secret`, paymentToken: `${name}-payment-token` };
}

const exchange = (t: TestServer, apiKey: string, apiSecret: string) =>
  t.call("/api/v2/auth/token", postJson({ api_key: apiKey, api_secret: apiSecret }));
const pay = (t: TestServer, token: string) => t.call("/api/v2/payment/orders", { headers: { authorization: `Bearer ${token}` } });

describe("regression: unverified identities (issue 10 §2)", () => {
  const start = serversPerTest();

  it("regression: forged tokens naming token-revoked-mid-session's merchant do not trigger its revocation", async () => {
    const t = await start({ scenarios: ["token-revoked-mid-session"] });
    const c = creds("token-revoked-mid-session");
    const real = await t.token(c.apiKey, c.apiSecret);
    for (const alg of ["RS256", "none", "RS256"] as const) {
      const r = await pay(t, forgedToken(c.id, alg));
      expect(r.status).toBe(401);
    }
    // The rule (revoke on the 2nd call) is the real client's: its 1st call works, its 2nd is revoked.
    expect((await pay(t, real)).status).toBe(200);
    const second = await pay(t, real);
    expect([second.status, second.json.code, second.headers.get("x-sandbox-rule")]).toEqual([
      401,
      "token_revoked",
      "token-revoked-mid-session/revoke-on-second-call",
    ]);
  });

  it("regression: forged tokens naming signing-key-rotation's merchant do not rotate its key", async () => {
    const t = await start({ scenarios: ["signing-key-rotation"] });
    const c = creds("signing-key-rotation");
    const real = await t.token(c.apiKey, c.apiSecret);
    for (let i = 0; i < 3; i++) expect((await pay(t, forgedToken(c.id))).json.code).toBe("token_unknown_kid");
    expect((await pay(t, real)).status).toBe(200);
    expect((await pay(t, real)).status).toBe(200);
    // The third call of the real client is the one that rotates the key.
    const third = await pay(t, real);
    expect([third.status, third.json.code]).toEqual([401, "token_unknown_kid"]);
  });

  it("regression: forged JWTs on payment/init naming payment-token-expired's merchant do not expire its payment token", async () => {
    const t = await start({ scenarios: ["payment-token-expired"] });
    const c = creds("payment-token-expired");
    for (let i = 0; i < 2; i++) {
      const r = await t.call("/api/v2/payment/init", { method: "POST", headers: { authorization: `Bearer ${forgedToken(c.id)}` } });
      expect([r.status, r.json.code]).toEqual([401, "access_token_on_payment_init"]);
    }
    const first = await t.call("/api/v2/payment/init", { method: "POST", headers: { authorization: `Bearer ${c.paymentToken}` } });
    expect(first.status).toBe(201);
    const second = await t.call("/api/v2/payment/init", { method: "POST", headers: { authorization: `Bearer ${c.paymentToken}` } });
    expect([second.status, second.json.code]).toEqual([401, "payment_token_expired"]);
  });

  it("regression: a wrong-secret exchange does not trigger merchant-disabled's rule", async () => {
    const t = await start({ scenarios: ["merchant-disabled"] });
    const c = creds("merchant-disabled");
    const wrong = await exchange(t, c.apiKey, "not-the-secret");
    expect([wrong.status, wrong.json.code, wrong.headers.get("x-sandbox-rule")]).toEqual([401, "wrong_api_secret", null]);
    // The real client's first exchange is the one the scenario scripts: it works, then the key is revoked.
    expect((await exchange(t, c.apiKey, c.apiSecret)).status).toBe(200);
    expect((await exchange(t, c.apiKey, c.apiSecret)).json.code).toBe("merchant_disabled");
  });

  it("regression: wrong-secret exchanges do not use up token-endpoint-outage's scripted 503s", async () => {
    const t = await start({ scenarios: ["token-endpoint-outage"] });
    const c = creds("token-endpoint-outage");
    for (let i = 0; i < 2; i++) expect((await exchange(t, c.apiKey, "not-the-secret")).json.code).toBe("wrong_api_secret");
    // The real client still sees the whole outage.
    expect((await exchange(t, c.apiKey, c.apiSecret)).status).toBe(503);
    expect((await exchange(t, c.apiKey, c.apiSecret)).status).toBe(503);
    expect((await exchange(t, c.apiKey, c.apiSecret)).status).toBe(200);
  });

  it("regression: a rotated-away secret still proves who the client is (it counts in its own report)", async () => {
    const t = await start({ scenarios: ["secret-rotated"] });
    const c = creds("secret-rotated");
    expect((await exchange(t, c.apiKey, c.apiSecret)).status).toBe(200);
    expect((await exchange(t, c.apiKey, c.apiSecret)).json.code).toBe("wrong_api_secret"); // the rule rotates here
    expect((await exchange(t, c.apiKey, c.apiSecret)).json.code).toBe("wrong_api_secret");
    expect(t.sandbox.journal.list().map((e) => e.unverified)).toEqual([undefined, undefined, undefined]);
    expect((await exchange(t, c.apiKey, "never-was-the-secret")).json.code).toBe("wrong_api_secret");
    expect(t.sandbox.journal.list().map((e) => e.unverified)).toEqual([undefined, undefined, undefined, true]);
  });

  it("a valid but expired token still proves its merchant: the rule of the real client fires", async () => {
    const t = await start({ scenarios: ["token-revoked-mid-session"] });
    const c = creds("token-revoked-mid-session");
    const real = await t.token(c.apiKey, c.apiSecret);
    t.sandbox.clock.advance(2 * 3600_000);
    expect((await pay(t, real)).json.code).toBe("token_expired");
    const second = await pay(t, real);
    expect(second.headers.get("x-sandbox-rule")).toBe("token-revoked-mid-session/revoke-on-second-call");
    expect(t.sandbox.journal.list().every((e) => e.unverified === undefined)).toBe(true);
  });
});

describe("regression: forged requests naming a session's merchant do not fail its CI gate", () => {
  for (const admin of [undefined, "a-long-enough-admin-token"]) {
    it(`regression: report --session exits 0 after five forged requests${admin ? " (with --admin-token)" : ""}`, async () => {
      const server = await startCliServer(["--log-format", "off", ...(admin ? ["--admin-token", admin] : [])]);
      try {
        const auth: Record<string, string> = admin ? { "x-admin-token": admin } : {};
        const created = await fetch(`${server.url}/__sandbox/sessions`, postJson({}, auth));
        expect(created.status).toBe(201);
        const session = (await created.json()) as { id: string; merchant: { id: string; api_key: string } };
        const forged = forgedToken(session.merchant.id);
        const statuses: number[] = [];
        for (const path of ["/api/v2/payment/orders", "/api/v2/payment/orders", "/api/v2/cashout/payouts"]) {
          statuses.push((await fetch(server.url + path, { headers: { authorization: `Bearer ${forged}` } })).status);
        }
        for (let i = 0; i < 2; i++) {
          const r = await fetch(`${server.url}/api/v2/auth/token`, postJson({ api_key: session.merchant.api_key, api_secret: "guessed" }));
          statuses.push(r.status);
        }
        expect(statuses).toEqual([401, 401, 401, 401, 401]);

        const report = await fetch(`${server.url}/__sandbox/sessions/${session.id}/report`, { headers: auth });
        const body = (await report.json()) as { findings: Array<{ code: string; severity: string; evidence: string[] }> };
        expect(body.findings.map((f) => [f.code, f.severity, f.evidence.length])).toEqual([["unproven_identity", "info", 5]]);

        const cli = runCli(["report", "--url", server.url, "--session", session.id, ...(admin ? ["--admin-token", admin] : [])]);
        expect(await cli.exited).toBe(0);
        expect(cli.stdout()).toContain("unproven_identity");
      } finally {
        server.child.kill("SIGTERM");
        await server.exited;
      }
    });
  }
});
