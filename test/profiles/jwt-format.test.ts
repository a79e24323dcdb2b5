import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testSandbox } from "../support/keys.js";
import { MINT_VARIANTS } from "../../src/control/mint.js";
import { postJson, startTestServer, type TestServer } from "../support/server.js";

/**
 * A profile's jwt section reaches the tokens of every scenario and session that answers in it, not
 * only the sandbox's own profile: the header (kid, typ), the claims (issuer/audience none, the
 * merchant claim's value, extra claims) and the leeway, and the sandbox still verifies them.
 */

const TOKEN = "/api/v2/auth/token";
const PROTECTED = "/api/v2/payment/status";
const LOGIN = "/api/login_check";

interface Session {
  id: string;
  base: string;
  merchant: { id: string; api_key: string; api_secret: string; login?: { email: string; password: string } };
}

function headerText(token: string): string {
  return Buffer.from(token.split(".")[0]!, "base64url").toString("utf8");
}

function payloadText(token: string): string {
  return Buffer.from(token.split(".")[1]!, "base64url").toString("utf8");
}

async function session(t: TestServer, profile: string): Promise<Session> {
  const r = await t.call("/__sandbox/sessions", postJson({ profile }));
  expect(r.status, r.text).toBe(201);
  return { id: r.json.id, base: `/s/${r.json.id}`, merchant: r.json.merchant };
}

async function exchange(t: TestServer, s: Session): Promise<string> {
  const r = await t.call(`${s.base}${TOKEN}`, postJson({ api_key: s.merchant.api_key, api_secret: s.merchant.api_secret }));
  expect(r.status, r.text).toBe(200);
  // lexik answers {token}, camel {accessToken}, envelope {data: {access_token}}, the others {access_token}.
  return (r.json.token ?? r.json.access_token ?? r.json.accessToken ?? r.json.data?.access_token) as string;
}

async function login(t: TestServer, s: Session): Promise<string> {
  const r = await t.call(`${s.base}${LOGIN}`, postJson({ username: s.merchant.login!.email, password: s.merchant.login!.password }));
  expect(r.status, r.text).toBe(200);
  return (r.json.token ?? r.json.data?.token) as string;
}

function bearer(token: string): RequestInit {
  return { headers: { authorization: `Bearer ${token}` } };
}

/** The sandbox's own code for the last request of the session (the profile's text hides it from the client). */
function lastCode(t: TestServer): string | undefined {
  return t.sandbox.journal.list({}).at(-1)?.code;
}

function tamper(token: string): string {
  const [h, p, sig] = token.split(".") as [string, string, string];
  const i = Math.floor(sig.length / 2);
  return `${h}.${p}.${sig.slice(0, i)}${sig[i] === "A" ? "B" : "A"}${sig.slice(i + 1)}`;
}

