import { describe, expect, it } from "vitest";
import { didYouMeanNames, similarNames } from "../../src/core/source/suggest.js";

/** Did-you-mean for names (src/core/source/suggest.ts): a typo first, then shared words. */

const LIBRARY = [
  "cashout-without-scope",
  "default",
  "login-gone",
  "payment-token-expired",
  "short-lived-tokens",
  "token-endpoint-outage",
  "token-expires-after-calls",
  "token-rate-limited",
  "token-revoked-mid-session",
];

describe("similarNames", () => {
  it("a typo: the one closest name", () => {
    expect(similarNames("token-endpoint-outgae", LIBRARY)).toEqual(["token-endpoint-outage"]);
    expect(similarNames("login-gon", LIBRARY)).toEqual(["login-gone"]);
  });

  it("too far for a typo: the names that share the most words (expiry ~ expires ~ expired)", () => {
    expect(similarNames("token-expiry", LIBRARY)).toEqual(["payment-token-expired", "token-expires-after-calls"]);
    expect(similarNames("outage", LIBRARY)).toEqual(["token-endpoint-outage"]);
    expect(similarNames("revoked", LIBRARY)).toEqual(["token-revoked-mid-session"]);
  });

  it("nothing when nothing is near, or when too many names tie", () => {
    expect(similarNames("nope", LIBRARY)).toEqual([]);
    // 'token' is in five names: naming them all would not help.
    expect(
      similarNames(
        "tokens-x",
        LIBRARY.filter((n) => n !== "short-lived-tokens"),
      ),
    ).toEqual([]);
    expect(similarNames("", LIBRARY)).toEqual([]);
  });
});

describe("didYouMeanNames", () => {
  it("words the names as a parenthesis, or nothing", () => {
    expect(didYouMeanNames("token-expiry", LIBRARY)).toBe(" (did you mean 'payment-token-expired' or 'token-expires-after-calls'?)");
    expect(didYouMeanNames("outage", LIBRARY)).toBe(" (did you mean 'token-endpoint-outage'?)");
    expect(didYouMeanNames("nope", LIBRARY)).toBe("");
  });
});
