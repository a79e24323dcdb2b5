import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { EMPTY_VIEW } from "../../src/core/secret-index.js";
import { errorReference } from "../../src/cli/error-reference.js";
import { CATALOGUE_CODES, catalogueEntry, ERROR_CATALOGUE, STATUS_TITLES } from "../../src/core/error-catalogue.js";
import {
  AdminTokenRequired,
  ControlJsonRequired,
  CrossSiteRequest,
  ExpectationFailed,
  Gone,
  HeadersTooLarge,
  HostNotAllowed,
  InsufficientScope,
  InternalError,
  InvalidClient,
  InvalidRequest,
  InvalidToken,
  LoginRejected,
  MethodNotAllowed,
  MissingCredentials,
  NotFound,
  PayloadTooLarge,
  RequestTimeout,
  type SandboxError,
  ScenarioFault,
  SimulatedFailure,
  TooManyHeaders,
  TooManySessions,
  UnsupportedMediaType,
} from "../../src/core/errors.js";
import { problemResponse } from "../../src/core/problem.js";

/**
 * The error catalogue (src/core/error-catalogue.ts) is the one list of refusal codes: the error
 * classes take their codes from it by type (a code not in it does not compile), and this file
 * checks what types cannot: each class answers a status and OAuth error its code's entry lists,
 * and docs/errors.md is the catalogue's current rendering.
 */

/** One refusal of every class, with every code a code-taking class can be given. */
function everyRefusal(): SandboxError[] {
  return [
    new MissingCredentials("x"),
    new InsufficientScope("cashout", "x"),
    new MethodNotAllowed("GET", "/x", ["POST"]),
    new UnsupportedMediaType("x"),
    new PayloadTooLarge("x"),
    new NotFound("x"),
    new InternalError("x"),
    new ScenarioFault("x"),
    new TooManySessions("x"),
    new AdminTokenRequired("x", true),
    new AdminTokenRequired("x", false),
    new CrossSiteRequest("x"),
    new HostNotAllowed("x"),
    new ControlJsonRequired("x"),
    new ExpectationFailed("x"),
    new HeadersTooLarge("x"),
    new TooManyHeaders("x"),
    new RequestTimeout("x"),
    new SimulatedFailure(429, "x", {}),
    new SimulatedFailure(503, "x", {}),
    new SimulatedFailure(502, "x", {}),
    new SimulatedFailure(418, "x", {}),
    new InvalidClient("merchant_disabled", "x", 403),
    new InvalidClient("unknown_api_key", "x"),
    new InvalidToken("token_expired", "x"),
    new InvalidRequest("body_malformed_json", "x"),
    new Gone("login_gone", "x"),
    new LoginRejected("x"),
  ];
}

describe("the error catalogue", () => {
  it("has one entry per code, each with a status it has a title for, a meaning and a fix", () => {
    expect(CATALOGUE_CODES.length).toBeGreaterThan(75);
    for (const code of CATALOGUE_CODES) {
      const entry = ERROR_CATALOGUE[code];
      expect(code, code).toMatch(/^[a-z0-9_]+$/);
      for (const status of entry.status) expect(STATUS_TITLES[status], `${code} ${status}`).toBeDefined();
      expect(entry.meaning, code).toMatch(/^[A-Z`].*\.$/s);
      expect(entry.fix, code).toMatch(/^[A-Z`].*\.$/s);
    }
  });

  it("lists the status and OAuth error each error class answers for its code", () => {
    for (const err of everyRefusal()) {
      const entry = catalogueEntry(err.code);
      const where = `${err.name} ${err.code}`;
      expect(entry.status, where).toContain(err.status);
      if (err.error === undefined) expect(entry.error, where).toEqual([]);
      else expect(entry.error, where).toContain(err.error);
    }
    expect(catalogueEntry("simulated_502")).toMatchObject({ status: [502], error: ["server_error"] });
  });

  it("gives the problem body its type and title", () => {
    const body = JSON.parse(problemResponse(new InvalidToken("token_expired", "Expired."), "/x", EMPTY_VIEW).body as string);
    expect(body.type).toBe("urn:merchant-sandbox:problem:token_expired");
    expect(body.title).toBe("Unauthorized");
  });
});

describe("a refusal", () => {
  it("leaves the global Error.stackTraceLimit alone and captures no stack", () => {
    const limit = Error.stackTraceLimit;
    const err = new InvalidToken("token_expired", "Expired.");
    expect(Error.stackTraceLimit).toBe(limit);
    expect(err.stack).toBeUndefined();
    expect(err).toBeInstanceOf(Error);
    expect(String(err)).toBe("InvalidToken: Expired.");
    // An ordinary error built after a refusal still has its stack.
    expect(new Error("bug").stack).toContain("error-catalogue.test.ts");
  });
});

describe("docs/errors.md", () => {
  it("is the current rendering of the catalogue (run `npm run docs:errors` after changing it)", () => {
    const committed = readFileSync(new URL("../../docs/errors.md", import.meta.url), "utf8");
    expect(committed).toBe(errorReference());
  });
});
