/**
 * A small merchant integration, as a team would write one, configured with a base URL and the
 * merchant's credentials. Each knob reproduces one mistake real integrations make; with none set it
 * is the correct client: one token, cached, renewed shortly before it expires, sent as a bearer
 * header; the payment token on payment/init only; Retry-After honoured.
 *
 * Time is the caller's: `wait(seconds)` moves the clock the sandbox judges by (a session's clock),
 * so a test never sleeps, and the client's own idea of "now" moves with it.
 */
export interface IntegrationConfig {
  /** The session's `base_url` (or the sandbox's root URL). */
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  paymentToken: string;
  login?: { email: string; password: string };
  /** Moves the sandbox clock this integration is judged by. */
  wait: (seconds: number) => Promise<void>;
  mistakes?: Mistakes;
}

export interface Mistakes {
  /** Where the client thinks the API lives under the base URL (the API's own is `/api/v2`). */
  apiPrefix?: string;
  /** How the access token travels to payment/cashout. */
  sendToken?: "bearer" | "query" | "none";
  /** A new token for every call instead of one cached token. */
  noTokenCache?: boolean;
  /** Uses the token until a call fails instead of renewing it shortly before `expires_in` runs out. */
  renewOnlyOn401?: boolean;
  /** After a 401, sends the same token again instead of getting a new one. */
  resendRefusedToken?: boolean;
  /** Sends the access token to payment/init instead of the payment token. */
  accessTokenOnPaymentInit?: boolean;
  /** Sends the payment token to payment/cashout instead of the access token. */
  paymentTokenOnProtected?: boolean;
  /** Gets its token from the deprecated login instead of the token endpoint. */
  useLogin?: boolean;
  /** Sends api_key/api_secret both in the body and in the headers. */
  credentialsTwice?: boolean;
  /** Retries a failed exchange at once, however long Retry-After asked it to wait. */
  ignoreRetryAfter?: boolean;
  /** Retries a refused exchange unchanged, at once, as if a 401 were a passing glitch. */
  retryRefusals?: boolean;
}

export interface Outcome {
  /** Statuses of every request, in order. */
  statuses: number[];
}

/** Less than a tenth of a one-hour token's life: a wait never jumps over a renewal window. */
const WAIT_STEP_SECONDS = 300;

export class MerchantIntegration {
  private token: { value: string; renewAt: number } | undefined;
  private now = 0;
  readonly statuses: number[] = [];

  constructor(private readonly config: IntegrationConfig) {}

  private get mistakes(): Mistakes {
    return this.config.mistakes ?? {};
  }

  private url(path: string): string {
    const apiPath = path.startsWith("/api/v2/") ? `${this.mistakes.apiPrefix ?? "/api/v2"}${path.slice("/api/v2".length)}` : path;
    return this.config.baseUrl + apiPath;
  }

  private async send(path: string, init: RequestInit = {}): Promise<Response> {
    const res = await fetch(this.url(path), init);
    this.statuses.push(res.status);
    return res;
  }

  /**
   * Time passing: the clock moves in steps of at most WAIT_STEP_SECONDS, as real time would pass
   * through each token's renewal window (the last tenth of its hour). One jump over a whole window is
   * what a test does behind a client's back, and the report does not hold it against the client.
   */
  async wait(seconds: number): Promise<void> {
    this.now += seconds;
    for (let left = seconds; ; left -= WAIT_STEP_SECONDS) {
      await this.config.wait(Math.min(left, WAIT_STEP_SECONDS));
      if (left <= WAIT_STEP_SECONDS) break;
    }
  }

  /** One access token (from the token endpoint, or the login), with the time to renew it. */
  private async fetchToken(): Promise<string | undefined> {
    for (let attempt = 0; attempt < 4; attempt++) {
      const res = this.mistakes.useLogin ? await this.loginRequest() : await this.tokenRequest();
      const body = (await res.json().catch(() => ({}))) as { access_token?: string; token?: string; expires_in?: number };
      if (res.ok) {
        const value = body.access_token ?? body.token!;
        const lifetime = body.expires_in ?? 3600;
        this.token = { value, renewAt: this.now + (this.mistakes.renewOnlyOn401 ? Number.POSITIVE_INFINITY : lifetime * 0.9) };
        return value;
      }
      const transient = res.status === 429 || res.status === 503;
      if (!transient && !this.mistakes.retryRefusals) return undefined;
      if (transient) await this.wait(this.mistakes.ignoreRetryAfter ? 0 : Number(res.headers.get("retry-after") ?? 1));
    }
    return undefined;
  }

  private tokenRequest(): Promise<Response> {
    const { apiKey, apiSecret } = this.config;
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (this.mistakes.credentialsTwice) Object.assign(headers, { "x-api-key": apiKey, "x-api-secret": apiSecret });
    return this.send("/api/v2/auth/token", { method: "POST", headers, body: JSON.stringify({ api_key: apiKey, api_secret: apiSecret }) });
  }

  private loginRequest(): Promise<Response> {
    const { email, password } = this.config.login!;
    return this.send("/api/login_check", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: email, password }),
    });
  }

  private async accessToken(): Promise<string | undefined> {
    if (this.token && !this.mistakes.noTokenCache && this.now < this.token.renewAt) return this.token.value;
    return this.fetchToken();
  }

  /** A protected call (payment status), renewing the token once on a 401 as a client should. */
  async paymentStatus(): Promise<number> {
    let res = await this.protectedCall();
    if (res.status === 401 && !this.mistakes.paymentTokenOnProtected) {
      if (!this.mistakes.resendRefusedToken) this.token = undefined;
      res = await this.protectedCall();
    }
    return res.status;
  }

  private async protectedCall(): Promise<Response> {
    const token = this.mistakes.paymentTokenOnProtected ? this.config.paymentToken : await this.accessToken();
    const how = this.mistakes.sendToken ?? "bearer";
    if (how === "query") return this.send(`/api/v2/payment/status?access_token=${encodeURIComponent(token ?? "")}`);
    return this.send("/api/v2/payment/status", how === "none" ? {} : { headers: { authorization: `Bearer ${token}` } });
  }

  /** payment/init with the merchant payment token. */
  async initPayment(): Promise<number> {
    const credential = this.mistakes.accessTokenOnPaymentInit ? await this.accessToken() : this.config.paymentToken;
    const res = await this.send("/api/v2/payment/init", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${credential}` },
      body: JSON.stringify({ amount: 1999, currency: "EUR" }),
    });
    return res.status;
  }

  /** A checkout: a payment initialised, then its status polled every 25 minutes for 75 minutes. */
  async checkout(): Promise<void> {
    await this.initPayment();
    for (let i = 0; i < 4; i++) {
      if (i > 0) await this.wait(25 * 60);
      await this.paymentStatus();
    }
  }
}
