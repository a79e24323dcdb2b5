import type { AnswerFacts, AnswerShaper, IssuedToken } from "../core/answer-shaper.js";
import { InvalidToken, ScenarioFault } from "../core/errors.js";
import type { SandboxResponse } from "../core/http-types.js";
import type { SandboxError } from "../core/sandbox-error.js";
import { printable } from "../core/printable.js";
import { asRefusal, challengeFor, headerValueSafe, problemBody, problemResponse } from "../core/problem.js";
import { RenderBudget, RenderedTooLarge } from "../core/render-budget.js";
// The fault's text names only the profile: nothing in it to redact.
import { EMPTY_VIEW } from "../core/secret-index.js";
import { answerValues, PER_REQUEST_PLACEHOLDERS, type PerAnswer, statusValues } from "./facts.js";
import { templatesOf } from "./load.js";
import { type RefusalShape, refusalShapes } from "./refusal-shape.js";
import type { AnswerFile, ProfileFile } from "./schema.js";
import { compileTemplate, compileText, placeholdersIn, type Render, type TextRender, type Values } from "./template.js";
import { shapedSchemas } from "./shaped-schemas.js";
import { TimeValue } from "./time-value.js";
import { compileTextBody, DEFAULT_TEXT_CONTENT_TYPE } from "./text-body.js";
import { AnswerCounter } from "./count-value.js";
import { CompanionTokenValue } from "./companion-token.js";

/**
 * The renderer of one profile: every template compiled once, when the profile is chosen. A profile
 * that declares no answer (`oauth`, or one with only a jwt section) gets no shaper at all, so
 * today's answers are made exactly as before and nothing extra runs per request.
 */
export function createShaper(profile: ProfileFile): AnswerShaper | undefined {
  const { token, login, paymentInit, refusal, codes } = profile;
  if (!token && !login && !paymentInit && !profile.protected && !refusal && !codes && !profile.headers) return undefined;
  const answers = {
    token: token && compiledAnswer(token, 200),
    login: login && compiledAnswer(login, 200),
    paymentInit: paymentInit && compiledAnswer(paymentInit, 201),
    protected: profile.protected && compiledAnswer(profile.protected, 200),
  };
  const shapeOf = refusalShapes(refusal, codes);
  const perAnswer: PerAnswer = { shape: profile.requestId ?? "uuid", counter: new AnswerCounter(), fresh: new WeakMap() };
  const wide = Object.entries(profile.headers ?? {}).map(([name, value]) => [name.toLowerCase(), compileText(value, headerValueSafe)] as const);
  const render = (answer: CompiledAnswer, own: Values, endpointHeaders: Record<string, string>, facts: AnswerFacts): SandboxResponse => {
    try {
      return renderedAnswer(answer, own, { endpointHeaders, facts, perAnswer });
    } catch (e) {
      throw e instanceof RenderedTooLarge ? tooLarge(profile.name, e) : e;
    }
  };

  return {
    profile: profile.name,
    // The templates only: a description or a jwt claim that mentions {{now}} prints nothing.
    perRequest: templatesOf(profile).some(([, template]) => placeholdersIn(template).some((p) => PER_REQUEST_PLACEHOLDERS.has(p.name))),
    token: (issued, headers, facts) => answers.token && render(answers.token, tokenValues(issued), headers, facts),
    login: (issued, headers, facts) => answers.login && render(answers.login, tokenValues(issued), headers, facts),
    paymentInit: (body, headers, facts) => answers.paymentInit && render(answers.paymentInit, { ...body, sandbox: body }, headers, facts),
    protectedCall: (body, operation, facts) =>
      answers.protected && render(answers.protected, { sandbox: body, operation, merchant_id: body.merchant_id }, {}, facts),
    refusal(thrown, instance, secrets, extraHeaders, facts, group) {
      const err = asRefusal(thrown, secrets);
      const own = shapeOf(group, err.code);
      if (!own.shaped) return undefined;
      try {
        return shapedRefusal(err, own, { instance, extraHeaders, facts, perAnswer });
      } catch (e) {
        // Not shaped again: the profile's own templates are what failed.
        if (e instanceof RenderedTooLarge) return problemResponse(tooLarge(profile.name, e), instance, secrets, extraHeaders);
        throw e;
      }
    },
    finish(response, facts) {
      if (wide.length === 0) return response;
      const values = answerValues(facts, perAnswer, statusValues(response.status));
      const headers = { ...response.headers };
      const budget = new RenderBudget();
      try {
        for (const [name, value] of wide) headers[name] = value(values, budget);
      } catch (e) {
        if (e instanceof RenderedTooLarge) return problemResponse(tooLarge(profile.name, e), facts.path, EMPTY_VIEW);
        throw e;
      }
      return { ...response, headers };
    },
    schemas: () => shapedSchemas(profile),
  };
}

