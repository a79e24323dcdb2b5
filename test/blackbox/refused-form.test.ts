import { describe, expect, it } from "vitest";
import { postJson, requestWithRepeatedHeaders, serverPerDescribe, serversPerTest, type Reply, type TestServer } from "../support/server.js";

/**
 * Issue 23 §3: a request refused for its form (its method, its media type, its body, a credential
 * sent twice with different values, its size) proves nothing and counts as no call. Before, a token
 * exchange with the right credentials but `Content-Type: text/plain` was answered 415 and fired
 * merchant-disabled's first rule, and two such requests (what a page on any origin can send with
 * no-cors fetch) used up token-endpoint-outage's two 503s before the real client came.
 *
 * Table-driven: every library scenario whose rules fire on the merchant API, times every malformed
 * form its endpoint can be sent in. Before each of the real client's requests comes the malformed
 * one, answered with its exact refusal and no rule; the real client must then see exactly what a
 * session of the same scenario without them sees (same statuses, codes and rules, in order).
 */

const MAX_BODY_BYTES = 64 * 1024;
// Delays (slow-token-endpoint's 3 s) are counted, not slept: the rule's header says it fired.
const server = serverPerDescribe({ sleep: async () => {} });

interface Creds {
  id: string;
  apiKey: string;
  apiSecret: string;
  paymentToken: string;
}

type Kind = "token" | "protected" | "payment-init";

/** The library scenarios whose rules fire on the merchant API, the endpoint they watch, and how many real calls show the script. */
const SCENARIOS: Array<{ scenario: string; kind: Kind; calls: number }> = [
  { scenario: "merchant-disabled", kind: "token", calls: 2 },
  { scenario: "secret-rotated", kind: "token", calls: 3 },
  { scenario: "slow-token-endpoint", kind: "token", calls: 2 },
  { scenario: "token-connection-dropped", kind: "token", calls: 2 },
  { scenario: "token-endpoint-outage", kind: "token", calls: 3 },
  { scenario: "token-rate-limited", kind: "token", calls: 4 },
  { scenario: "token-revoked-mid-session", kind: "protected", calls: 3 },
  { scenario: "token-expires-after-calls", kind: "protected", calls: 5 },
  { scenario: "signing-key-rotation", kind: "protected", calls: 4 },
  { scenario: "signing-key-rotation-overlap", kind: "protected", calls: 3 },
  { scenario: "payment-token-expired", kind: "payment-init", calls: 3 },
];

interface Malformed {
  name: string;
  send: (c: Creds, accessToken: string) => Promise<Reply>;
  /** The exact refusal: status, code, and the Allow header of a 405. */
  refusal: { status: number; code: string; detail: string; allow?: string };
}

/** Through node:http, which sends TRACE and PROPFIND (fetch refuses TRACE); a body's length is given, since node frames no DELETE body itself. */
const raw = (path: string, method: string, headers: Record<string, string>, body?: string) =>
  requestWithRepeatedHeaders(server().url, path, body === undefined ? headers : { ...headers, "content-length": String(Buffer.byteLength(body)) }, {
    method,
    ...(body === undefined ? {} : { body }),
  });

const TOKEN = "/api/v2/auth/token";
const credsJson = (c: Creds) => JSON.stringify({ api_key: c.apiKey, api_secret: c.apiSecret });
const credsHeaders = (c: Creds) => ({ "x-api-key": c.apiKey, "x-api-secret": c.apiSecret });
const tooLarge = "x".repeat(MAX_BODY_BYTES + 1);
const method405 = (method: string, path: string, allowed: string, choices: string) => ({
  status: 405,
  code: "method_not_allowed",
  detail: `${method} is not allowed on ${path}. Use ${choices}.`,
  allow: allowed,
});
const tooLarge413 = {
  status: 413,
  code: "payload_too_large",
  detail: `The request body is larger than ${MAX_BODY_BYTES} bytes. Send only the fields the endpoint expects.`,
};