describe("per-session profile: a session with the lexik profile gets Lexik's token", () => {
  let t: TestServer;
  let s: Session;
  beforeAll(async () => {
    t = await startTestServer();
    s = await session(t, "lexik");
  });
  afterAll(() => t.close());

  it("header exactly {typ JWT, alg RS256}: no kid, typ first (lcobucci's bytes)", async () => {
    const token = await exchange(t, s);
    expect(headerText(token)).toBe('{"typ":"JWT","alg":"RS256"}');
  });

  it("claims: username (the login e-mail), iat, exp, roles, plus the jti, client_id and scope the sandbox keeps; no iss, sub or aud", async () => {
    const token = await exchange(t, s);
    const claims = decodeJwt(token);
    expect(Object.keys(claims).sort()).toEqual(["client_id", "exp", "iat", "jti", "roles", "scope", "username"]);
    expect(claims.username).toBe(s.merchant.login!.email);
    expect(claims.roles).toEqual(["ROLE_USER"]);
    expect((claims.exp as number) - (claims.iat as number)).toBe(3600);
    expect(payloadText(token)).not.toMatch(/"(iss|sub|aud)":/);
  });

  it("the token works on a protected call, and proves its merchant", async () => {
    const token = await exchange(t, s);
    const r = await t.call(`${s.base}${PROTECTED}`, bearer(token));
    expect(r.status, r.text).toBe(200);
    expect(t.sandbox.journal.list({}).at(-1)).toMatchObject({ merchant: s.merchant.id, status: 200 });
    expect(t.sandbox.journal.list({}).at(-1)?.unverified).toBeUndefined();
  });

  it("kid: false keeps the refusal codes exact: a kid-less token with a bad signature is token_signature_invalid, never token_kid_missing", async () => {
    const r = await t.call(`${s.base}${PROTECTED}`, bearer(tamper(await exchange(t, s))));
    expect([r.status, r.json]).toEqual([401, { code: 401, message: "Invalid JWT Token" }]);
    expect(lastCode(t)).toBe("token_signature_invalid");
  });

  it("kid: false: a token signed with a key the merchant's scenario no longer accepts is refused (the signature cache remembers the key)", async () => {
    const token = await exchange(t, s);
    expect((await t.call(`${s.base}${PROTECTED}`, bearer(token))).status).toBe(200);
    const rotated = await t.call(`/__sandbox/sessions/${s.id}/actions`, postJson({ now: { rotate_signing_key: { keep_old: false } } }));
    expect(rotated.status, rotated.text).toBe(200);
    const r = await t.call(`${s.base}${PROTECTED}`, bearer(token));
    expect(r.status).toBe(401);
    expect(lastCode(t)).toBe("token_unknown_kid");
    // The new key's tokens verify.
    expect((await t.call(`${s.base}${PROTECTED}`, bearer(await exchange(t, s)))).status).toBe(200);
  });

  it("secret in a log: scan finds kid-less tokens (access and login) and names their merchant", async () => {
    const access = await exchange(t, s);
    const loginToken = await login(t, s);
    const r = await t.call("/__sandbox/scan", postJson({ text: `got ${access}\nlogin ${loginToken}\nforged ${tamper(access)}\n` }));
    expect(r.status, r.text).toBe(200);
    expect(r.json.hits).toEqual([
      { line: 1, column: 5, kind: "access_token", merchant: s.merchant.id },
      { line: 2, column: 7, kind: "login_token", merchant: s.merchant.id },
    ]);
  });

  it("the login's token (same typ, same claims but client_id) still works", async () => {
    const token = await login(t, s);
    expect(headerText(token)).toBe('{"typ":"JWT","alg":"RS256"}');
    const claims = decodeJwt(token);
    expect(Object.keys(claims).sort()).toEqual(["exp", "iat", "jti", "roles", "username"]);
    expect(claims.roles).toEqual(["ROLE_USER"]);
    const r = await t.call(`${s.base}${PROTECTED}`, bearer(token));
    expect([r.status, r.headers.get("deprecation")]).toEqual([200, "@1735689600"]);
  });
});

describe("refusal code exact: kid: false is per scenario", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it("a kid-less token naming a merchant whose scenario writes kids is still token_kid_missing", async () => {
    const lexik = await session(t, "lexik");
    const oauth = await session(t, "oauth");
    // A kid-less token from the lexik session, with its merchant claim pointed at the oauth
    // session's merchant: that merchant's tokens name their key.
    const [h, , sig] = (await exchange(t, lexik)).split(".") as [string, string, string];
    const claims = { ...decodeJwt(await exchange(t, lexik)), username: undefined, sub: oauth.merchant.id };
    const forged = `${h}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.${sig}`;
    const r = await t.call(`${oauth.base}${PROTECTED}`, bearer(forged));
    expect([r.status, r.json.code]).toEqual([401, "token_kid_missing"]);
  });

  it("a kid-less token of a session that ended is token_unknown_merchant (its merchant is gone), not token_kid_missing", async () => {
    const lexik = await session(t, "lexik");
    const token = await exchange(t, lexik);
    expect((await t.call(`/__sandbox/sessions/${lexik.id}`, { method: "DELETE" })).status).toBe(204);
    const r = await t.call(PROTECTED, bearer(token));
    expect([r.status, r.json.code]).toEqual([401, "token_unknown_merchant"]);
  });
});

