/**
 * What the calibrate tests ask of each provider's client (lexik-client.ts, envelope-client.ts,
 * nested-client.ts): each reads its own provider's fields and branches on its own error codes,
 * and is run unchanged against the provider and against the sandbox with the calibrated profile.
 */
export interface ClientConfig {
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  paymentToken: string;
}

export interface ProviderClient {
  /** Exchanges the credentials for a token (and keeps it); throws the client's own error on refusal. */
  token(): Promise<string>;
  /** A protected GET with the kept token, renewing it when the provider says it expired. */
  get(path: string): Promise<unknown>;
  /** A protected GET with exactly this token, no renewal: how the client classifies a refusal. */
  getWith(path: string, token: string): Promise<unknown>;
  /** payment/init with the payment token: the payment's id and checkout URL. */
  initPayment(amount: number): Promise<{ id: string; url: string }>;
  /** What the client did on its own (renewals), in order. */
  events: string[];
}

/** A refusal as the client understood it: `kind` is the client's own classification. */
export class ClientError extends Error {
  constructor(
    readonly kind: string,
    readonly status: number,
  ) {
    super(`${kind} (HTTP ${status})`);
  }
}

export async function call(url: string, init: RequestInit): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, body: text === "" ? undefined : (JSON.parse(text) as unknown) };
}

/** The requests every provider client sends, the same bytes for each (only the reading of the answers differs). */
export function providerRequests(config: ClientConfig) {
  const postJson = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    call(config.baseUrl + path, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body) });
  return {
    token: () => postJson("/api/v2/auth/token", { api_key: config.apiKey, api_secret: config.apiSecret }),
    get: (path: string, jwt: string) => call(config.baseUrl + path, { headers: { authorization: `Bearer ${jwt}` } }),
    initPayment: (amount: number) =>
      postJson("/api/v2/payment/init", { amount, currency: "EUR" }, { authorization: `Bearer ${config.paymentToken}` }),
    login: (email: string, password: string) => postJson("/api/login_check", { username: email, password }),
  };
}

/** The client refuses answers it does not understand: that is what a renamed field breaks. */
export function expectString(value: unknown, what: string): string {
  if (typeof value !== "string" || value === "") throw new Error(`unexpected answer: ${what} is not a string`);
  return value;
}

export function expectNumber(value: unknown, what: string): number {
  if (typeof value !== "number") throw new Error(`unexpected answer: ${what} is not a number`);
  return value;
}
