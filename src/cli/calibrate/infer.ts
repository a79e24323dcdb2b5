import type { RequestIdShape } from "../../profiles/request-id.js";
import { headerCase } from "../../profiles/shaped-schemas.js";
import { commonHeaders, headersObject, headerTemplates } from "./answer-headers.js";
import { leaves, pathText } from "./json-paths.js";
import { type Answer, type Group, nowOf, type Observation, type Observations, type ProbeName } from "./observations.js";
import { isEmpty, varyingBetween } from "./per-request.js";
import { answerOf, type CalibratedAnswer, type Ctx, paymentInitTemplate, protectedTemplate, successTemplate } from "./answer-templates.js";
import { type CalibratedJwt, findJwt, isJwt, jwtOf, readClaims } from "./provider-jwt.js";
import { inferRefusals, type RefusalEntry } from "./refusals.js";
import { readLeeway } from "./leeway.js";

export { type CalibratedAnswer, REDACTED } from "./answer-templates.js";
export { type CalibratedJwt, durationText, findJwt, isJwt } from "./provider-jwt.js";

/**
 * From what the provider answered to the profile that reproduces it (the format of
 * docs/profiles, written by `calibrate`). Pure: no I/O, no clock but the one in `observations`.
 *
 * - token and login: the JWT-shaped string becomes {{access_token}}; a number within 2 s of the
 *   lifetime {{expires_in}}, in minutes {{expires_in_minutes}}; a timestamp at the JWT's exp
 *   {{expires_at:<its format>}} / {{expires_at_unix}}, at its iat {{issued_at:<format>}}.
 * - every answer: a member or header that differed between two identical probes is a per-request
 *   value ({{request_id}} in the shape seen, {{now:<format>}}); the headers all answers carry alike
 *   are the profile's `headers`, the others stay with their answer; an empty body is `empty: true`.
 * - refusals: refusals.ts; the protected call's 200 as it came, with {{merchant_id}}; the jwt
 *   section from the token's header and claim names.
 */

export interface CalibratedProfile {
  name: string;
  description?: string;
  requestId?: RequestIdShape;
  headers?: Record<string, string>;
  token: CalibratedAnswer;
  refusal?: RefusalEntry & { groups?: Partial<Record<Group, RefusalEntry>> };
  codes?: Record<string, RefusalEntry>;
  paymentInit?: CalibratedAnswer;
  login?: CalibratedAnswer;
  protected?: CalibratedAnswer;
  jwt?: CalibratedJwt;
}

/** One line of calibrate's table. */
export interface CalibrationLine {
  /** The probe, or what the line is about when no one probe is (`jwt`, `per-request`, `(inferred)`). */
  probe: ProbeName | "jwt" | "leeway" | "per-request" | "credentials" | "(inferred)";
  sent: string;
  cameBack: string;
  profileSays: string;
  /** Set when the profile says something calibrate did not observe: what and why. */
  inferred?: string;
}

export interface Inference {
  profile: CalibratedProfile;
  lines: CalibrationLine[];
}

