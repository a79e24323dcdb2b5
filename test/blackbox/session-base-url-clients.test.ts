import { describe, expect, it } from "vitest";
import type { Finding } from "../../src/control/report.js";
import { MerchantIntegration, type Mistakes } from "../support/merchant-integration.js";
import { postJson, serverPerDescribe } from "../support/server.js";

/**
 * Issue 13's gate: an integration configured with its session's `base_url` is judged by that
 * session's own report, whatever it sends. One sandbox, one session per client (as parallel CI jobs
 * would share one sandbox); each client is the same small integration with one mistake, and each
 * must be caught by its session's report with the finding named for it, while the correct client
 * gets none. The session clock is moved by the client's waits, never slept on.
 */

const server = serverPerDescribe();

interface Client {
  name: string;
  scenario?: string;
  mistakes: Mistakes;
  /** The findings its session's report must name (code, severity), and no other. */
  findings: Array<[string, Finding["severity"]]>;
}

const CLIENTS: Client[] = [
  // Made visible by the session's base URL: nothing on these requests names a merchant.
  {
    name: "calls payment without credentials",
    mistakes: { sendToken: "none" },
    findings: [
      ["missing_credentials", "error"],
      // It drops its token after each 401 and gets a new one: one token per call, too.
      ["token_per_call", "warning"],
    ],
  },
  { name: "puts its token in the query string", mistakes: { sendToken: "query" }, findings: [["credentials_in_query", "error"]] },
  { name: "uses /api/v1", mistakes: { apiPrefix: "/api/v1" }, findings: [["wrong_base_path", "error"]] },
  { name: "doubles /api/v2", mistakes: { apiPrefix: "/api/v2/api/v2" }, findings: [["wrong_base_path", "error"]] },
  { name: "drops /api", mistakes: { apiPrefix: "/v2" }, findings: [["wrong_base_path", "error"]] },
  // The ten kinds the report caught before, now through the session's base URL.
  { name: "gets a token per call", mistakes: { noTokenCache: true }, findings: [["token_per_call", "warning"]] },
  { name: "renews only after a 401", mistakes: { renewOnlyOn401: true }, findings: [["no_proactive_renewal", "warning"]] },
  {
    name: "resends the expired token",
    mistakes: { renewOnlyOn401: true, resendRefusedToken: true },
    findings: [["expired_token_reused", "error"]],
  },
  { name: "sends the JWT to payment/init", mistakes: { accessTokenOnPaymentInit: true }, findings: [["jwt_on_payment_init", "error"]] },
  {
    name: "sends the payment token to payment calls",
    mistakes: { paymentTokenOnProtected: true },
    findings: [["payment_token_on_bearer_endpoint", "error"]],
  },
  { name: "still uses the login", mistakes: { useLogin: true }, findings: [["deprecated_login_used", "warning"]] },
  { name: "sends its credentials twice", mistakes: { credentialsTwice: true }, findings: [["conflicting_credentials", "warning"]] },
  {
    name: "ignores Retry-After",
    scenario: "token-endpoint-outage",
    mistakes: { ignoreRetryAfter: true },
    findings: [["retry_ignores_retry_after", "error"]],
  },
  {
    name: "hammers a refused exchange",
    scenario: "merchant-disabled",
    mistakes: { noTokenCache: true, retryRefusals: true },
    findings: [["hammering_after_error", "error"]],
  },
];

/** A session of the scenario and the integration configured with its base_url, as a CI job would. */
async function integrationInSession(scenario: string, mistakes: Mistakes): Promise<{ id: string; merchantId: string; client: MerchantIntegration }> {
  const t = server();
  const created = await t.call("/__sandbox/sessions", postJson({ scenario }));
  expect(created.status).toBe(201);
  const { id, base_url: baseUrl, merchant } = created.json;
  expect(baseUrl).toBe(`${t.url}/s/${id}`);
  const client = new MerchantIntegration({
    baseUrl,
    apiKey: merchant.api_key,
    apiSecret: merchant.api_secret,
    paymentToken: merchant.payment_token,
    login: merchant.login,
    wait: async (seconds) => {
      const moved = await t.call(`/__sandbox/sessions/${id}/clock`, postJson({ advance: `${seconds}s` }));
      expect(moved.status).toBe(200);
    },
    mistakes,
  });
  return { id, merchantId: merchant.id, client };
}

async function sessionFindings(id: string): Promise<Finding[]> {
  const r = await server().call(`/__sandbox/sessions/${id}/report`);
  expect(r.status).toBe(200);
  return r.json.findings;
}

describe("each integration is judged by its own session's report, through its base_url", () => {
  it("the correct integration: every call succeeds, 0 findings", async () => {
    const { id, client } = await integrationInSession("default", {});
    await client.checkout();
    // init; token; status at 0, 25 and 50 min; a new token at 75 min (past 90 % of 60 min); status.
    expect(client.statuses).toEqual([201, 200, 200, 200, 200, 200, 200]);
    expect(await sessionFindings(id)).toEqual([]);
  });

  it("the correct integration rides out the token endpoint outage: 0 findings", async () => {
    const { id, client } = await integrationInSession("token-endpoint-outage", {});
    await client.checkout();
    expect(client.statuses).toEqual([201, 503, 503, 200, 200, 200, 200, 200, 200]);
    expect(await sessionFindings(id)).toEqual([]);
  });

  for (const c of CLIENTS) {
    it(`${c.name}: ${c.findings.map(([code]) => code).join(", ")}`, async () => {
      const { id, merchantId, client } = await integrationInSession(c.scenario ?? "default", c.mistakes);
      await client.checkout();
      const findings = await sessionFindings(id);
      expect(findings.map((f) => [f.code, f.severity])).toEqual(c.findings);
      // Every finding cites requests of this session's journal, and only those.
      const journal = await server().call(`/__sandbox/requests?session=${id}`);
      const ids = new Set((journal.json.requests as Array<{ id: string }>).map((e) => e.id));
      expect(ids.size).toBe(client.statuses.length);
      for (const f of findings) for (const e of f.evidence) expect(ids.has(e)).toBe(true);
      // Each names who did it: the session's merchant, or (no credentials at all) the session's client.
      const who = new RegExp(`^(Merchant '${merchantId}'|The client of session '${id}') `);
      for (const f of findings) expect(f.message).toMatch(who);
    });
  }
});