/** Where a refusal is rendered: the request it answers and the shaper's per-answer values. */
interface RefusalWhere {
  instance: string;
  extraHeaders: Record<string, string> | undefined;
  facts: AnswerFacts;
  perAnswer: PerAnswer;
}

/** The refusal `err` rendered in its shape `own`, for the request at `instance`. */
function shapedRefusal(err: SandboxError, own: RefusalShape, where: RefusalWhere): SandboxResponse {
  const { instance, extraHeaders, facts, perAnswer } = where;
  const status = own.status ?? err.status;
  const values = answerValues(facts, perAnswer, {
    ...statusValues(status),
    code: own.code ?? err.code,
    sandbox_code: err.code,
    explanation: err.description,
    error_description: err.description,
    error: err.error ?? null,
    instance,
    token_expires_at: err instanceof InvalidToken && err.tokenExpiresAt !== undefined ? new TimeValue(err.tokenExpiresAt, "rfc3339") : null,
  });
  const budget = new RenderBudget();
  values.message = own.message ? own.message(values, budget) : err.description;
  const headers: Record<string, string> = { "cache-control": "no-store", ...extraHeaders, ...err.headers };
  let body = "";
  if (own.text) {
    headers["content-type"] = own.contentType ?? DEFAULT_TEXT_CONTENT_TYPE;
    body = own.text(values, budget);
  } else if (!own.empty) {
    headers["content-type"] = own.contentType ?? "application/problem+json";
    body = JSON.stringify(own.body ? own.body(values, budget) : { ...problemBody(err, instance), status, code: values.code });
  }
  const challenge = own.challenge === "keep" ? challengeFor(err) : own.challenge === "omit" ? undefined : own.challenge(values, budget);
  if (challenge) headers["www-authenticate"] = challenge;
  for (const [name, value] of own.headers) headers[name] = value(values, budget);
  // The sandbox's fix-it text is never lost: the provider's text goes in the body, this beside it.
  headers["x-sandbox-explanation"] = printable(err.description, Number.POSITIVE_INFINITY);
  return { status, headers, body };
}

/** A success answer rendered with its own values over the request's, the endpoint's headers under its own. */
function renderedAnswer(
  answer: CompiledAnswer,
  own: Values,
  request: { endpointHeaders: Record<string, string>; facts: AnswerFacts; perAnswer: PerAnswer },
): SandboxResponse {
  const values = answerValues(request.facts, request.perAnswer, { ...statusValues(answer.status), ...own });
  const headers: Record<string, string> = { "cache-control": "no-store", ...request.endpointHeaders };
  if (answer.body) headers["content-type"] = answer.contentType;
  else delete headers["content-type"];
  const budget = new RenderBudget();
  for (const [name, value] of answer.headers) headers[name] = value(values, budget);
  return { status: answer.status, headers, body: answer.body ? answer.body(values, budget) : "" };
}

/** A profile's answer rendered past the bound: its own fault, said with the profile's name. */
function tooLarge(name: string, e: RenderedTooLarge): ScenarioFault {
  return new ScenarioFault(`Response profile '${name}': ${e.message}. Fix its templates.`);
}

interface CompiledAnswer {
  status: number;
  contentType: string;
  headers: ReadonlyArray<readonly [string, TextRender]>;
  /** The body as sent: JSON of the body template, or the text body; undefined: no body. */
  body: TextRender | undefined;
}

function compiledAnswer(file: AnswerFile, defaultStatus: number): CompiledAnswer {
  const contentType = file.contentType ?? (file.text !== undefined ? DEFAULT_TEXT_CONTENT_TYPE : "application/json");
  return {
    status: file.status ?? defaultStatus,
    contentType,
    // Header names are lower-case everywhere in the sandbox (http-types.ts).
    headers: Object.entries(file.headers ?? {}).map(([name, value]) => [name.toLowerCase(), compileText(value, headerValueSafe)] as const),
    body: file.empty ? undefined : file.text !== undefined ? compileTextBody(file.text, contentType) : jsonBody(file.body),
  };
}

function jsonBody(template: unknown): TextRender | undefined {
  if (template === undefined) return undefined;
  const render: Render = compileTemplate(template);
  return (values, budget) => JSON.stringify(render(values, budget));
}

function tokenValues(issued: IssuedToken): Values {
  const expiresAt = issued.issuedAt + issued.expiresIn;
  const times = () => ({ issuedAt: issued.issuedAt, expiresAt });
  return {
    // Each makes its token when a template prints it, once per answer (CompanionTokenValue).
    refresh_token: new CompanionTokenValue("Refresh", times),
    id_token: new CompanionTokenValue("ID", times),
    access_token: issued.accessToken,
    token_type: "Bearer",
    expires_in: issued.expiresIn,
    expires_in_minutes: issued.expiresIn / 60,
    expires_at: new TimeValue(expiresAt),
    expires_at_unix: expiresAt,
    issued_at: new TimeValue(issued.issuedAt),
    scope: issued.scope,
  };
}