describe("per-session profile leeway: spring's 60 s past exp accepted, not 61", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it("header has a kid and no typ; accepted at exp+59 s, refused at exp+61 s (the session's clock moved, no sleeping)", async () => {
    const s = await session(t, "spring");
    const token = await exchange(t, s);
    expect(Object.keys(JSON.parse(headerText(token)))).toEqual(["alg", "kid"]);
    const claims = decodeJwt(token);
    const ttl = (claims.exp as number) - (claims.iat as number);
    const moved = await t.call(`/__sandbox/sessions/${s.id}/clock`, postJson({ advance: `${ttl + 59}s` }));
    expect(moved.status, moved.text).toBe(200);
    const late = await t.call(`${s.base}${PROTECTED}`, bearer(token));
    expect(late.status, late.text).toBe(200);
    expect((await t.call(`/__sandbox/sessions/${s.id}/clock`, postJson({ advance: "2s" }))).status).toBe(200);
    const expired = await t.call(`${s.base}${PROTECTED}`, bearer(token));
    expect([expired.status, expired.text]).toEqual([401, ""]);
    expect(expired.headers.get("www-authenticate")).toBe(
      `Bearer error="invalid_token", error_description="An error occurred while attempting to decode the Jwt: Jwt expired at ${new Date((claims.exp as number) * 1000).toISOString().replace(".000", "")}", error_uri="https://tools.ietf.org/html/rfc6750#section-3.1"`,
    );
    expect(lastCode(t)).toBe("token_expired");
  });

  it("a scenario file's own leeway wins over its profile's", async () => {
    const dir = mkdtempSync(join(tmpdir(), "jwt-leeway-"));
    const file = join(dir, "strict.yaml");
    writeFileSync(
      file,
      "name: strict\ndescription: d\nsettings: { profile: spring, leeway: 0s }\nmerchants:\n  - { id: strict-m, api_key: strict-key, api_secret: strict-secret, payment_token: strict-pt }\n",
    );
    const u = await startTestServer({ scenarios: [file] });
    try {
      expect(u.sandbox.scenarios.find((x) => x.name === "strict")?.settings.leewaySeconds).toBe(0);
      expect(u.sandbox.scenarios.find((x) => x.name === "default")?.settings.leewaySeconds).toBe(0);
      const s2 = await session(u, "spring");
      expect(u.sandbox.sessions.get(s2.id)?.instance.settings.leewaySeconds).toBe(60);
    } finally {
      await u.close();
    }
  });
});

describe("per-session profile: the login's token works under each built-in", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  for (const profile of ["oauth", "lexik", "spring", "laravel", "camel", "envelope"]) {
    it(`${profile}: POST /api/login_check's token is accepted on a protected call, as the login's`, async () => {
      const s = await session(t, profile);
      const token = await login(t, s);
      const r = await t.call(`${s.base}${PROTECTED}`, bearer(token));
      expect([r.status, r.headers.get("deprecation")]).toEqual([200, "@1735689600"]);
      // And the access token is not taken for the login's.
      const access = await t.call(`${s.base}${PROTECTED}`, bearer(await exchange(t, s)));
      expect([access.status, access.headers.get("deprecation")]).toEqual([200, null]);
    });
  }

  it("laravel: tymon's header (typ JWT, no kid) and claims (sub, prv beside the registered ones)", async () => {
    const s = await session(t, "laravel");
    const token = await exchange(t, s);
    expect(headerText(token)).toBe('{"typ":"JWT","alg":"RS256"}');
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({ sub: s.merchant.id, prv: "23bd5c8949f600adb39e701c400872db7a5976f7", iss: "https://merchant-sandbox.test" });
  });
});

describe("per-session profile: minted tokens are written in the merchant's scenario's format, and expected_error is the sandbox's answer", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  const VARIANTS = Object.keys(MINT_VARIANTS);
  for (const profile of ["lexik", "spring", "laravel"]) {
    it(`${profile}: every variant`, async () => {
      const s = await session(t, profile);
      for (const variant of VARIANTS) {
        const minted = await t.call("/__sandbox/tokens", postJson({ merchant: s.merchant.api_key, variant }));
        expect(minted.status, minted.text).toBe(201);
        // A valid minted token's header is the issued token's, key for key and in order.
        if (variant === "valid") expect(Object.keys(minted.json.header)).toEqual(Object.keys(JSON.parse(headerText(await exchange(t, s)))));
        const r = await t.call(`${s.base}${PROTECTED}`, bearer(minted.json.token));
        const code = r.status === 200 ? null : lastCode(t);
        expect([variant, code], r.text).toEqual([variant, minted.json.expected_error]);
      }
    });
  }
});