const TOKEN_FORMS: Malformed[] = [
  {
    name: "Content-Type: text/plain (a no-cors fetch)",
    send: (c) => raw(TOKEN, "POST", { "content-type": "text/plain;charset=UTF-8" }, credsJson(c)),
    refusal: {
      status: 415,
      code: "unsupported_media_type",
      detail:
        "POST /api/v2/auth/token takes a JSON body, but the request says Content-Type: text/plain;charset=UTF-8. Send the body as JSON with the header 'Content-Type: application/json'.",
    },
  },
  {
    name: "no Content-Type",
    send: (c) => raw(TOKEN, "POST", {}, credsJson(c)),
    refusal: {
      status: 415,
      code: "unsupported_media_type",
      detail:
        "POST /api/v2/auth/token takes a JSON body, but the request says Content-Type: (none). Send the body as JSON with the header 'Content-Type: application/json'.",
    },
  },
  {
    name: "a form content type (an HTML form)",
    send: (c) => raw(TOKEN, "POST", { "content-type": "application/x-www-form-urlencoded" }, credsJson(c)),
    refusal: {
      status: 415,
      code: "unsupported_media_type",
      detail:
        'POST /api/v2/auth/token takes a JSON body, but this one is form-encoded (Content-Type: application/x-www-form-urlencoded). Send the fields as a JSON object instead, with the header \'Content-Type: application/json\': {"api_key": "...", "api_secret": "..."}.',
    },
  },
  {
    name: "malformed JSON (credentials in the headers)",
    send: (c) => raw(TOKEN, "POST", { "content-type": "application/json", ...credsHeaders(c) }, '{"api_key": '),
    refusal: {
      status: 400,
      code: "body_malformed_json",
      detail: 'The request body is not valid JSON. Send a JSON object such as {"api_key": "...", "api_secret": "..."}.',
    },
  },
  {
    name: "credential_conflict (the right secret in the body, another in the header)",
    send: (c) => raw(TOKEN, "POST", { "content-type": "application/json", "x-api-secret": "stale-secret" }, credsJson(c)),
    refusal: {
      status: 400,
      code: "credential_conflict",
      detail:
        "api_secret was sent both in the body and in the X-Api-Secret header with different values. Send it one way only, or make both the same.",
    },
  },
  {
    name: "a body over the size limit (credentials in the headers)",
    send: (c) => raw(TOKEN, "POST", { "content-type": "application/json", ...credsHeaders(c) }, tooLarge),
    refusal: tooLarge413,
  },
  ...["PUT", "DELETE"].map((method) => ({
    name: method,
    send: (c: Creds) => raw(TOKEN, method, { "content-type": "application/json" }, credsJson(c)),
    refusal: method405(method, TOKEN, "POST", "POST"),
  })),
  ...["TRACE", "PROPFIND"].map((method) => ({
    name: `${method} (credentials in the headers)`,
    send: (c: Creds) => raw(TOKEN, method, credsHeaders(c)),
    refusal: method405(method, TOKEN, "POST", "POST"),
  })),
];

const PROTECTED_PATH = "/api/v2/payment/orders";
const PROTECTED_METHODS = "GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS";
const PROTECTED_CHOICES = "GET, POST, PUT, PATCH, DELETE, HEAD or OPTIONS";
const PROTECTED_FORMS: Malformed[] = [
  ...["TRACE", "PROPFIND"].map((method) => ({
    name: `${method} with a valid token`,
    send: (_c: Creds, token: string) => raw(PROTECTED_PATH, method, { authorization: `Bearer ${token}` }),
    refusal: method405(method, PROTECTED_PATH, PROTECTED_METHODS, PROTECTED_CHOICES),
  })),
  {
    name: "a body over the size limit with a valid token",
    send: (_c, token) => raw(PROTECTED_PATH, "POST", { authorization: `Bearer ${token}` }, tooLarge),
    refusal: tooLarge413,
  },
];

const INIT = "/api/v2/payment/init";
const INIT_FORMS: Malformed[] = [
  ...["PUT", "DELETE", "TRACE", "PROPFIND"].map((method) => ({
    name: `${method} with the payment token`,
    send: (c: Creds) => raw(INIT, method, { authorization: `Bearer ${c.paymentToken}` }),
    refusal: method405(method, INIT, "POST", "POST"),
  })),
  {
    name: "malformed JSON with the payment token",
    send: (c) => raw(INIT, "POST", { authorization: `Bearer ${c.paymentToken}`, "content-type": "application/json" }, '{"amount": '),
    refusal: {
      status: 400,
      code: "body_malformed_json",
      detail: 'The request body is not valid JSON. Send a JSON object such as {"amount": 1999, "currency": "EUR"}.',
    },
  },
  {
    name: "a body over the size limit with the payment token",
    send: (c) => raw(INIT, "POST", { authorization: `Bearer ${c.paymentToken}`, "content-type": "application/json" }, tooLarge),
    refusal: tooLarge413,
  },
];

const FORMS: Record<Kind, Malformed[]> = { token: TOKEN_FORMS, protected: PROTECTED_FORMS, "payment-init": INIT_FORMS };

/** What the real client saw of one call: status (0: the connection was dropped), code, the rules that fired. */
type Seen = [number, string | undefined, string | null];

async function seen(call: Promise<Response>): Promise<Seen> {
  try {
    const res = await call;
    const body = (await res.json().catch(() => undefined)) as { code?: string } | undefined;
    return [res.status, body?.code, res.headers.get("x-sandbox-rule")];
  } catch {
    return [0, undefined, null];
  }
}

