import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeJwt, decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCliServer } from "../support/cli.js";
import { DEFAULT_KEY, DEFAULT_SECRET, postJson } from "../support/server.js";

/**
 * Explicit flags and environment variables win over --profile's jwt section whatever their value,
 * the default's included: yargs used to fill each flag with its default, so `--alg RS256` (or
 * MERCHANT_SANDBOX_ALG=RS256) could not be told from no flag and the profile's ES256 won.
 * The real CLI on port 0; what it serves (the token, the JWKS, a late request) says what it took.
 */

const PROFILE_JWT = { alg: "ES256", ttl: "120s", issuer: "https://profile.test", audience: "profile-api", leeway: "60s" };

interface Served {
  alg: string;
  jwksKty: string;
  ttlSeconds: number;
  iss: unknown;
  aud: unknown;
  /** The status of the token 30 s past its exp: 200 within a 60 s leeway, 401 without one. */
  lateStatus: number;
}

/** Starts serve with the profile and these flags or variables, and reads what it serves. */
async function served(profile: string, args: string[], env: Record<string, string> = {}): Promise<Served> {
  const cli = await startCliServer(["--profile", profile, "--log-format", "off", ...args], env);
  try {
    const r = await fetch(`${cli.url}/api/v2/auth/token`, postJson({ api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET }));
    expect(r.status).toBe(200);
    const token = ((await r.json()) as { access_token: string }).access_token;
    const claims = decodeJwt(token);
    const jwks = (await (await fetch(`${cli.url}/.well-known/jwks.json`)).json()) as { keys: Array<{ kty: string }> };
    const ttlSeconds = claims.exp! - claims.iat!;
    const moved = await fetch(`${cli.url}/__sandbox/clock`, postJson({ advance: `${ttlSeconds + 30}s` }));
    expect(moved.status).toBe(200);
    const late = await fetch(`${cli.url}/api/v2/payment/x`, { headers: { authorization: `Bearer ${token}` } });
    return {
      alg: decodeProtectedHeader(token).alg!,
      jwksKty: jwks.keys[0]!.kty,
      ttlSeconds,
      iss: claims.iss,
      aud: claims.aud,
      lateStatus: late.status,
    };
  } finally {
    cli.child.kill("SIGKILL");
  }
}

describe("explicit wins whatever its value: serve --profile with a jwt section, and a flag or variable set to the default", () => {
  let dir: string;
  let profile: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "explicit-flags-"));
    profile = join(dir, "p.yaml");
    writeFileSync(profile, `name: explicit-flags\njwt: ${JSON.stringify(PROFILE_JWT)}\n`);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const PROFILE_SERVES: Served = { alg: "ES256", jwksKty: "EC", ttlSeconds: 120, iss: "https://profile.test", aud: "profile-api", lateStatus: 200 };

  it("without flags the profile's jwt section sets all five (its 60s leeway included)", async () => {
    expect(await served(profile, [])).toEqual(PROFILE_SERVES);
  });

  // Each flag at the default's value, given as a flag and as its variable: only that setting moves.
  const cases: Array<[string, string, string, string, Partial<Served>]> = [
    ["--alg", "MERCHANT_SANDBOX_ALG", "alg", "RS256", { alg: "RS256", jwksKty: "RSA" }],
    ["--token-ttl", "MERCHANT_SANDBOX_TOKEN_TTL", "ttl", "1h", { ttlSeconds: 3600 }],
    ["--issuer", "MERCHANT_SANDBOX_ISSUER", "issuer", "https://merchant-sandbox.test", { iss: "https://merchant-sandbox.test" }],
    ["--audience", "MERCHANT_SANDBOX_AUDIENCE", "audience", "merchant-api", { aud: "merchant-api" }],
    ["--leeway", "MERCHANT_SANDBOX_LEEWAY", "leeway", "0s", { lateStatus: 401 }],
  ];
  for (const [flag, variable, jwtKey, value, change] of cases) {
    it(`${flag} ${value} wins over the profile's jwt.${jwtKey}`, async () => {
      expect(await served(profile, [flag, value])).toEqual({ ...PROFILE_SERVES, ...change });
    });
    it(`${variable}=${value} wins over the profile's jwt.${jwtKey}`, async () => {
      expect(await served(profile, [], { [variable]: value })).toEqual({ ...PROFILE_SERVES, ...change });
    });
  }
});
