import { describe, expect, it } from "vitest";
import { leewayDrift, readLeeway } from "../../src/cli/calibrate/leeway.js";
import type { Answer, Observations } from "../../src/cli/calibrate/observations.js";

/** The leeway calibrate reads from --expired-token's answer: bounded by it, named by the stack's text. Pure. */

const NOW = 1_800_000_000;

function expiredAnswer(status: number, body: { json?: unknown; text?: string }, challenge?: string): Observations {
  const answer: Answer = {
    status,
    contentType: body.text !== undefined ? "text/plain" : "application/json",
    headers: challenge ? { "www-authenticate": challenge } : {},
    json: body.json,
    notJson: body.text !== undefined,
    ...(body.text !== undefined && { text: body.text }),
  };
  return {
    url: "https://p.test",
    startedAt: NOW * 1000,
    observed: [{ probe: "expired_token", sent: "the expired token", answer }],
    skipped: [],
    expiredTokenExp: NOW - 120,
  };
}

const spring =
  'Bearer error="invalid_token", error_description="An error occurred while attempting to decode the Jwt: Jwt expired at 2027-01-15T08:38:00Z"';

describe("readLeeway", () => {
  it("Spring's text and a refusal 120 s past exp: Spring's default 60 s, saying where it comes from", () => {
    const r = readLeeway(expiredAnswer(401, {}, spring))!;
    expect(r.leeway).toBe("1m");
    expect(r.cameBack).toBe("401 to a token 120 s past its exp: Spring Security's expired text");
    expect(r.how).toBe(
      'inferred from Spring Security\'s default (spring-projects/spring-security 7.1.0 oauth2-jose JwtTimestampValidator.java: "Jwt expired at %s", DEFAULT_MAX_CLOCK_SKEW = Duration.of(60, ChronoUnit.SECONDS)); check. It refused a token 120 s past exp, as that default does',
    );
  });

  it(".NET's IDX10223 refused 600 s past exp: 5 minutes; refused 120 s past exp: configured below its default, nothing written", () => {
    const message =
      "IDX10223: Lifetime validation failed. The token is expired. ValidTo (UTC): '01/15/2027 08:28:00', Current time (UTC): '01/15/2027 08:38:00'.";
    const old = expiredAnswer(401, { json: { message } });
    old.expiredTokenExp = NOW - 600;
    expect(readLeeway(old)?.leeway).toBe("5m");
    const recent = readLeeway(expiredAnswer(401, { json: { message } }))!;
    expect(recent.leeway).toBeUndefined();
    expect(recent.how).toBe(
      ".NET (Microsoft.IdentityModel)'s default leeway (5m) would have accepted a token 120 s past exp: configured lower, below 120 s; check",
    );
  });

  it("Go's text/plain http.Error names golang-jwt, whose default is none: nothing beyond the sandbox's 0", () => {
    const r = readLeeway(expiredAnswer(401, { text: "token has invalid claims: token is expired\n" }))!;
    expect([r.leeway, r.stackSeconds, r.says]).toEqual([undefined, 0, "jwt.leeway: the sandbox's 0"]);
  });

  it("a provider that accepted the expired token allows at least its age, rounded up to the minute", () => {
    const r = readLeeway(expiredAnswer(200, { json: { ok: true } }))!;
    expect([r.leeway, r.how]).toEqual(["2m", "observed: it accepted a token 120 s past exp, so its leeway is at least that; check"]);
  });

  it("no --expired-token: no reading", () => {
    const obs = expiredAnswer(401, {}, spring);
    obs.observed = [];
    expect(readLeeway(obs)).toBeUndefined();
  });
});

describe("leewayDrift (--check)", () => {
  const refusedSpring = readLeeway(expiredAnswer(401, {}, spring))!;
  const refusedUnnamed = readLeeway(expiredAnswer(401, { json: { error: "invalid_token" } }))!;
  const accepted = readLeeway(expiredAnswer(200, { json: { ok: true } }))!;

  it("is silent when the answer agrees with the profile", () => {
    expect(leewayDrift(60, refusedSpring)).toBeUndefined();
    // An unnamed refusal only says the leeway is below the age: 0 and 60 s both agree.
    expect(leewayDrift(0, refusedUnnamed)).toBeUndefined();
    expect(leewayDrift(60, refusedUnnamed)).toBeUndefined();
    expect(leewayDrift(300, accepted)).toBeUndefined();
  });

  it("says what changed when it does not", () => {
    expect(leewayDrift(300, refusedUnnamed)).toEqual({ profile: "300 s", provider: "refused a token 120 s past exp" });
    expect(leewayDrift(60, accepted)).toEqual({ profile: "60 s", provider: "accepted a token 120 s past exp" });
    expect(leewayDrift(0, refusedSpring)).toEqual({ profile: "0 s", provider: "60 s (Spring Security's default)" });
  });
});
