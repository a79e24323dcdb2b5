import { durationText } from "./provider-jwt.js";
import { answerText, type Observations } from "./observations.js";

/**
 * The clock skew a provider allows past a token's exp (`jwt.leeway`), as far as calibrate can tell
 * without waiting: bounded by how the provider answered `--expired-token` (its age is now - exp),
 * and named by the JWT stack whose expired-token text the answer carries, whose documented default
 * is then the reading ("inferred from <stack>'s default; check"). Pure.
 */

/** A JWT stack recognised by its expired-token text, with its default leeway and where both are written. */
export interface JwtStack {
  name: string;
  /** What its refusal of an expired token says (in the body or the challenge's error_description). */
  expired: RegExp;
  leewaySeconds: number;
  /** The file, version and line the text and the default come from. */
  source: string;
}

export const JWT_STACKS: readonly JwtStack[] = [
  {
    name: "Spring Security",
    expired: /Jwt expired at /,
    leewaySeconds: 60,
    source:
      'spring-projects/spring-security 7.1.0 oauth2-jose JwtTimestampValidator.java: "Jwt expired at %s", DEFAULT_MAX_CLOCK_SKEW = Duration.of(60, ChronoUnit.SECONDS)',
  },
  {
    name: ".NET (Microsoft.IdentityModel)",
    expired: /IDX10223|The token is expired|The token expired at/,
    leewaySeconds: 300,
    source:
      'AzureAD/azure-activedirectory-identitymodel-extensions-for-dotnet 8.1.2 LogMessages.cs IDX10223, TokenValidationParameters.cs DefaultClockSkew = TimeSpan.FromSeconds(300); dotnet/aspnetcore JwtBearerHandler.cs "The token is expired"',
  },
  {
    name: "LexikJWTAuthenticationBundle",
    expired: /Expired JWT Token/,
    leewaySeconds: 0,
    source:
      "lexik/LexikJWTAuthenticationBundle v2.20.3 Exception/ExpiredTokenException.php, DependencyInjection/Configuration.php clock_skew defaultValue(0)",
  },
  {
    name: "tymon/jwt-auth",
    expired: /Token has expired/,
    leewaySeconds: 0,
    source: "tymondesigns/jwt-auth 2.1.1 src/Claims/Expiration.php, config/config.php 'leeway' => env('JWT_LEEWAY', 0)",
  },
  {
    name: "golang-jwt/jwt v5",
    expired: /token is expired/,
    leewaySeconds: 0,
    source: 'golang-jwt/jwt v5.3.1 errors.go ErrTokenExpired = errors.New("token is expired"), validator.go leeway unset unless WithLeeway',
  },
  {
    name: "jsonwebtoken (Node.js)",
    expired: /\bjwt expired\b/,
    leewaySeconds: 0,
    source: "auth0/node-jsonwebtoken v9.0.2 verify.js: TokenExpiredError('jwt expired'), options.clockTolerance || 0",
  },
  {
    name: "PyJWT",
    expired: /Signature has expired/,
    leewaySeconds: 0,
    source: 'jpadilla/pyjwt 2.12.1 jwt/api_jwt.py: ExpiredSignatureError("Signature has expired"), leeway = 0',
  },
  {
    name: "firebase/php-jwt",
    expired: /\bExpired token\b/,
    leewaySeconds: 0,
    source: "firebase/php-jwt v7.0.5 src/JWT.php: ExpiredException('Expired token'), public static $leeway = 0",
  },
  {
    name: "jose (panva)",
    expired: /\\?"exp\\?" claim timestamp check failed/,
    leewaySeconds: 0,
    source: "panva/jose v6.2.10 src/lib/jwt_claims_set.ts: JWTExpired('\"exp\" claim timestamp check failed'), tolerance = 0",
  },
  {
    name: "Keycloak",
    expired: /Token is not active/,
    leewaySeconds: 0,
    source: 'keycloak/keycloak TokenVerifier.java (commit ffa21acc) "Token is not active"; JsonWebToken.java (a2c1055f) isExpired: no skew on exp',
  },
];

