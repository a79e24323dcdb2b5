import { type ClientConfig, ClientError, type ProviderClient } from "./client.js";

/**
 * A provider client's whole flow, as the calibrate tests run it against the provider and then,
 * unchanged, against the sandbox serving the calibrated profile: the two transcripts must match.
 * `expire` moves the server's clock past the token's lifetime.
 */
export const PROTECTED_PATH = "/api/v2/payment/status";

export interface FlowTranscript {
  token: string;
  protectedCall: string;
  wrongSecret: string;
  invalidToken: string;
  expiry: string;
  paymentInit: string;
}

export async function clientFlow(
  make: (config: ClientConfig) => ProviderClient,
  config: ClientConfig,
  expire: () => Promise<void>,
): Promise<FlowTranscript> {
  const client = make(config);
  const token = await client.token().then((t) => (t.split(".").length === 3 ? "a JWT" : "not a JWT"), outcome);
  const protectedCall = await client.get(PROTECTED_PATH).then(() => "ok", outcome);
  const wrongSecret = await make({ ...config, apiSecret: `wrong-${config.apiSecret}` })
    .token()
    .then(() => "accepted", outcome);
  const invalidToken = await client.getWith(PROTECTED_PATH, "not-a-jwt").then(() => "accepted", outcome);
  await expire();
  const before = client.events.length;
  const expiry = await client.get(PROTECTED_PATH).then(() => `ok after: ${client.events.slice(before).join("; ") || "nothing"}`, outcome);
  const paymentInit = await client
    .initPayment(1999)
    .then((p) => (p.id !== "" && /^https:\/\//.test(p.url) ? "created" : `odd: ${JSON.stringify(p)}`), outcome);
  return { token, protectedCall, wrongSecret, invalidToken, expiry, paymentInit };
}

function outcome(e: unknown): string {
  return e instanceof ClientError ? `refused: ${e.kind} (HTTP ${e.status})` : `failed: ${(e as Error).message}`;
}
