import { describe, expect, it } from "vitest";
import { envBlock, MASK, maskedEnvBlock, moveLabel, outcomeOf, sessionTime, statusText } from "../../ui/src/format.js";
import type { SessionMerchant } from "../../ui/src/types.js";

const merchant: SessionMerchant = {
  id: "m_1",
  api_key: "sk_1",
  api_secret: "s3cret",
  payment_token: "pt_1",
  login: { email: "a@example.test", password: "pw" },
};

describe("sessionTime", () => {
  it("gives HH:MM:SS in UTC, whatever the viewer's zone", () => {
    expect(sessionTime("2026-01-01T09:05:07.123Z")).toBe("09:05:07");
    expect(sessionTime("2026-01-01T23:59:59+02:00")).toBe("21:59:59");
  });
  it("shows a dash for a time it cannot read", () => {
    expect(sessionTime("not a time")).toBe("—");
  });
});

describe("outcomeOf and statusText", () => {
  it.each([
    [200, "ok", "200"],
    [302, "ok", "302"],
    [400, "refused", "400"],
    [401, "refused", "401"],
    [429, "refused", "429"],
    [500, "error", "500"],
    [503, "error", "503"],
    [0, "error", "dropped"],
  ] as const)("status %i is %s, shown as %s", (status, outcome, text) => {
    expect(outcomeOf({ status })).toBe(outcome);
    expect(statusText({ status })).toBe(text);
  });
});

describe("envBlock", () => {
  it("lists the six variables in order, with the real values", () => {
    expect(envBlock("http://127.0.0.1:4010/s/ses_1", merchant)).toBe(
      [
        "MERCHANT_API_BASE_URL=http://127.0.0.1:4010/s/ses_1",
        "MERCHANT_API_KEY=sk_1",
        "MERCHANT_API_SECRET=s3cret",
        "MERCHANT_PAYMENT_TOKEN=pt_1",
        "MERCHANT_LOGIN_EMAIL=a@example.test",
        "MERCHANT_LOGIN_PASSWORD=pw",
      ].join("\n"),
    );
  });
  it("masks the secret, the payment token and the password, not the key, e-mail or address", () => {
    const masked = maskedEnvBlock("http://h/s/ses_1", merchant);
    expect(masked).toBe(
      [
        "MERCHANT_API_BASE_URL=http://h/s/ses_1",
        "MERCHANT_API_KEY=sk_1",
        `MERCHANT_API_SECRET=${MASK}`,
        `MERCHANT_PAYMENT_TOKEN=${MASK}`,
        "MERCHANT_LOGIN_EMAIL=a@example.test",
        `MERCHANT_LOGIN_PASSWORD=${MASK}`,
      ].join("\n"),
    );
    expect(masked).not.toContain("s3cret");
    expect(masked).not.toContain("pt_1");
  });
});

describe("moveLabel", () => {
  it.each([
    [60_000, "+1m"],
    [15 * 60_000, "+15m"],
    [61 * 60_000, "+61m"],
    [90_000, "+90s"],
    [30_000, "+30s"],
    [2 * 3_600_000, "+2h"],
    [86_400_000, "+1d"],
    [-5 * 60_000, "-5m"],
  ])("%i ms is %s", (ms, label) => {
    expect(moveLabel(ms)).toBe(label);
  });
});