export function inferProfile(obs: Observations, name: string, description?: string): Inference {
  const lines: CalibrationLine[] = [];
  const byProbe = new Map(obs.observed.map((o) => [o.probe, o]));
  const tokenObs = byProbe.get("token_body");
  const jwt = tokenObs ? findJwt(tokenObs.answer.json, obs.accessTokenPath) : undefined;
  if (!tokenObs || !isSuccess(tokenObs.answer) || !jwt) {
    throw new CannotInfer(
      tokenObs && !isSuccess(tokenObs.answer)
        ? `The token exchange with the given --api-key and --api-secret was refused (HTTP ${tokenObs.answer.status}); check the credentials and --url, then run calibrate again.`
        : "The token exchange's answer holds no JWT (three base64url parts with a JSON header); calibrate learns only providers that issue JWT access tokens.",
    );
  }
  const nowS = obs.startedAt / 1000;
  const repeats = obs.repeats ?? [];
  const varying = varyingBetween(obs.observed, repeats, isJwt);
  // The headers every answer carries alike are the profile's `headers`; the rest stay with their part.
  const leftOut = new Map<string, string>();
  const requestIds = new Set<RequestIdShape>();
  const headerSets = obs.observed.map((o) => headerTemplates(o.answer, varying, nowOf(o, nowS), { leftOut, requestIds }));
  const wide = commonHeaders(headerSets);
  const ctx: Ctx = { varying, nowS, wide, requestIds };
  // Each answer's times are read against when it was sent (a recording spans minutes).
  const at = (o: Observation): Ctx => ({ ...ctx, nowS: nowOf(o, nowS) });
  const claims = readClaims(jwt);
  const token = successTemplate(tokenObs.answer.json, jwt, claims, at(tokenObs));
  const profile: CalibratedProfile = {
    name,
    ...(description !== undefined && { description }),
    token: answerOf(tokenObs, token.body, at(tokenObs)),
  };
  lines.push(row(tokenObs, `token: ${summarise(token.body)}`, token.notes.join("; ") || undefined));

  const headersObs = byProbe.get("token_headers");
  if (headersObs) {
    lines.push(
      row(
        headersObs,
        isSuccess(headersObs.answer) ? "nothing new: the sandbox accepts headers too" : "nothing: the sandbox accepts credentials in headers",
        isSuccess(headersObs.answer) ? undefined : "the provider refused credentials in headers; the sandbox does not reproduce that",
      ),
    );
  }

  const refusals = inferRefusals(obs.observed, repeats, { varying, nowS, expiredExp: obs.expiredTokenExp, wide, requestIds: ctx.requestIds });
  if (refusals.refusal) profile.refusal = refusals.refusal;
  if (Object.keys(refusals.codes).length > 0) profile.codes = refusals.codes;
  for (const line of refusals.lines) {
    const o = line.probe === "(inferred)" ? undefined : byProbe.get(line.probe);
    lines.push(
      o
        ? row(o, line.says, line.note)
        : { probe: "(inferred)", sent: "(not sent)", cameBack: "-", profileSays: line.says, inferred: `${line.code}: ${line.note}` },
    );
  }

  const protectedObs = byProbe.get("protected_fresh");
  if (protectedObs) {
    if (isSuccess(protectedObs.answer)) {
      const body = protectedTemplate(protectedObs, claims, obs.loginEmail, at(protectedObs));
      profile.protected = answerOf(protectedObs, body, at(protectedObs));
      lines.push(row(protectedObs, `protected: ${isEmpty(protectedObs.answer) ? "no body" : summarise(body)}`));
    } else {
      lines.push(row(protectedObs, "nothing", `the fresh token was refused (HTTP ${protectedObs.answer.status}): is --protected-path right?`));
    }
  }

  const loginObs = byProbe.get("login");
  if (loginObs) {
    const loginJwt = findJwt(loginObs.answer.json);
    if (isSuccess(loginObs.answer) && loginJwt) {
      const login = successTemplate(loginObs.answer.json, loginJwt, readClaims(loginJwt), at(loginObs));
      profile.login = answerOf(loginObs, login.body, at(loginObs));
      lines.push(row(loginObs, `login: ${summarise(login.body)}`, login.notes.join("; ") || undefined));
    } else {
      lines.push(row(loginObs, "nothing: the login did not succeed", "check --login EMAIL:PASSWORD"));
    }
  }

  const paymentObs = byProbe.get("payment_init");
  if (paymentObs) {
    if (isSuccess(paymentObs.answer) && paymentObs.answer.json !== undefined) {
      const body = paymentInitTemplate(paymentObs.answer.json, obs.paymentInitSent ?? {}, at(paymentObs));
      profile.paymentInit = answerOf(paymentObs, body, at(paymentObs));
      lines.push(row(paymentObs, `paymentInit: ${summarise(body)}`));
    } else {
      lines.push(row(paymentObs, "nothing: payment/init with the payment token did not succeed", "check --payment-token"));
    }
  }

  const again = repeats.find((r) => r.probe === "token_body");
  const againJwt = again && findJwt(again.answer.json, obs.accessTokenPath);
  const jwtSection = jwtOf(claims, againJwt ? readClaims(againJwt) : undefined, obs.loginEmail, nowOf(tokenObs, nowS));
  profile.jwt = jwtSection.jwt;
  lines.push({
    probe: "jwt",
    sent: "decoded the issued JWT (no verification)",
    cameBack: `alg ${claims.header.alg ?? "?"}, typ ${claims.header.typ ?? "-"}, kid ${claims.header.kid === undefined ? "absent" : "present"}, claims ${Object.keys(claims.payload).join(", ")}`,
    profileSays: `jwt: ${Object.entries(jwtSection.jwt)
      .map(([k, v]) => `${k} ${typeof v === "object" ? Object.keys(v).join("+") : v}`)
      .join(", ")}`,
    ...(jwtSection.notes.length > 0 && { inferred: jwtSection.notes.join("; ") }),
  });
  addLeeway(obs, profile, lines);
  if (wide.size > 0) profile.headers = headersObject(wide);
  const shapes = [...ctx.requestIds];
  if (shapes.length > 0) profile.requestId = shapes[0];
  if (varying.headers.size + varying.keys.size > 0)
    lines.push({
      probe: "per-request",
      sent: `sent ${repeats.map((r) => r.probe).join(", ")} twice`,
      cameBack: `differed: ${[...[...varying.headers].map(headerCase), ...varying.keys].join(", ")}`,
      profileSays: `per-request placeholders${shapes.length > 0 ? `, requestId ${shapes.join("/")}` : ""}`,
    });
  if (leftOut.size > 0)
    lines.push({
      probe: "credentials",
      sent: "-",
      cameBack: `headers: ${[...leftOut].map(([name, why]) => `${headerCase(name)} (${why})`).join(", ")}`,
      profileSays: "left out",
      inferred: "a credential the provider gave the test merchant is live there: a profile never carries one",
    });
  for (const s of obs.skipped) lines.push({ probe: s.probe, sent: "not sent", cameBack: "-", profileSays: "-", inferred: s.why });
  return { profile, lines };
}

