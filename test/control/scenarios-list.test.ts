import { copyFileSync, mkdtempSync, rmSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ScenarioCatalogue } from "../../src/control/scenario-list.js";
import { LIBRARY_DIR } from "../../src/scenarios/library.js";
import type { ScenarioFile } from "../../src/scenarios/schema.js";
import { expectProblem } from "../support/expect.js";
import { LIBRARY } from "../support/library.js";
import { postJson, problem, serverPerDescribe, serversPerTest } from "../support/server.js";

/**
 * GET /__sandbox/scenarios over real HTTP: what the QA page lists to create a session from. The
 * loaded scenarios first, then the library's, each by name, a library name also loaded listed once
 * (as loaded); each with its description and one line per rule; admin-guarded; no parameters.
 */

const DEFAULT_LOADED = {
  name: "default",
  description: "The happy path: one merchant with the published sandbox credentials, both scopes, one-hour tokens, no faults.",
  source: "loaded",
  rules: [],
};
const TOKEN_EXPIRES_AFTER_CALLS = {
  name: "token-expires-after-calls",
  description:
    "The sandbox expires the presented access token on the 4th payment or cashout call (after three that work): that call gets 401 token_expired. A new token works from then on.",
  source: "library",
  rules: [{ name: "expire-on-fourth-call", summary: "payment, cashout · 4th call → expire_token: presented" }],
};
const MERCHANT_DISABLED_RULES = [
  { name: "first-exchange", summary: "token · 1st call → set_state: key-revoked" },
  { name: "revoke-key", summary: "state key-revoked → disable_merchant" },
];

/** A loaded scenario that takes a library scenario's name, with rules of its own (one unnamed). */
const OWN_OUTAGE: ScenarioFile = {
  name: "token-endpoint-outage",
  description: "Our own outage: every exchange fails for ten minutes.",
  merchants: [{ id: "m_own", api_key: "own-key", api_secret: "own-secret", payment_token: "own-payment-token" }],
  rules: [
    { name: "down", match: { endpoint: "token", clock: { before: "10m" } }, then: { respond: { status: 503, retry_after: 60 } } },
    { match: { endpoint: ["payment", "cashout"], calls: { from: 3 } }, then: { rotate_secret: "own-rotated-secret", delay: "1s" } },
  ],
};
const A_FIRST: ScenarioFile = {
  name: "a-first",
  description: "Sorted before default.",
  merchants: [{ id: "m_a", api_key: "a-key", api_secret: "a-secret", payment_token: "a-payment-token" }],
};

describe("GET /__sandbox/scenarios on a sandbox that loaded only the built-in default", () => {
  const t = serverPerDescribe();

  it("lists the loaded default, then every library scenario but default, by name, each exactly", async () => {
    const r = await t().call("/__sandbox/scenarios");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.headers.get("cache-control")).toBe("no-store");
    const scenarios = r.json.scenarios as Array<{ name: string; source: string }>;
    expect(scenarios.map((s) => [s.name, s.source])).toEqual([
      ["default", "loaded"],
      ...LIBRARY.filter((n) => n !== "default").map((n) => [n, "library"]),
    ]);
    expect(scenarios[0]).toEqual(DEFAULT_LOADED);
    expect(scenarios.find((s) => s.name === "token-expires-after-calls")).toEqual(TOKEN_EXPIRES_AFTER_CALLS);
    expect(scenarios.find((s) => s.name === "merchant-disabled")).toEqual({
      name: "merchant-disabled",
      description: expect.any(String),
      source: "library",
      rules: MERCHANT_DISABLED_RULES,
    });
    // Every member is one of the four, and every rule has its line.
    for (const s of r.json.scenarios) {
      expect(Object.keys(s).sort(), s.name).toEqual(["description", "name", "rules", "source"]);
      for (const rule of s.rules) expect(rule.summary, `${s.name}/${rule.name}`).toMatch(/^.+ → .+$/);
    }
  });

  it("answers the same list again (the library is read once per sandbox), and HEAD its headers without a body", async () => {
    const first = await t().call("/__sandbox/scenarios");
    const again = await t().call("/__sandbox/scenarios");
    expect(again.json).toEqual(first.json);
    const head = await t().call("/__sandbox/scenarios", { method: "HEAD" });
    expect([head.status, head.headers.get("content-type"), head.headers.get("cache-control"), head.text]).toEqual([
      200,
      "application/json",
      "no-store",
      "",
    ]);
    expect(head.headers.get("content-length")).toBe(String(Buffer.byteLength(first.text)));
  });

  it("takes no query parameters: 400 unknown_parameter, naming the one sent", async () => {
    expectProblem(
      await t().call("/__sandbox/scenarios?q=token"),
      problem(
        400,
        "Bad Request",
        "unknown_parameter",
        "GET /__sandbox/scenarios does not take 'q'; it takes no parameters (it lists every scenario: filter the answer).",
        "/__sandbox/scenarios",
        "invalid_request",
      ),
    );
  });

  it("takes GET and HEAD only: 405 with Allow", async () => {
    const r = await t().call("/__sandbox/scenarios", postJson({}));
    expectProblem(
      r,
      problem(
        405,
        "Method Not Allowed",
        "method_not_allowed",
        "POST is not allowed on /__sandbox/scenarios. Use GET or HEAD.",
        "/__sandbox/scenarios",
        "method_not_allowed",
      ),
      { headers: { allow: "GET, HEAD" } },
    );
  });

  it("lists only names a session can be created from", async () => {
    for (const name of ["default", "token-expires-after-calls"]) {
      const r = await t().call("/__sandbox/sessions", postJson({ scenario: name }));
      expect([r.status, r.json.scenario]).toEqual([201, name]);
      expect((await t().call(`/__sandbox/sessions/${r.json.id}`, { method: "DELETE" })).status).toBe(204);
    }
  });
});

