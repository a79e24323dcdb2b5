import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { observationsFromHar } from "../../src/cli/calibrate/har-classify.js";
import { readHarFile } from "../../src/cli/calibrate/har-read.js";
import { inferProfile } from "../../src/cli/calibrate/infer.js";

/**
 * A recording in mitmproxy's HAR shape (test/fixtures/har/, its creator comment says what it copies
 * from mitmproxy/addons/savehar.py): read whatever the body's form (decoded text beside its
 * Content-Encoding header, base64, base64 of the still-gzipped bytes), an error flow skipped, each
 * exchange classified as the probe it stands for, and learnt from. Pure, no network.
 */

const FIXTURE = fileURLToPath(new URL("../fixtures/har/mitmproxy-savehar.har", import.meta.url));

describe("a mitmproxy recording", () => {
  const exchanges = readHarFile(FIXTURE, 1024 * 1024);
  const reading = observationsFromHar(exchanges, FIXTURE);

  it("reads every body form, and skips the flow that has no answer", () => {
    expect(exchanges).toHaveLength(7);
    expect(exchanges[3]!.answer.text).toBe("token has invalid claims: token is expired\n");
    // Base64 of bytes still gzipped as sent, with their Content-Encoding: inflated.
    expect(exchanges[6]!.answer.json).toEqual({ payment_id: "pay_1", status: "created" });
    // Text mitmproxy already decoded, the header kept: read as it is.
    expect(exchanges[5]!.answer.json).toEqual({ error: "invalid_client" });
  });

  it("classifies each exchange by what was sent and what came back, the second of a kind as its repeat", () => {
    expect(reading.observations.observed.map((o) => o.probe)).toEqual([
      "token_body",
      "protected_fresh",
      "expired_token",
      "no_authorization",
      "wrong_secret",
      "payment_init",
    ]);
    expect(reading.observations.repeats?.map((o) => o.probe)).toEqual(["protected_fresh"]);
    expect([reading.read, reading.used]).toEqual([7, 7]);
    expect(reading.observations.paymentInitSent).toEqual({ amount: 100, currency: "EUR", order_id: "o-1" });
    expect(reading.secrets).toEqual(expect.arrayContaining(["secret-7a9c41", "wrong", "pay-tok-5f1c2d"]));
    expect(reading.observations.skipped.find((s) => s.probe === "other_scheme")?.why).toBe(
      "not in the recording: the probe that would observe it sends Authorization: Basic (calibrate --url ...)",
    );
  });

  it("learns the profile: the request id per request, Go's text bodies, golang-jwt's leeway, the payment's id", () => {
    const { profile, lines } = inferProfile(reading.observations, "recorded");
    expect(profile.requestId).toBe("uuid");
    expect(profile.codes?.token_expired).toMatchObject({ message: "token has invalid claims: token is expired" });
    expect(profile.paymentInit?.body).toEqual({ payment_id: "{{payment_id}}", status: "created" });
    expect(lines.find((l) => l.probe === "leeway")?.cameBack).toMatch(/^401 to a token \d+ s past its exp: golang-jwt\/jwt v5's expired text$/);
  });
});

describe("a recording's protected calls, classified by the sandbox's reading of Authorization", () => {
  const part = (v: object) => Buffer.from(JSON.stringify(v)).toString("base64url");
  const FOREIGN = `${part({ alg: "RS256", typ: "JWT" })}.${part({ sub: "m-1", exp: 1_900_000_000 })}.c2lnbmF0dXJl`;
  const call = (authorization: string | undefined) => ({
    method: "GET",
    url: new URL("https://provider.test/api/v2/payment/status"),
    requestHeaders: authorization === undefined ? ({} as Record<string, string>) : { authorization },
    requestBody: undefined,
    answer: { status: 401, headers: {}, json: { error: "invalid_token" }, notJson: false, empty: false, contentType: "application/json" },
    sentAt: Date.parse("2026-11-29T12:00:00Z"),
  });
  const probeOf = (authorization: string | undefined) =>
    observationsFromHar([call(authorization)], "calls.har").observations.observed.map((o) => o.probe);

  it.each([
    [undefined, "no_authorization"],
    ["Basic Y2FsaWJyYXRlOmNhbGlicmF0ZQ==", "other_scheme"],
    ["Bearer", "empty_bearer"],
    ["Bearer not-a-jwt", "malformed_token"],
    [`Bearer ${FOREIGN}`, "foreign_jwt"],
    // The sandbox refuses a tab after the scheme (bad_separator): no token was sent, whatever follows.
    [`Bearer\t${FOREIGN}`, "malformed_token"],
  ])("Authorization %s is %s", (authorization, probe) => {
    expect(probeOf(authorization)).toEqual([probe]);
  });
});
