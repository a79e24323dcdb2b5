import { describe, expect, it } from "vitest";
import { EMPTY_VIEW, SecretIndex } from "../../src/core/secret-index.js";
import { RefusalAnswers } from "../../src/app/refusal-answers.js";
import { InvalidToken, MethodNotAllowed, NotFound } from "../../src/core/errors.js";
import { problemResponse } from "../../src/core/problem.js";
import { BUILT_IN_PROFILES } from "../../src/profiles/builtins.js";
import { createShaper } from "../../src/profiles/shaper.js";
import { answerFacts } from "../../src/core/answer-shaper.js";

const FACTS = answerFacts("GET", "/a", { now: () => 0 });

// A refusal's answer is made once per shape and kept; every answer is still exactly what the
// problem mapper (or the profile's shaper) makes for it.
describe("RefusalAnswers", () => {
  const expired = () => new InvalidToken("token_expired", "The access token expired at 2026-01-01T00:00:00.000Z.");

  it("answers what problemResponse answers, the first time and from the kept answer", () => {
    const answers = new RefusalAnswers(() => EMPTY_VIEW);
    for (let i = 0; i < 2; i++)
      expect(answers.answer(expired(), "/api/v2/payment/p_1", undefined, undefined, EMPTY_VIEW, FACTS, undefined)).toEqual(
        problemResponse(expired(), "/api/v2/payment/p_1", EMPTY_VIEW),
      );
  });

  it("each caller gets its own response and headers: changing one changes no later answer", () => {
    const answers = new RefusalAnswers(() => EMPTY_VIEW);
    const first = answers.answer(new NotFound("No endpoint at GET /nope."), "/nope", undefined, undefined, EMPTY_VIEW, FACTS, undefined);
    first.headers["x-changed"] = "yes";
    first.status = 500;
    const second = answers.answer(new NotFound("No endpoint at GET /nope."), "/nope", undefined, undefined, EMPTY_VIEW, FACTS, undefined);
    expect(second).toEqual(problemResponse(new NotFound("No endpoint at GET /nope."), "/nope", EMPTY_VIEW));
    expect(second.headers).not.toBe(first.headers);
  });

  it("answers are kept under the current secrets view only: a secret that comes later is hidden, from then on", () => {
    const index = new SecretIndex();
    const answers = new RefusalAnswers(() => index.view());
    const secret = "sk_live_later_0123456789abcdef";
    const said = () => new NotFound(`No endpoint at GET /x/${secret}.`);
    const before = index.view();
    expect(answers.answer(said(), "/x", undefined, undefined, before, FACTS, undefined).body).toContain(secret);
    index.add(secret);
    const after = index.view();
    const second = answers.answer(said(), "/x", undefined, undefined, after, FACTS, undefined);
    expect(second).toEqual(problemResponse(said(), "/x", after));
    expect(second.body).not.toContain(secret);
  });

  it("a different path, description or profile is another answer", () => {
    const answers = new RefusalAnswers(() => EMPTY_VIEW);
    const lexik = createShaper(BUILT_IN_PROFILES.lexik!)!;
    const a = answers.answer(new NotFound("No endpoint at GET /a."), "/a", undefined, undefined, EMPTY_VIEW, FACTS, undefined);
    const b = answers.answer(new NotFound("No endpoint at GET /b."), "/b", undefined, undefined, EMPTY_VIEW, FACTS, undefined);
    const shaped = answers.answer(new NotFound("No endpoint at GET /a."), "/a", lexik, undefined, EMPTY_VIEW, FACTS, undefined);
    expect(a.body).not.toBe(b.body);
    expect(shaped).toEqual(lexik.refusal(new NotFound("No endpoint at GET /a."), "/a", EMPTY_VIEW, undefined, FACTS, undefined));
    expect(shaped.body).not.toBe(a.body);
  });

  it("the same refusal at two paths: each answer names its own path (instance), with and without a profile", () => {
    // The description here holds no path, so only the path in the key tells the two apart.
    const lexik = createShaper(BUILT_IN_PROFILES.lexik!)!;
    for (const shaper of [undefined, lexik]) {
      const answers = new RefusalAnswers(() => EMPTY_VIEW);
      for (const path of ["/api/v2/payment/p_1", "/api/v2/payment/p_2", "/api/v2/payment/p_1"]) {
        const answer = answers.answer(expired(), path, shaper, undefined, EMPTY_VIEW, FACTS, undefined);
        expect(answer).toEqual(
          shaper ? shaper.refusal(expired(), path, EMPTY_VIEW, undefined, FACTS, undefined) : problemResponse(expired(), path, EMPTY_VIEW),
        );
        if (!shaper) expect(JSON.parse(answer.body as string).instance).toBe(path);
      }
    }
  });

  it("refusals with headers of their own, or route headers, are made every time, with them", () => {
    const answers = new RefusalAnswers(() => EMPTY_VIEW);
    const allow = () => new MethodNotAllowed("PUT", "/api/v2/payment/init", ["POST"]);
    expect(answers.answer(allow(), "/api/v2/payment/init", undefined, undefined, EMPTY_VIEW, FACTS, undefined)).toEqual(
      problemResponse(allow(), "/api/v2/payment/init", EMPTY_VIEW),
    );
    const route = { deprecation: "true" };
    expect(answers.answer(expired(), "/api/login_check", undefined, route, EMPTY_VIEW, FACTS, undefined)).toEqual(
      problemResponse(expired(), "/api/login_check", EMPTY_VIEW, route),
    );
  });

  it(`keeps at most ${RefusalAnswers.MAX_KEPT} answers per profile, the oldest dropped first`, () => {
    const answers = new RefusalAnswers(() => EMPTY_VIEW);
    const kept = (answers as unknown as { unshaped: Map<string, unknown> }).unshaped;
    for (let i = 0; i < RefusalAnswers.MAX_KEPT + 10; i++)
      answers.answer(new NotFound(`No endpoint at GET /p${i}.`), `/p${i}`, undefined, undefined, EMPTY_VIEW, FACTS, undefined);
    expect(kept.size).toBe(RefusalAnswers.MAX_KEPT);
    expect([...kept.keys()][0]).toContain("/p10");
  });
});