/** The real client's call of each kind, with the form the endpoint takes. */
function realCall(kind: Kind, c: Creds, accessToken: string): Promise<Seen> {
  const url = server().url;
  if (kind === "token") return seen(fetch(url + TOKEN, postJson({ api_key: c.apiKey, api_secret: c.apiSecret })));
  if (kind === "protected") return seen(fetch(url + PROTECTED_PATH, { headers: { authorization: `Bearer ${accessToken}` } }));
  return seen(fetch(url + INIT, postJson({ amount: 1999, currency: "EUR" }, { authorization: `Bearer ${c.paymentToken}` })));
}

async function newSession(t: TestServer, scenario: string): Promise<{ id: string; creds: Creds }> {
  const r = await t.call("/__sandbox/sessions", postJson({ scenario }));
  expect(r.status).toBe(201);
  const m = r.json.merchant;
  return { id: r.json.id, creds: { id: m.id, apiKey: m.api_key, apiSecret: m.api_secret, paymentToken: m.payment_token } };
}

/** The access token the protected scenarios' client starts with (none of their rules watch the exchange). */
async function accessTokenOf(kind: Kind, c: Creds): Promise<string> {
  return kind === "protected" ? server().token(c.apiKey, c.apiSecret) : "";
}

/** The real client alone: what the scenario scripts for it. */
async function unattacked(scenario: string, kind: Kind, calls: number): Promise<Seen[]> {
  const t = server();
  const { id, creds } = await newSession(t, scenario);
  const token = await accessTokenOf(kind, creds);
  const out: Seen[] = [];
  for (let i = 0; i < calls; i++) out.push(await realCall(kind, creds, token));
  expect((await t.call(`/__sandbox/sessions/${id}`, { method: "DELETE" })).status).toBe(204);
  return out;
}

describe("refused request changes nothing: a request refused for its form fires no rule and counts as no call", () => {
  it("the scripts the real client must still see (the baseline each case is compared with)", async () => {
    expect(await unattacked("merchant-disabled", "token", 2)).toEqual([
      [200, undefined, "merchant-disabled/first-exchange"],
      [401, "merchant_disabled", "merchant-disabled/revoke-key"],
    ]);
    expect(await unattacked("token-endpoint-outage", "token", 3)).toEqual([
      [503, "service_unavailable", "token-endpoint-outage/outage"],
      [503, "service_unavailable", "token-endpoint-outage/outage"],
      [200, undefined, null],
    ]);
  });

  for (const { scenario, kind, calls } of SCENARIOS) {
    for (const form of FORMS[kind]) {
      it(`refused request changes nothing: ${scenario} × ${form.name}`, async () => {
        const expected = await unattacked(scenario, kind, calls);
        const t = server();
        const { id, creds } = await newSession(t, scenario);
        const token = await accessTokenOf(kind, creds);
        const got: Seen[] = [];
        for (let i = 0; i < calls; i++) {
          const refused = await form.send(creds, token);
          expect([refused.status, refused.json?.code, refused.json?.detail, refused.headers.get("allow") ?? undefined]).toEqual([
            form.refusal.status,
            form.refusal.code,
            form.refusal.detail,
            form.refusal.allow,
          ]);
          expect(refused.headers.get("x-sandbox-rule")).toBeNull();
          got.push(await realCall(kind, creds, token));
        }
        expect(got).toEqual(expected);
        // Journaled as requests that named the merchant without proving it: no rule, no call of its.
        const journal = (await t.call(`/__sandbox/requests?session=${id}`)).json.requests as Array<Record<string, unknown>>;
        const refusedEntries = journal.filter((e) => e.code === form.refusal.code && e.status === form.refusal.status);
        expect(refusedEntries.map((e) => [e.merchant, e.unverified, e.rules])).toEqual(
          Array.from({ length: calls }, () => [creds.id, true, undefined]),
        );
        expect((await t.call(`/__sandbox/sessions/${id}`, { method: "DELETE" })).status).toBe(204);
      });
    }
  }
});

describe("refused request changes nothing: the copy of api_secret the endpoint ignores proves nothing", () => {
  const start = serversPerTest();

  it("refused request changes nothing: with precedence 'header', a wrong header secret is refused and the right body copy fires no rule", async () => {
    const t = await start({ scenarios: ["merchant-disabled"], credentialPrecedence: "header" });
    const body = { api_key: "merchant-disabled-key", api_secret: "merchant-disabled-secret" };
    for (let i = 0; i < 2; i++) {
      const r = await t.call(TOKEN, postJson(body, { "x-api-secret": "stale-secret" }));
      expect([r.status, r.json.code, r.headers.get("x-sandbox-rule")]).toEqual([401, "wrong_api_secret", null]);
    }
    const first = await t.call(TOKEN, postJson(body));
    expect([first.status, first.headers.get("x-sandbox-rule")]).toEqual([200, "merchant-disabled/first-exchange"]);
  });
});