export interface LeewayReading {
  /** What the profile's jwt.leeway should say; undefined: nothing beyond the sandbox's default 0. */
  leeway?: string;
  /** The expired token's age when sent (now - exp, seconds), and whether the provider took it. */
  age: number;
  accepted: boolean;
  /** The leeway a named stack's default gives, when the answer agrees with it, and the stack. */
  stackSeconds?: number;
  stackName?: string;
  /** The table's row: what was seen, and how the reading was made. */
  cameBack: string;
  says: string;
  how: string;
}

/** The reading of the provider's leeway from its answer to --expired-token; undefined when it was not sent. */
export function readLeeway(obs: Observations): LeewayReading | undefined {
  const expired = obs.observed.find((o) => o.probe === "expired_token");
  if (!expired || obs.expiredTokenExp === undefined) return undefined;
  const age = Math.floor((obs.expiredTokenSentAt ?? obs.startedAt) / 1000 - obs.expiredTokenExp);
  // Not past its exp by this clock, yet refused as expired: the provider's clock runs ahead; nothing to bound.
  if (age < 0) return undefined;
  const stack = JWT_STACKS.find((s) => s.expired.test(answerText(expired.answer)));
  const accepted = expired.answer.status < 300;
  const cameBack = `${expired.answer.status} to a token ${age} s past its exp${stack ? `: ${stack.name}'s expired text` : ""}`;
  if (accepted) {
    // A lower bound only: the provider allows at least this much.
    const atLeast = Math.max(stack?.leewaySeconds ?? 0, Math.ceil(age / 60) * 60);
    return {
      leeway: durationText(atLeast),
      age,
      accepted,
      cameBack,
      says: `jwt.leeway ${durationText(atLeast)}`,
      how: `observed: it accepted a token ${age} s past exp, so its leeway is at least that${stack && stack.leewaySeconds >= age ? ` (${stack.name}'s default is ${durationText(stack.leewaySeconds)}: ${stack.source})` : ""}; check`,
    };
  }
  if (!stack) {
    return {
      age,
      accepted,
      cameBack,
      says: "jwt.leeway: the sandbox's 0",
      how: `observed: it refused a token ${age} s past exp, so its leeway is below ${age} s; no JWT stack named by its text`,
    };
  }
  if (stack.leewaySeconds >= age) {
    return {
      age,
      accepted,
      cameBack,
      says: "jwt.leeway: the sandbox's 0",
      how: `${stack.name}'s default leeway (${durationText(stack.leewaySeconds)}) would have accepted a token ${age} s past exp: configured lower, below ${age} s; check`,
    };
  }
  return {
    ...(stack.leewaySeconds > 0 && { leeway: durationText(stack.leewaySeconds) }),
    age,
    accepted,
    stackSeconds: stack.leewaySeconds,
    stackName: stack.name,
    cameBack,
    says: stack.leewaySeconds > 0 ? `jwt.leeway ${durationText(stack.leewaySeconds)}` : "jwt.leeway: the sandbox's 0",
    how: `inferred from ${stack.name}'s default (${stack.source}); check. It refused a token ${age} s past exp, as that default does`,
  };
}

/**
 * What `--check` says of the profile's leeway against this run's reading, when the two disagree:
 * the provider took a token older than the profile allows, refused one the profile would take, or
 * now names a stack whose default differs. A run that cannot tell (no stack named, an answer both
 * allow) finds nothing.
 */
export function leewayDrift(storedSeconds: number, reading: LeewayReading): { profile: string; provider: string } | undefined {
  const profile = `${storedSeconds} s`;
  if (reading.accepted && storedSeconds < reading.age) return { profile, provider: `accepted a token ${reading.age} s past exp` };
  if (!reading.accepted && storedSeconds >= reading.age) return { profile, provider: `refused a token ${reading.age} s past exp` };
  if (reading.stackSeconds !== undefined && reading.stackSeconds !== storedSeconds)
    return { profile, provider: `${reading.stackSeconds} s (${reading.stackName}'s default)` };
  return undefined;
}
