import { describe, expect, it } from "vitest";
import { plainText } from "../../src/core/echo.js";
import { validateSessionActions } from "../../src/scenarios/session-actions.js";
import { BREAK_ACTIONS, type BreakInputs, DEFAULT_INPUTS, DELAY_ENDPOINTS, ranMessage } from "../../ui/src/panels/break-actions.js";

/**
 * The QA page's "break it now" choices send bodies the control plane accepts: checked with the
 * operation's own validation, so the form and POST /__sandbox/sessions/{id}/actions cannot drift.
 */
describe("break it now: the bodies the form sends", () => {
  const variants: BreakInputs[] = [
    DEFAULT_INPUTS,
    { ...DEFAULT_INPUTS, times: "1", retryAfter: "", delay: "1500ms", keepOldKey: true },
    ...DELAY_ENDPOINTS.map((endpoint) => ({ ...DEFAULT_INPUTS, endpoint })),
  ];

  for (const action of BREAK_ACTIONS) {
    it(`${action.value} (${action.label}) is a valid body with every input the form allows`, () => {
      for (const inputs of variants) {
        const body = action.body(inputs);
        expect(validateSessionActions(body), JSON.stringify(body)).toMatchObject({ ok: true });
        expect(validateSessionActions({ merchant: "m_1", ...body })).toMatchObject({ ok: true });
      }
    });
  }

  it("sends the exact bodies for the contract's choices", () => {
    const body = (value: string, inputs: Partial<BreakInputs> = {}) =>
      BREAK_ACTIONS.find((a) => a.value === value)!.body({ ...DEFAULT_INPUTS, ...inputs });
    expect(body("expire_tokens")).toEqual({ now: { expire_token: "all" } });
    expect(body("revoke_tokens")).toEqual({ now: { revoke_token: "all" } });
    expect(body("rotate_signing_key")).toEqual({ now: { rotate_signing_key: true } });
    expect(body("rotate_signing_key", { keepOldKey: true })).toEqual({ now: { rotate_signing_key: { keep_old: true } } });
    expect(body("token_503", { times: "3", retryAfter: "30" })).toEqual({
      next: { endpoint: "token", times: 3, then: { respond: { status: 503, retry_after: 30 } } },
    });
    expect(body("delay_calls", { times: "2", delay: "5s", endpoint: "any" })).toEqual({ next: { times: 2, then: { delay: "5s" } } });
    expect(body("delay_calls", { times: "2", delay: "2", endpoint: "payment" })).toEqual({
      next: { endpoint: "payment", times: 2, then: { delay: 2 } },
    });
  });

  it("a bad input is refused by the operation, with what was wrong (the form shows that refusal)", () => {
    const delay = BREAK_ACTIONS.find((a) => a.value === "delay_calls")!;
    // The problems quote the body through echo() (the answer redacts them): read as plain text here.
    const checked = validateSessionActions(delay.body({ ...DEFAULT_INPUTS, delay: "forever" }));
    expect(checked.ok ? checked : { ...checked, problems: checked.problems.map(plainText) }).toEqual({
      ok: false,
      problems: ["next.then.delay: must be a duration such as 90s, 59m, 1h or 1h30m (no sign)"],
    });
    expect(validateSessionActions(delay.body({ ...DEFAULT_INPUTS, times: "0" }))).toMatchObject({ ok: false });
  });

  it("says what ran", () => {
    const byValue = (v: string) => BREAK_ACTIONS.find((a) => a.value === v)!;
    expect(ranMessage(byValue("revoke_tokens"), DEFAULT_INPUTS, "ses_1")).toBe(
      "Ran revoke_tokens on ses_1: the access tokens it holds now are refused as revoked",
    );
    expect(ranMessage(byValue("token_503"), { ...DEFAULT_INPUTS, times: "3", retryAfter: "30" }, "ses_1")).toBe(
      "The next 3 token exchanges answer 503 with Retry-After 30 s, on ses_1",
    );
    expect(ranMessage(byValue("delay_calls"), { ...DEFAULT_INPUTS, times: "1", delay: "2s" }, "ses_1", "m_1.ses_1")).toBe(
      "The next call waits 2s before answering, on ses_1 (merchant m_1.ses_1)",
    );
  });
});
