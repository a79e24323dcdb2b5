import type { ClientSettings, FrameworkClient, StepResult } from "./framework-client.js";

/**
 * A framework client's whole flow (issue 24, Tests), run against its fake provider and, unchanged,
 * against the sandbox serving the profile calibrate wrote: the two transcripts must be equal. One
 * line per step: `<step>: <outcome> <statuses of every answer in the step> <what the client decided>`.
 * `expire` moves the server's clock 62 minutes on: past a one-hour token and Spring's 60 s of skew.
 */
export const FLOW_PROTECTED_PATH = "/api/v2/payment/status";

/** The sandbox's default merchant (docs/architecture.md): the flow's settings against a sandbox. */
export const SANDBOX_MERCHANT = {
  apiKey: "sandbox-api-key",
  apiSecret: "sandbox-api-secret",
  paymentToken: "sandbox-payment-token",
  email: "merchant@sandbox.test",
  password: "sandbox-password",
};
export const EXPIRE_BY_MS = 62 * 60_000;

export async function frameworkFlow(
  make: (settings: ClientSettings) => FrameworkClient,
  settings: ClientSettings,
  expire: () => Promise<void>,
): Promise<string[]> {
  const client = make(settings);
  const lines: string[] = [];
  const step = async (name: string, run: (c: FrameworkClient) => Promise<StepResult>, c = client) => {
    c.startStep();
    let result: StepResult;
    try {
      result = await run(c);
    } catch (e) {
      result = { outcome: "failed", decision: `threw ${(e as Error).message}` };
    }
    lines.push(`${name}: ${result.outcome} ${c.statuses.join("→") || "-"} ${result.decision}`);
  };

  await step("token by body", (c) => c.authenticate("body"));
  await step("token by headers", (c) => c.authenticate("headers"));
  await step("protected call", (c) => c.callProtected(FLOW_PROTECTED_PATH));
  await expire();
  await step("expired token", (c) => c.callProtected(FLOW_PROTECTED_PATH));
  await step("invalid signature", (c) => {
    c.token = tampered(c.token);
    return c.callProtected(FLOW_PROTECTED_PATH);
  });
  await step("not a JWT", (c) => {
    c.token = "not-a-jwt";
    return c.callProtected(FLOW_PROTECTED_PATH);
  });
  await step("no token", (c) => {
    c.token = undefined;
    return c.callProtected(FLOW_PROTECTED_PATH);
  });
  await step("wrong secret", (c) => c.authenticate("body"), make({ ...settings, apiSecret: `wrong-${settings.apiSecret}` }));
  await step("missing secret", (c) => c.authenticate("body", "api_secret"), make(settings));
  await step("payment/init with the payment token", (c) => c.initPayment(settings.paymentToken));
  // A client of its own, with a fresh JWT: this step does not depend on how the steps before went.
  await step(
    "payment/init with a JWT",
    async (c) => {
      const got = await c.authenticate("body");
      if (got.outcome !== "ok" || c.token === undefined) return { outcome: "failed", decision: `no JWT to send: ${got.decision}` };
      c.startStep();
      return c.initPayment(c.token);
    },
    make(settings),
  );
  await step("login", (c) => c.login());
  await step("protected call with the login's token", (c) => c.callProtected(FLOW_PROTECTED_PATH));
  return lines;
}

/** The token with its signature's first character changed: a JWT of the right shape whose signature fails. */
function tampered(token: string | undefined): string {
  if (token === undefined) return "no-token-to-tamper";
  const dot = token.lastIndexOf(".");
  const first = token[dot + 1];
  return `${token.slice(0, dot + 1)}${first === "A" ? "B" : "A"}${token.slice(dot + 2)}`;
}