describe("GET /__sandbox/scenarios with scenarios loaded at start", () => {
  const start = serversPerTest();

  it("lists the loaded ones first by name; a loaded scenario named like a library one is listed once, as loaded", async () => {
    const t = await start({ scenarios: [OWN_OUTAGE, A_FIRST] });
    const r = await t.call("/__sandbox/scenarios");
    expect(r.status).toBe(200);
    const scenarios = r.json.scenarios as Array<{ name: string; source: string }>;
    expect(scenarios.slice(0, 3)).toEqual([
      { name: "a-first", description: "Sorted before default.", source: "loaded", rules: [] },
      DEFAULT_LOADED,
      {
        name: "token-endpoint-outage",
        description: "Our own outage: every exchange fails for ten minutes.",
        source: "loaded",
        rules: [
          { name: "down", summary: "token · before 10m → respond: 503 (retry_after 60s)" },
          { name: "rules[1]", summary: "payment, cashout · from the 3rd call → delay: 1s, rotate_secret" },
        ],
      },
    ]);
    expect(scenarios.slice(3).map((s) => [s.name, s.source])).toEqual(
      LIBRARY.filter((n) => n !== "default" && n !== "token-endpoint-outage").map((n) => [n, "library"]),
    );
    // The rotated secret is a credential: never listed.
    expect(r.text).not.toContain("own-rotated-secret");
    expect(r.text).not.toContain("own-secret");
  });

  it("does not list sessions' copies", async () => {
    const t = await start();
    const before = await t.call("/__sandbox/scenarios");
    expect((await t.call("/__sandbox/sessions", postJson({ scenario: "token-expires-after-calls" }))).status).toBe(201);
    expect((await t.call("/__sandbox/scenarios")).json).toEqual(before.json);
  });

  it("needs the admin token when one is set (401 without it), like the rest of the control plane", async () => {
    const t = await start({ adminToken: "scenarios-admin-token" });
    const refused = await t.call("/__sandbox/scenarios");
    expect([refused.status, refused.json.code]).toEqual([401, "admin_token_required"]);
    const ok = await t.call("/__sandbox/scenarios", { headers: { "x-admin-token": "scenarios-admin-token" } });
    expect([ok.status, ok.json.scenarios[0]]).toEqual([200, DEFAULT_LOADED]);
  });

  it("refuses a web page (cross-site) and is absent with the control plane off", async () => {
    const t = await start();
    const cross = await t.call("/__sandbox/scenarios", { headers: { "sec-fetch-site": "cross-site" } });
    expect([cross.status, cross.json.code]).toEqual([403, "cross_site_request"]);
    const off = await start({ controlPlane: false });
    const absent = await off.call("/__sandbox/scenarios");
    expect([absent.status, absent.json.code]).toEqual([404, "not_found"]);
  });
});

describe("ScenarioCatalogue", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const tempLibrary = (...names: string[]): string => {
    const dir = mkdtempSync(join(tmpdir(), "scenario-catalogue-"));
    dirs.push(dir);
    for (const n of names) copyFileSync(join(LIBRARY_DIR, `${n}.yaml`), join(dir, `${n}.yaml`));
    return dir;
  };

  it("reads its library once: a file removed afterwards is still listed", async () => {
    const dir = tempLibrary("token-expires-after-calls", "slow-token-endpoint");
    const catalogue = new ScenarioCatalogue(dir);
    const first = await catalogue.list([]);
    expect(first.map((s) => s.name)).toEqual(["slow-token-endpoint", "token-expires-after-calls"]);
    expect(first[0]).toEqual({
      name: "slow-token-endpoint",
      description: expect.any(String),
      source: "library",
      rules: [{ name: "slow", summary: "token → delay: 3s" }],
    });
    unlinkSync(join(dir, "slow-token-endpoint.yaml"));
    expect(await catalogue.list([])).toEqual(first);
  });

  it("lists no library scenario when the sandbox has no library folder", async () => {
    expect(await new ScenarioCatalogue(join(tmpdir(), "no-such-scenario-library-folder")).list([])).toEqual([]);
  });
});
