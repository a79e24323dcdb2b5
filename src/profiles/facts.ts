import { STATUS_CODES } from "node:http";
import type { AnswerFacts } from "../core/answer-shaper.js";
import { type AnswerCounter, CountValue } from "./count-value.js";
import { CompanionTokenValue } from "./companion-token.js";
import { newRequestId, type RequestIdShape } from "./request-id.js";
import type { Values } from "./template.js";
import { TimeValue } from "./time-value.js";

/**
 * The values every part of a profile may print, from the request's facts: `{{request_id}}`,
 * `{{now}}`, `{{method}}`, `{{path}}`, and the answer's place in `counter` (`{{count_down:N}}`).
 */
function requestValues(facts: AnswerFacts, perAnswer: PerAnswer): Values {
  const { shape, counter } = perAnswer;
  return {
    get request_id() {
      return facts.requestId((nowMs) => newRequestId(shape, nowMs));
    },
    get now() {
      return new TimeValue(facts.nowMs() / 1000);
    },
    method: facts.method,
    path: facts.path,
    get route() {
      return facts.path.replace(/^\//, "");
    },
    // One per request, as a request id: a header and the body of one answer print the same.
    get fresh() {
      let value = perAnswer.fresh.get(facts);
      if (value === undefined) {
        const times = () => ({ issuedAt: Math.floor(facts.nowMs() / 1000), expiresAt: Math.floor(facts.nowMs() / 1000) });
        value = new CompanionTokenValue("Fresh", times);
        perAnswer.fresh.set(facts, value);
      }
      return value;
    },
    get count_down() {
      return new CountValue(counter.indexOf(facts), "down");
    },
    get count_up() {
      return new CountValue(counter.indexOf(facts), "up");
    },
  };
}

/**
 * One answer's values: `own` (its status, token, refusal...) over the request's. The request's stay
 * getters behind it, so an id is made and the clock read only when a template prints them (a
 * spread would call every getter). `own` is defined, not assigned: those getters have no setters.
 */
/** What one shaper keeps across its answers: the request-id shape, the answer counter, each request's fresh id. */
export interface PerAnswer {
  shape: RequestIdShape;
  counter: AnswerCounter;
  fresh: WeakMap<AnswerFacts, CompanionTokenValue>;
}

export function answerValues(facts: AnswerFacts, perAnswer: PerAnswer, own: Values): Record<string, unknown> {
  return Object.defineProperties(Object.create(requestValues(facts, perAnswer)) as Record<string, unknown>, Object.getOwnPropertyDescriptors(own));
}

/** `{{status}}` and `{{status_text}}` of an answer ("Method Not Allowed"). */
export function statusValues(status: number): Values {
  return { status, status_text: statusText(status) };
}

/** An HTTP status's reason phrase ("Method Not Allowed"), "Unknown" for a status Node names not. */
export function statusText(status: number): string {
  return STATUS_CODES[status] ?? "Unknown";
}

/** The placeholders a template uses that differ per request: such a profile's refusals are rendered each time. */
export const PER_REQUEST_PLACEHOLDERS: ReadonlySet<string> = new Set(["request_id", "now", "method", "count_down", "count_up", "fresh"]);
