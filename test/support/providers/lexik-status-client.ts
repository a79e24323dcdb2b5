import { type ClientConfig, ClientError, expectString, type ProviderClient, providerRequests } from "./client.js";

/**
 * A lenient client for the Lexik provider (issue 12's calibrate test): the token is `body.token`; a refusal is
 * `{"code", "message"}` whose code is only the status, so any 401 on a protected call means "get
 * a new token and try once more".
 */
export function lexikStatusClient(config: ClientConfig): ProviderClient & { login(email: string, password: string): Promise<string> } {
  let token: string | undefined;
  const events: string[] = [];
  const send = providerRequests(config);
  const refusal = (status: number, body: unknown) => {
    const b = body as { code?: unknown; message?: unknown };
    if (b?.code !== status || typeof b.message !== "string") throw new Error(`unexpected refusal body for HTTP ${status}`);
    return new ClientError(status === 401 ? "unauthorized" : status === 400 ? "bad_request" : `http_${status}`, status);
  };
  const client = {
    events,
    async token() {
      const r = await send.token();
      if (r.status !== 200) throw refusal(r.status, r.body);
      token = expectString((r.body as { token?: unknown }).token, "token");
      return token;
    },
    async getWith(path: string, jwt: string) {
      const r = await send.get(path, jwt);
      if (r.status !== 200) throw refusal(r.status, r.body);
      return r.body;
    },
    async get(path: string) {
      try {
        return await client.getWith(path, token ?? (await client.token()));
      } catch (e) {
        if (!(e instanceof ClientError) || e.kind !== "unauthorized") throw e;
        events.push("renewed the token after a 401");
        return client.getWith(path, await client.token());
      }
    },
    async initPayment(amount: number) {
      const r = await send.initPayment(amount);
      if (r.status !== 201) throw refusal(r.status, r.body);
      const b = r.body as { id?: unknown; url?: unknown };
      return { id: expectString(b.id, "id"), url: expectString(b.url, "url") };
    },
    async login(email: string, password: string) {
      const r = await send.login(email, password);
      if (r.status !== 200) throw refusal(r.status, r.body);
      return expectString((r.body as { token?: unknown }).token, "token");
    },
  };
  return client;
}
