import { type ClientConfig, ClientError, expectNumber, expectString, type ProviderClient, providerRequests } from "./client.js";

/**
 * A client written for the envelope provider: it checks `status` and `code` of every envelope,
 * takes the token and its lifetime from `data`, and branches on `data.error_code`: TOKEN_EXPIRED
 * renews the token, anything else is an error of that code.
 */
export function envelopeClient(config: ClientConfig): ProviderClient {
  let token: string | undefined;
  const events: string[] = [];
  const send = providerRequests(config);
  const open = (status: number, body: unknown, ok: number): Record<string, unknown> => {
    const b = body as { status?: unknown; code?: unknown; message?: unknown; data?: unknown };
    if (b?.code !== status || typeof b.message !== "string") throw new Error(`unexpected envelope for HTTP ${status}`);
    if (status !== ok) {
      if (b.status !== "error") throw new Error("unexpected envelope: a refusal without status error");
      throw new ClientError(expectString((b.data as { error_code?: unknown } | null)?.error_code, "data.error_code"), status);
    }
    if (b.status !== "success") throw new Error("unexpected envelope: a success without status success");
    return b.data as Record<string, unknown>;
  };
  const client = {
    events,
    async token() {
      const r = await send.token();
      const data = open(r.status, r.body, 200);
      expectNumber(data.expires_in, "data.expires_in");
      if (data.token_type !== "Bearer") throw new Error("unexpected token_type");
      token = expectString(data.access_token, "data.access_token");
      return token;
    },
    async getWith(path: string, jwt: string) {
      const r = await send.get(path, jwt);
      if (r.status !== 200) open(r.status, r.body, 200);
      return r.body;
    },
    async get(path: string) {
      try {
        return await client.getWith(path, token ?? (await client.token()));
      } catch (e) {
        if (!(e instanceof ClientError) || e.kind !== "TOKEN_EXPIRED") throw e;
        events.push("renewed the token after TOKEN_EXPIRED");
        return client.getWith(path, await client.token());
      }
    },
    async initPayment(amount: number) {
      const r = await send.initPayment(amount);
      const data = open(r.status, r.body, 200);
      return { id: expectString(data.payment_id, "data.payment_id"), url: expectString(data.checkout_url, "data.checkout_url") };
    },
  };
  return client;
}