describe("login token under any merchant claim: the deprecated login's token keeps working", () => {
  for (const merchantClaim of ["sub", "username", "merchant_id"]) {
    for (const merchantValue of ["merchant_id", "login"] as const) {
      it(`sandbox profile with merchantClaim ${merchantClaim}, merchantValue ${merchantValue}: login and access tokens both verify`, async () => {
        const t = await startTestServer({ profile: { name: "claims", jwt: { typ: "JWT", merchantClaim, merchantValue } } });
        try {
          const login = await t.call(LOGIN, postJson({ username: "merchant@sandbox.test", password: "sandbox-password" }));
          expect(login.status, login.text).toBe(200);
          const loginToken = login.json.token as string;
          expect(decodeJwt(loginToken)[merchantClaim]).toBe(merchantValue === "login" ? "merchant@sandbox.test" : "merchant_sandbox_default");
          const r = await t.call(PROTECTED, bearer(loginToken));
          expect([r.status, r.json?.merchant_id, r.headers.get("deprecation")]).toEqual([200, "merchant_sandbox_default", "@1735689600"]);
          const access = await t.call(PROTECTED, bearer(await t.token()));
          expect([access.status, access.headers.get("deprecation")]).toEqual([200, null]);
        } finally {
          await t.close();
        }
      });
    }
  }
});

describe("load-time refusal with file:line: a profile's claims may not collide with the ones the sandbox writes", () => {
  it("refuses a reserved claim and the merchant claim at load, with file:line", async () => {
    const dir = mkdtempSync(join(tmpdir(), "jwt-claims-"));
    const file = join(dir, "colliding.yaml");
    writeFileSync(file, "name: colliding\njwt:\n  merchantClaim: username\n  claims:\n    roles: [ROLE_USER]\n    exp: 1\n    username: someone\n");
    await expect(testSandbox({ profile: file })).rejects.toThrow(
      [
        `${file}:6:5: jwt.claims.exp: jwt.claims may not set 'exp': the sandbox writes the token's times (jwt.ttl sets its lifetime); reserved: iss, sub, aud, iat, exp, nbf, jti, client_id, scope, username. Remove it from claims`,
        `${file}:7:5: jwt.claims.username: jwt.claims may not set 'username': it is the merchant claim (jwt.merchantClaim), which the sandbox fills with the merchant id or login e-mail (jwt.merchantValue); reserved: iss, sub, aud, iat, exp, nbf, jti, client_id, scope, username. Remove it from claims`,
      ].join("\n"),
    );
  });
});

describe("scan tells the login's token apart by the profile's own client claim", () => {
  it("typ JWT with clientClaim appid: the access token is an access_token in a log, the login's a login_token", async () => {
    const dir = mkdtempSync(join(tmpdir(), "jwt-appid-"));
    const file = join(dir, "appid.yaml");
    writeFileSync(file, "name: appid\njwt:\n  typ: JWT\n  clientClaim: appid\n");
    const t = await startTestServer({ profile: file });
    try {
      const access = await t.token();
      expect(decodeJwt(access).appid).toBeDefined();
      const login = await t.call(LOGIN, postJson({ username: "merchant@sandbox.test", password: "sandbox-password" }));
      expect(login.status, login.text).toBe(200);
      const r = await t.call("/__sandbox/scan", postJson({ text: `access ${access}\nlogin ${login.json.token as string}\n` }));
      expect(r.status, r.text).toBe(200);
      expect(r.json).toEqual({
        hits: [
          { line: 1, column: 8, kind: "access_token", merchant: "merchant_sandbox_default" },
          { line: 2, column: 7, kind: "login_token", merchant: "merchant_sandbox_default" },
        ],
        unverified: [],
      });
    } finally {
      await t.close();
    }
  });
});
