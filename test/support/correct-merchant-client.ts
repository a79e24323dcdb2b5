/**
 * A correct merchant client, as issue 25 describes one: one cached access token, renewed when 90 %
 * of its `expires_in` has passed; on 401 token_expired, token_revoked or token_unknown_kid it drops
 * the token, gets one new token and retries once; a token refused for good is never sent again;
 * 429/503 wait what Retry-After asks, a dropped connection backs off; what cannot work (a missing
 * scope, a refused payment token, a disabled merchant) is surfaced, not retried. On
 * wrong_api_secret it reads its secret store once (a rotated secret is deployed there) and retries
 * once if the secret changed.
 *
 * Its clock is its own: only its waits move it, and they move the session's clock by as much (no
 * test sleeps). A move the test makes behind its back (a clock jump, an action) it cannot see, as a
 * real client could not.
 */
export interface CorrectClientConfig {
  /** The session's base_url. */
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  paymentToken: string;
  /** Moves the session's clock by this many seconds: the client waiting. */
  wait: (seconds: number) => Promise<void>;
  /** The client's secret store: the api_secret as deployed now. */
  secretStore: () => Promise<string>;
}

/** One request's outcome as the journal would line it up: status and the refusal's code. */
export interface CallOutcome {
  status: number;
  code?: string;
}

/** Renew once and retry once after these: a new token fixes them. */
const RENEW_ONCE = new Set(["token_expired", "token_revoked", "token_unknown_kid"]);
/** The token can never work again after these (the report's expired_token_reused list): drop it. */
const DEAD = new Set([...RENEW_ONCE, "merchant_disabled"]);
/** The payment token can never work again after these: never send it again. */
const PAYMENT_TOKEN_DEAD = new Set(["payment_token_expired", "payment_token_revoked"]);

export class CorrectMerchantClient {
  private token: { value: string; renewAt: number } | undefined;
  /** Seconds on the client's own clock. */
  private clock = 0;
  private lifetime = 3600;
  private apiSecret: string;
  private paymentTokenRefused = false;
  private noCashoutScope = false;
  /** Every answer it got, in order (a dropped connection is status 0). */
  readonly outcomes: CallOutcome[] = [];

  constructor(private readonly config: CorrectClientConfig) {
    this.apiSecret = config.apiSecret;
  }

  /** The refusal codes it met, in order, each once. */
  get codes(): string[] {
    return [...new Set(this.outcomes.flatMap((o) => (o.code ? [o.code] : [])))];
  }

  async wait(seconds: number): Promise<void> {
    this.clock += seconds;
    await this.config.wait(seconds);
  }

  private async send(
    path: string,
    init: RequestInit,
  ): Promise<{ status: number; code?: string; body: Record<string, unknown>; headers: Headers } | undefined> {
    let res: Response;
    try {
      res = await fetch(this.config.baseUrl + path, init);
    } catch {
      this.outcomes.push({ status: 0 });
      return undefined;
    }
    const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    const code = typeof body.code === "string" ? body.code : undefined;
    this.outcomes.push({ status: res.status, ...(code && { code }) });
    return { status: res.status, code, body, headers: res.headers };
  }

  /** The cached token, or a new one; a failure when none can be had now. */
  private async accessToken(): Promise<string | CallOutcome> {
    if (this.token && this.clock < this.token.renewAt) return this.token.value;
    this.token = undefined;
    let reloaded = false;
    for (let attempt = 0; attempt < 5; attempt++) {
      const res = await this.send("/api/v2/auth/token", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ api_key: this.config.apiKey, api_secret: this.apiSecret }),
      });
      if (!res) {
        await this.wait(2 ** attempt); // a dropped connection: back off, then try again
        continue;
      }
      if (res.status === 200) {
        this.lifetime = Number(res.body.expires_in);
        this.token = { value: String(res.body.access_token), renewAt: this.clock + 0.9 * this.lifetime };
        return this.token.value;
      }
      if (res.status === 429 || res.status === 503) {
        const retryAfter = Number(res.headers.get("retry-after"));
        await this.wait(Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : 2 ** attempt);
        continue;
      }
      if (res.code === "wrong_api_secret" && !reloaded) {
        reloaded = true;
        const deployed = await this.config.secretStore();
        if (deployed !== this.apiSecret) {
          this.apiSecret = deployed;
          continue;
        }
      }
      return { status: res.status, code: res.code };
    }
    return { status: 0, code: "gave_up" };
  }

  /** A call with the access token, renewed once and retried once when a new token can fix the refusal. */
  async call(method: string, path: string): Promise<CallOutcome> {
    for (let retried = false; ; retried = true) {
      const token = await this.accessToken();
      if (typeof token !== "string") return token;
      const res = await this.send(path, { method, headers: { authorization: `Bearer ${token}` } });
      if (!res) return { status: 0 };
      if (res.status < 400) return { status: res.status };
      if (res.code !== undefined && DEAD.has(res.code)) this.token = undefined;
      if (res.code !== undefined && RENEW_ONCE.has(res.code) && !retried) continue;
      return { status: res.status, code: res.code };
    }
  }

  /** A hosted payment, with the payment token (never the access token). */
  async initPayment(): Promise<CallOutcome> {
    if (this.paymentTokenRefused) return { status: -1, code: "not_sent" };
    const res = await this.send("/api/v2/payment/init", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${this.config.paymentToken}` },
      body: JSON.stringify({ amount: 1999, currency: "EUR" }),
    });
    if (res?.code !== undefined && PAYMENT_TOKEN_DEAD.has(res.code)) this.paymentTokenRefused = true;
    return res ? { status: res.status, code: res.code } : { status: 0 };
  }

  /** One round of work: a payment call, a cashout (while the merchant has the scope), a hosted payment. */
  async step(): Promise<void> {
    const payment = await this.call("GET", "/api/v2/payment/status");
    if (payment.code === "merchant_disabled") return; // surfaced: nothing else can work
    if (!this.noCashoutScope) {
      const cashout = await this.call("GET", "/api/v2/cashout/status");
      if (cashout.code === "insufficient_scope") this.noCashoutScope = true;
      if (cashout.code === "merchant_disabled") return;
    }
    await this.initPayment();
  }

  /** A working day: `steps` rounds, 40 % of the token's lifetime apart (so it renews on the way). */
  async day(steps = 4): Promise<void> {
    for (let i = 0; i < steps; i++) {
      if (i > 0) await this.wait(Math.round(0.4 * this.lifetime));
      await this.step();
    }
  }
}
