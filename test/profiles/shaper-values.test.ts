import { describe, expect, it } from "vitest";
import { answerFacts, type AnswerFacts } from "../../src/core/answer-shaper.js";
import { createShaper } from "../../src/profiles/shaper.js";

const ISSUED = { accessToken: "a.b.c", expiresIn: 600, issuedAt: 1_700_000_000, scope: "payment" };

/** The facts of one request, counting how often the clock is read and an id asked for. */
function counted(): { facts: AnswerFacts; reads: { now: number; id: number } } {
  const reads = { now: 0, id: 0 };
  const inner = answerFacts("POST", "/api/v2/token", { now: () => 1_700_000_000_000 });
  const facts: AnswerFacts = {
    method: inner.method,
    path: inner.path,
    nowMs: () => {
      reads.now++;
      return inner.nowMs();
    },
    requestId: (make) => {
      reads.id++;
      return inner.requestId(make);
    },
  };
  return { facts, reads };
}

// A shaped answer reads the request's id and clock only when one of its templates prints them.
describe("a shaper's per-request values", () => {
  it("an answer that prints neither makes no request id and reads no clock", () => {
    const shaper = createShaper({
      name: "plain",
      headers: { "X-Route": "{{route}}" },
      token: { body: { token: "{{access_token}}", m: "{{method}}" } },
    })!;
    const { facts, reads } = counted();
    const answer = shaper.finish(shaper.token(ISSUED, {}, facts)!, facts);
    expect(answer).toEqual({
      status: 200,
      headers: { "cache-control": "no-store", "content-type": "application/json", "x-route": "api/v2/token" },
      body: JSON.stringify({ token: "a.b.c", m: "POST" }),
    });
    expect(reads).toEqual({ now: 0, id: 0 });
  });

  it("an answer that prints them makes one id, the same in its header and body", () => {
    const shaper = createShaper({
      name: "ids",
      requestId: "hex16",
      headers: { "X-Request-Id": "{{request_id}}" },
      token: { body: { id: "{{request_id}}", at: "{{now:unix}}" } },
    })!;
    const { facts, reads } = counted();
    const answer = shaper.finish(shaper.token(ISSUED, {}, facts)!, facts);
    const body = JSON.parse(answer.body as string) as { id: string; at: number };
    expect(body.id).toMatch(/^[0-9a-f]{16}$/);
    expect(answer.headers["x-request-id"]).toBe(body.id);
    expect(body.at).toBe(1_700_000_000);
    expect(reads.id).toBe(2);
  });
});

describe("a shaper's perRequest", () => {
  it("reads the templates only: a description that mentions {{request_id}} keeps refusals kept", () => {
    const refusal = { contentType: "application/json", body: { message: "{{message}}" } };
    expect(createShaper({ name: "said", description: "prints no {{request_id}}", refusal })!.perRequest).toBe(false);
    expect(createShaper({ name: "prints", refusal: { ...refusal, headers: { "X-Request-Id": "{{request_id}}" } } })!.perRequest).toBe(true);
  });

  it("a counting header moves by one per answer, the same number in every template of one answer", () => {
    const shaper = createShaper({
      name: "gateway",
      headers: { "X-RateLimit-Remaining": "{{count_down:3}}", "X-RateLimit-Used": "{{count_up}}" },
      token: { headers: { "X-Left": "left {{count_down:3}}" }, body: { token: "{{access_token}}", from10: "{{count_up:10}}" } },
    })!;
    const seen = [];
    for (let i = 0; i < 4; i++) {
      const { facts } = counted();
      const answer = shaper.finish(shaper.token(ISSUED, {}, facts)!, facts);
      seen.push([
        answer.headers["x-ratelimit-remaining"],
        answer.headers["x-left"],
        answer.headers["x-ratelimit-used"],
        JSON.parse(answer.body as string).from10,
      ]);
    }
    expect(seen).toEqual([
      ["2", "left 2", "1", 11],
      ["1", "left 1", "2", 12],
      ["0", "left 0", "3", 13],
      ["2", "left 2", "4", 14],
    ]);
  });

  it("{{fresh:SHAPE}} makes an id of that shape per answer, its prefix kept", () => {
    const shaper = createShaper({
      name: "ids",
      headers: { "X-Ref": "acme_{{fresh:hex-12}}" },
      paymentInit: { body: { ref: "acme_{{fresh:hex-12}}", trace: "{{fresh:uuid}}" } },
    })!;
    const render = () => {
      const { facts } = counted();
      const answer = shaper.finish(shaper.paymentInit({ payment_id: "pay_1" } as never, {}, facts)!, facts);
      return { ...(JSON.parse(answer.body as string) as { ref: string; trace: string }), header: answer.headers["x-ref"] };
    };
    const [a, b] = [render(), render()];
    // One answer's header and body print the same id; the next answer another.
    expect(a.header).toBe(a.ref);
    expect(a.ref).toMatch(/^acme_[0-9a-f]{12}$/);
    expect(a.trace).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(b.ref).not.toBe(a.ref);
  });
});
