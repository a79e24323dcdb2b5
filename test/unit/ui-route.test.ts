import { describe, expect, it } from "vitest";
import { parseRoute, sessionHref } from "../../ui/src/route.js";
import { matchesScenario } from "../../ui/src/scenario-filter.js";
import type { ScenarioSummary } from "../../ui/src/types.js";

describe("parseRoute", () => {
  it.each(["", "#", "#/", "#/nowhere"])("%j is home", (hash) => {
    expect(parseRoute(hash)).toEqual({ name: "home" });
  });
  it("reads a session's id, round-tripping sessionHref", () => {
    expect(parseRoute("#/sessions/ses_abc")).toEqual({ name: "session", id: "ses_abc" });
    expect(parseRoute(sessionHref("ses a/b"))).toEqual({ name: "session", id: "ses a/b" });
  });
  it("is no route for an in-page link, so the view stays", () => {
    expect(parseRoute("#row-req_12")).toBeUndefined();
  });
});

describe("matchesScenario", () => {
  const s: ScenarioSummary = {
    name: "token-expires-after-calls",
    description: "The access token stops working early.",
    source: "library",
    rules: [{ name: "expire-on-fourth-call", summary: "payment · 4th call → expire_token" }],
  };
  it("matches every word, in any order, in the name, description or rules", () => {
    expect(matchesScenario(s, "")).toBe(true);
    expect(matchesScenario(s, "EXPIRES token")).toBe(true);
    expect(matchesScenario(s, "stops working")).toBe(true);
    expect(matchesScenario(s, "4th payment")).toBe(true);
    expect(matchesScenario(s, "outage")).toBe(false);
    expect(matchesScenario(s, "token outage")).toBe(false);
  });
});
