import fc from "fast-check";
import { afterAll, beforeAll, describe, it } from "vitest";
import { DEFAULT_MERCHANT } from "../../src/core/merchants.js";
import type { RequestLogEntry } from "../../src/app/sandbox.js";
import { postJson, startTestServer, type TestServer } from "../support/server.js";
import { FUZZ_TIMEOUT, assertAnswer, fuzzParams, fuzzSeed, rawExchange, serialize, shown, type RawRequest } from "./support.js";

/**
 * Property (issue 10 §4): a secret planted anywhere in a request's URL, in any encoding, shows in
 * clear in neither the log lines, nor the journal, nor the answer (status line, headers, body),
 * and in no form a reader gets by percent-decoding them (once to three times, '+' as space).
 * Secrets: an access token (JWT), and the api_secret, password and payment token of the default
 * merchant, of a merchant with odd characters in its secrets, and of a session's merchant.
 */

const SEED = fuzzSeed();
const ODD = {
  id: "m_odd",
  apiKey: "odd-api-key",
  apiSecret: "s3cr3t+/=weird~Key",
  paymentToken: "pt.odd_0123456789",
  login: { email: "odd@sandbox.test", password: "correct horse&battery=staple" },
};

let t: TestServer;
const log: RequestLogEntry[] = [];
let secrets: string[];
let jwt: string;

beforeAll(async () => {
  t = await startTestServer({ merchants: [DEFAULT_MERCHANT, ODD], onRequest: (e) => log.push(e) });
  jwt = await t.token();
  const session = await t.call("/__sandbox/sessions", postJson({}));
  if (session.status !== 201) throw new Error(`session: ${session.status} ${session.text}`);
  const sm = session.json.merchant as { api_secret: string; payment_token: string; login: { password: string } };
  secrets = [
    jwt,
    DEFAULT_MERCHANT.apiSecret,
    DEFAULT_MERCHANT.paymentToken,
    DEFAULT_MERCHANT.login!.password,
    ODD.apiSecret,
    ODD.paymentToken,
    ODD.login.password,
    sm.api_secret,
    sm.payment_token,
    sm.login.password,
  ];
});
afterAll(() => t?.close());

/** Percent-encodes every character, hex in random case per escape. */
function encodeAll(text: string, upper: boolean[]): string {
  return [...Buffer.from(text, "utf8")]
    .map((b, i) => {
      const hex = b.toString(16).padStart(2, "0");
      return "%" + (upper[i % upper.length] ? hex.toUpperCase() : hex.toLowerCase());
    })
    .join("");
}

type Encoding = "raw" | "component" | "all" | "twice" | "plus";
/** The secret as a client might put it in a URL. "raw" escapes only the space, which a request line cannot carry. */
function encode(secret: string, how: Encoding, upper: boolean[]): string {
  switch (how) {
    case "raw":
      return secret.replace(/ /g, "%20");
    case "component":
      return encodeURIComponent(secret);
    case "all":
      return encodeAll(secret, upper);
    case "twice":
      return encodeAll(secret, upper).replace(/%/g, "%25");
    case "plus":
      return encodeURIComponent(secret).replace(/%20/g, "+");
  }
}

const PLACES: Array<(s: string) => string> = [
  (s) => `/api/v2/payment/${s}`,
  (s) => `/api/v2/cashout/t=${s}`,
  (s) => `/api/v2/payment/${s};v=1`,
  (s) => `/api/v2/payment/x%23${s}`,
  (s) => `/api/login_check/${s}`,
  (s) => `/nothing/a${s}b`,
  (s) => `/__sandbox/sessions/${s}`,
  (s) => `/api/v2/payment/status?${s}=1`,
  (s) => `/api/v2/payment/status?q=${s}&page=2`,
  (s) => `/api/v2/payment/status?h=Bearer%20${s}`,
  (s) => `/api/v2/payment/status?h=${s},`,
  (s) => `/api/v2/cashout/x?ref=a${s}b`,
  (s) => `/api/v2/auth/token?x=${s}`,
  (s) => `/__sandbox/requests?${s}=1`,
];

/** The text and what a reader gets by decoding it: percent-decoding 1–3 times, '+' as space or not. */
function readings(text: string): string[] {
  const out = new Set([text]);
  for (const plus of [false, true]) {
    let v = text;
    for (let i = 0; i < 3; i++) {
      const next = (plus ? v.replace(/\+/g, " ") : v).replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
        try {
          return decodeURIComponent(run);
        } catch {
          return run;
        }
      });
      out.add(next);
      v = next;
    }
  }
  return [...out];
}

function assertHidden(where: string, text: string, secret: string, request: RawRequest): void {
  // redact() shows at most the first 4 characters: the rest must never be readable.
  const tail = secret.slice(4);
  for (const reading of readings(text)) {
    if (reading.includes(tail)) {
      throw new Error(
        `${where} shows ${JSON.stringify(secret)} after request ${JSON.stringify(request.target)}: ${JSON.stringify(reading.slice(Math.max(0, reading.indexOf(tail) - 80), reading.indexOf(tail) + 80))}`,
      );
    }
  }
}

describe("property: no secret put in a URL reaches the log, the journal or the answer", () => {
  it(
    "any secret, any place in the path or query, any encoding",
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.nat(),
          fc.nat({ max: PLACES.length - 1 }),
          fc.constantFrom<Encoding>("raw", "component", "all", "twice", "plus"),
          fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
          fc.constantFrom("GET", "POST", "DELETE"),
          fc.boolean(),
          async (which, place, how, upper, method, withBearer) => {
            const secret = secrets[which % secrets.length]!;
            const request: RawRequest = shown({
              method,
              target: PLACES[place]!(encode(secret, how, upper)),
              headers: [["Host", "127.0.0.1"], ...(withBearer ? [["Authorization", `Bearer ${jwt}`] as [string, string]] : [])],
              body: new Uint8Array(0),
            });
            const logged = log.length;
            const outcome = await rawExchange(t.server.port, serialize(request));
            const res = assertAnswer(outcome, request);
            const journal = await t.call("/__sandbox/requests?limit=1");
            // The Authorization header carries the token by design; the answer must not echo it back.
            assertHidden("the answer", res.raw + "\n" + res.body.toString("utf8"), secret, request);
            assertHidden("the log", JSON.stringify(log.slice(logged)), secret, request);
            assertHidden("the journal", journal.text, secret, request);
          },
        ),
        fuzzParams(SEED, 150),
      );
    },
    FUZZ_TIMEOUT,
  );
});
