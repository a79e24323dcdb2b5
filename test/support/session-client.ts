import { expect } from "vitest";

/**
 * A small scripted merchant client, as the app under test would be: it talks to a session's
 * `base_url` (read from the QA page) over real HTTP, with the credentials the page showed. Each call
 * gives status and the parsed body for exact assertions; it keeps no token of its own, so a test
 * decides when the client renews (and when it misbehaves on purpose).
 */
export interface CallResult {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: the answer's body, asserted member by member
  json: any;
}

export class SessionClient {
  constructor(
    readonly baseUrl: string,
    readonly apiKey: string,
    readonly apiSecret: string,
  ) {}

  /** POST {base_url}/api/v2/auth/token with the JSON credentials; the access token, or the test fails. */
  async token(): Promise<string> {
    const r = await this.send("/api/v2/auth/token", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ api_key: this.apiKey, api_secret: this.apiSecret }),
    });
    // A refusal's body says why (problem+json, no secret); a 200's holds the token, never printed.
    expect(r.status, r.status === 200 ? "" : JSON.stringify(r.json)).toBe(200);
    expect(typeof r.json.access_token).toBe("string");
    return r.json.access_token as string;
  }

  /** GET {base_url}/api/v2/payment/status with the bearer token. */
  paymentStatus(accessToken: string): Promise<CallResult> {
    return this.send("/api/v2/payment/status", { headers: { authorization: `Bearer ${accessToken}` } });
  }

  private async send(path: string, init: RequestInit): Promise<CallResult> {
    const res = await fetch(this.baseUrl + path, { redirect: "manual", ...init });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, json };
  }
}