/** The leeway read from --expired-token's refusal (leeway.ts), into the jwt section and the table. */
function addLeeway(obs: Observations, profile: CalibratedProfile, lines: CalibrationLine[]): void {
  const leeway = readLeeway(obs);
  if (leeway === undefined) return;
  if (leeway.leeway !== undefined) profile.jwt = { ...profile.jwt, leeway: leeway.leeway };
  lines.push({
    probe: "leeway",
    sent: "--expired-token's age and its refusal's text",
    cameBack: leeway.cameBack,
    profileSays: leeway.says,
    inferred: leeway.how,
  });
}

export class CannotInfer extends Error {}

// ---- shared -------------------------------------------------------------------------------------

export function isSuccess(answer: Answer): boolean {
  return answer.status >= 200 && answer.status < 300;
}

/** A body in one line for the table: leaves with short values, long strings as their length. */
export function summarise(json: unknown): string {
  if (json === undefined) return "(no JSON body)";
  const parts = leaves(json).map(({ path, value }) => `${pathText(path)}: ${shortValue(value)}`);
  const text = `{${parts.join(", ")}}`;
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}

function shortValue(value: unknown): string {
  if (typeof value !== "string") return JSON.stringify(value) ?? String(value);
  if (/^\{\{[a-z_]+\}\}$/.test(value)) return value;
  if (isJwt(value)) return "<a JWT>";
  // An opaque string may be a token or a key: only its length is shown.
  if (!/\s/.test(value) && value.length > 24) return `<opaque, ${value.length} chars>`;
  if (value.length > 40) return `"${value.slice(0, 30)}..." (${value.length} chars)`;
  return JSON.stringify(value);
}

function row(o: Observation, profileSays: string, inferred?: string): CalibrationLine {
  const a = o.answer;
  return {
    probe: o.probe,
    sent: o.sent,
    cameBack: `${a.status} ${a.contentType ?? "-"} ${a.notJson ? "(not JSON)" : summarise(a.json)}`,
    profileSays,
    ...(inferred !== undefined && { inferred }),
  };
}
