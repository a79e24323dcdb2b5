import type { AnswerShaper, IssuedToken, ShapedSchemas } from "../core/answer-shaper.js";
import { isoOfSeconds } from "../core/clock.js";
import type { SandboxResponse } from "../core/http-types.js";
import { asRefusal, challengeFor, problemBody } from "../core/problem.js";
import { PLACEHOLDERS, type PlaceholderType } from "./placeholders.js";
import type { AnswerFile, CodeFile, ProfileFile } from "./schema.js";
import { compileTemplate, type Render, type Values } from "./template.js";
import { templateSchema } from "./template-schema.js";

/**
 * The renderer of one profile: every template compiled once, when the profile is chosen. A profile
 * that declares no answer (`oauth`, or one with only a jwt section) gets no shaper at all, so
 * today's answers are made exactly as before and nothing extra runs per request.
 */
export function createShaper(profile: ProfileFile): AnswerShaper | undefined {
  const { token, login, paymentInit, refusal, codes } = profile;
  if (!token && !login && !paymentInit && !profile.protected && !refusal && !codes) return undefined;
  const answers = {
    token: token && compiledAnswer(token, 200),
    login: login && compiledAnswer(login, 200),
    paymentInit: paymentInit && compiledAnswer(paymentInit, 201),
    protected: profile.protected && compiledAnswer(profile.protected, 200),
  };
  const refusalBody = refusal?.body === undefined ? undefined : compileTemplate(refusal.body);
  const refusalType = refusal?.contentType ?? "application/problem+json";
  const keepChallenge = refusal?.wwwAuthenticate !== "omit";
  const codeAnswers = new Map<string, { file: CodeFile; body: Render | undefined }>(
    Object.entries(codes ?? {}).map(([code, file]) => [code, { file, body: file.body === undefined ? undefined : compileTemplate(file.body) }]),
  );

  return {
    profile: profile.name,
    token: (issued, headers) => answers.token && render(answers.token, tokenValues(issued), headers),
    login: (issued, headers) => answers.login && render(answers.login, tokenValues(issued), headers),
    paymentInit: (body, headers) => answers.paymentInit && render(answers.paymentInit, { ...body, sandbox: body }, headers),
    protectedCall: (body, operation) => answers.protected && render(answers.protected, { sandbox: body, operation }, {}),
    refusal(thrown, instance, secrets, extraHeaders) {
      const err = asRefusal(thrown, secrets);
      const own = codeAnswers.get(err.code);
      if (!own && !refusal) return undefined;
      const status = own?.file.status ?? err.status;
      const values: Values = {
        code: own?.file.code ?? err.code,
        sandbox_code: err.code,
        message: err.description,
        status,
        error: err.error ?? null,
        instance,
      };
      const template = own?.body ?? refusalBody;
      const body = template ? template(values) : { ...problemBody(err, instance), status, code: values.code };
      const headers: Record<string, string> = { "content-type": refusalType, "cache-control": "no-store", ...extraHeaders, ...err.headers };
      const challenge = keepChallenge ? challengeFor(err) : undefined;
      if (challenge) headers["www-authenticate"] = challenge;
      return { status, headers, body: JSON.stringify(body) };
    },
    schemas: () => shapedSchemas(profile),
  };
}

interface CompiledAnswer {
  status: number;
  headers: Record<string, string>;
  body: Render;
}

function compiledAnswer(file: AnswerFile, defaultStatus: number): CompiledAnswer {
  const headers: Record<string, string> = { "content-type": file.contentType ?? "application/json" };
  // Header names are lower-case everywhere in the sandbox (http-types.ts).
  for (const [name, value] of Object.entries(file.headers ?? {})) headers[name.toLowerCase()] = value;
  return { status: file.status ?? defaultStatus, headers, body: compileTemplate(file.body) };
}

/** The endpoint's own headers (Location, Pragma), then the profile's, which win. */
function render(answer: CompiledAnswer, values: Values, endpointHeaders: Record<string, string>): SandboxResponse {
  return {
    status: answer.status,
    headers: { "cache-control": "no-store", ...endpointHeaders, ...answer.headers },
    body: JSON.stringify(answer.body(values)),
  };
}

function tokenValues(issued: IssuedToken): Values {
  const expiresAt = issued.issuedAt + issued.expiresIn;
  return {
    access_token: issued.accessToken,
    token_type: "Bearer",
    expires_in: issued.expiresIn,
    expires_in_minutes: issued.expiresIn / 60,
    expires_at: isoOfSeconds(expiresAt),
    expires_at_unix: expiresAt,
    issued_at: isoOfSeconds(issued.issuedAt),
    scope: issued.scope,
  };
}

function shapedSchemas(profile: ProfileFile): ShapedSchemas {
  const success = (file: AnswerFile | undefined, part: "token" | "login" | "paymentInit", defaultStatus: number) =>
    file && {
      status: file.status ?? defaultStatus,
      contentType: file.contentType ?? "application/json",
      schema: templateSchema(file.body, PLACEHOLDERS[part]),
    };
  const schemas: ShapedSchemas = { wwwAuthenticate: profile.refusal?.wwwAuthenticate !== "omit" };
  const token = success(profile.token, "token", 200);
  const login = success(profile.login, "login", 200);
  const paymentInit = success(profile.paymentInit, "paymentInit", 201);
  if (token) schemas.token = token;
  if (login) schemas.login = login;
  if (paymentInit) schemas.paymentInit = paymentInit;
  if (profile.refusal?.body !== undefined) {
    // `code` is the sandbox's code (text) unless `codes` gives the provider's, which may be a number.
    const code: PlaceholderType = Object.values(profile.codes ?? {}).some((c) => typeof c.code === "number") ? "string|number" : "string";
    schemas.refusal = {
      contentType: profile.refusal.contentType ?? "application/problem+json",
      schema: templateSchema(profile.refusal.body, { ...PLACEHOLDERS.refusal, code }),
    };
  }
  return schemas;
}
