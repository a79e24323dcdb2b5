/**
 * The merchant API client: exchanges the api_key/api_secret for an access token, keeps it, renews it
 * shortly before it expires (and once more after a 401 that says it expired or was revoked), calls
 * the protected groups with it, and starts hosted payments with the merchant payment token, which
 * is a different credential from the access token.
 */

/** 401 codes after which a new access token will work: the old one can never work again. */
const RENEW_ON = new Set(["token_expired", "token_revoked"]);

export class MerchantApiError extends Error {
  /** @param {string} message @param {{ status: number, code?: string, retryAfterSeconds?: number }} details */
  constructor(message, { status, code, retryAfterSeconds }) {
    super(message);
    this.name = "MerchantApiError";
    this.status = status;
    this.code = code;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export class MerchantClient {
  /**
   * @param {object} options
   * @param {string} options.baseUrl e.g. https://api.merchant.test (no trailing slash)
   * @param {string} options.apiKey
   * @param {string} options.apiSecret
   * @param {string} options.paymentToken the merchant payment token, for POST /api/v2/payment/init only
   * @param {ReturnType<import("./log.js").createLogger>} options.log
   * @param {() => number} [options.now] milliseconds; tests move it with the sandbox's clock
   * @param {(ms: number) => Promise<void>} [options.sleep] how to wait out a Retry-After
   * @param {number} [options.renewBeforeSeconds] renew this long before the token expires (at most a
   *   tenth of the token's lifetime: a 60 s token is kept for 54 s, not renewed on every call)
   * @param {number} [options.maxRetryAfterSeconds] a longer Retry-After is an error, not a wait
   */
  constructor({ baseUrl, apiKey, apiSecret, paymentToken, log, now = Date.now, sleep, renewBeforeSeconds = 60, maxRetryAfterSeconds = 60 }) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.credentials = { api_key: apiKey, api_secret: apiSecret };
    this.paymentToken = paymentToken;
    this.log = log;
    this.now = now;
    this.sleep = sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.renewBeforeMs = renewBeforeSeconds * 1000;
    this.maxRetryAfterSeconds = maxRetryAfterSeconds;
    /** @type {{ value: string, expiresAt: number, renewAt: number } | undefined} */
    this.token = undefined;
    /** One exchange at a time: concurrent calls wait for the same token. */
    this.pending = undefined;
  }

  /** The current access token, renewed first when it is about to expire (see renewBeforeSeconds). */
  async accessToken() {
    if (this.token && this.now() < this.token.renewAt) return this.token.value;
    if (this.token) this.log.info("access token expires soon: renewing it", { expiresAt: new Date(this.token.expiresAt).toISOString() });
    this.pending ??= this.exchange().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  /** POST /api/v2/auth/token, waiting out a 429/503 Retry-After (twice at most). */
  async exchange() {
    for (let attempt = 1; ; attempt++) {
      const res = await fetch(`${this.baseUrl}/api/v2/auth/token`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify(this.credentials),
      });
      if (res.ok) {
        const body = await res.json();
        const lifetimeMs = body.expires_in * 1000;
        const expiresAt = this.now() + lifetimeMs;
        this.token = { value: body.access_token, expiresAt, renewAt: expiresAt - Math.min(this.renewBeforeMs, lifetimeMs / 10) };
        this.log.info("access token issued", { expiresInSeconds: body.expires_in });
        return this.token.value;
      }
      const error = await errorOf(res, "POST /api/v2/auth/token");
      const wait = error.retryAfterSeconds;
      if ((res.status === 429 || res.status === 503) && wait !== undefined && wait <= this.maxRetryAfterSeconds && attempt <= 2) {
        this.log.warn("token endpoint busy: waiting as Retry-After asks", { status: res.status, retryAfterSeconds: wait });
        await this.sleep(wait * 1000);
        continue;
      }
      this.log.error("token exchange refused", { status: error.status, code: error.code });
      throw error;
    }
  }

  /**
   * A call to the payment or cashout group with the access token. A 401 that says the token expired
   * or was revoked gets one new token and one retry; any refused token is dropped, never sent again.
   */
  async call(method, path, body) {
    for (let attempt = 1; ; attempt++) {
      const token = await this.accessToken();
      const res = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, accept: "application/json", ...(body ? { "content-type": "application/json" } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      if (res.ok) {
        this.log.info("merchant API call", { method, path, status: res.status });
        return res.status === 204 ? undefined : res.json();
      }
      const error = await errorOf(res, `${method} ${path}`);
      if (res.status === 401) {
        // Whatever the reason, this token was refused: sending it again can only fail again.
        if (this.token?.value === token) this.token = undefined;
        if (RENEW_ON.has(error.code) && attempt === 1) {
          this.log.warn("access token refused: renewing it once", { method, path, code: error.code });
          continue;
        }
      }
      this.log.error("merchant API call refused", { method, path, status: error.status, code: error.code });
      throw error;
    }
  }

  /**
   * POST /api/v2/payment/init: a hosted payment, authorised by the merchant payment token (NOT the
   * access token). Answers the payment id and the checkout URL to send the buyer to.
   */
  async initPayment(order) {
    const res = await fetch(`${this.baseUrl}/api/v2/payment/init`, {
      method: "POST",
      headers: { authorization: `Bearer ${this.paymentToken}`, "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(order),
    });
    if (!res.ok) {
      const error = await errorOf(res, "POST /api/v2/payment/init");
      this.log.error("hosted payment refused", { status: error.status, code: error.code });
      throw error;
    }
    const payment = await res.json();
    this.log.info("hosted payment created", { paymentId: payment.payment_id, orderId: order.order_id });
    return payment;
  }
}

/** The refusal as an error: status, the API's code and Retry-After; never the request's credentials. */
async function errorOf(res, what) {
  const text = await res.text();
  let body = {};
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON (a proxy's error page): the status says enough.
  }
  const retryAfter = Number(res.headers.get("retry-after"));
  const code = typeof body.code === "string" ? body.code : undefined;
  return new MerchantApiError(`${what} answered ${res.status}${code ? ` ${code}` : ""}`, {
    status: res.status,
    code,
    retryAfterSeconds: Number.isFinite(retryAfter) && res.headers.has("retry-after") ? retryAfter : undefined,
  });
}
