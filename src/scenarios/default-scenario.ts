import type { ScenarioFile } from "./schema.js";

/**
 * The built-in `default` scenario: the default merchant (docs/architecture.md) with its published sandbox
 * credentials, and no rules. scenarios/default.yaml is the same scenario as a file (a test keeps
 * the two equal); this copy exists so library users need no file system.
 */
export const DEFAULT_SCENARIO: ScenarioFile = {
  name: "default",
  description: "The happy path: one merchant with the published sandbox credentials, both scopes, one-hour tokens, no faults.",
  merchants: [
    {
      id: "merchant_sandbox_default",
      name: "Sandbox Default Merchant",
      api_key: "sandbox-api-key",
      api_secret: "sandbox-api-secret",
      payment_token: "sandbox-payment-token",
      login: { email: "merchant@sandbox.test", password: "sandbox-password" },
      scopes: ["payment", "cashout"],
    },
  ],
};
