import { type ClientConfig, ClientError, expectNumber, expectString, type ProviderClient, providerRequests } from "./client.js";

/**
 * A client written for the nested provider: the token is `result.accessToken`, valid for
 * `result.validity` minutes (it renews early by its own clock too); refusals are
 * `{"error": {"code", "message"}}` and it branches on `error.code`: TOKEN_EXPIRED renews the token.
 */
export function nestedClient(config: ClientConfig): ProviderClient {
  let token: string | undefined;
  let renewAt = 0;
  const events: string[] = [];
  const send = providerRequests(config);
  const refusal = (status: number, body: unknown) => {
    const e = (body as { error?: { code?: unknown; message?: unknown } })?.error;
    expectString(e?.message, "error.message");
    return new ClientError(expectString(e?.code, "error.code"), status);
  };
  const client = {
    events,
    async token() {
      const r = await send.token();
      if (r.status !== 200) throw refusal(r.status, r.body);
      const result = (r.body as { result?: Record<string, unknown> }).result ?? {};
      const minutes = expectNumber(result.validity, "result.validity");
      expectString(result.expiresAt, "result.expiresAt");
      renewAt = Date.now() + (minutes - 1) * 60_000;
      token = expectString(result.accessToken, "result.accessToken");
      return token;
    },
    async getWith(path: string, jwt: string) {
      const r = await send.get(path, jwt);
      if (r.status !== 200) throw refusal(r.status, r.body);
      return r.body;
    },
    async get(path: string) {
      if (token === undefined || Date.now() >= renewAt) await client.token();
      try {
        return await client.getWith(path, token!);
      } catch (e) {
        if (!(e instanceof ClientError) || e.kind !== "TOKEN_EXPIRED") throw e;
        events.push("renewed the token after TOKEN_EXPIRED");
        return client.getWith(path, await client.token());
      }
    },
    async initPayment(amount: number) {
      const r = await send.initPayment(amount);
      if (r.status !== 201) throw refusal(r.status, r.body);
      const result = (r.body as { result?: Record<string, unknown> }).result ?? {};
      return { id: expectString(result.paymentId, "result.paymentId"), url: expectString(result.redirectUrl, "result.redirectUrl") };
    },
  };
  return client;
}
