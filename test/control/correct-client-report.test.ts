import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { Finding } from "../../src/control/report.js";
import { sessionActionsJsonSchema } from "../../src/scenarios/session-actions.js";
import { CorrectMerchantClient } from "../support/correct-merchant-client.js";
import { postJson, serverPerDescribe, serversPerTest, type TestServer } from "../support/server.js";

/**
 * Issue 25, point 1: findings judge only what the client could have done. A correct merchant client
 * (test/support/correct-merchant-client.ts) runs through every library scenario, and through every
 * way a test breaks a session behind its back (each `now` action, the `next` rules that expire or
 * revoke, clock jumps on the session's clock and the sandbox's), each alone and all in one session:
 * its session's report is empty, not one warning. A renewal the sandbox or the test forced is not a
 * missed proactive renewal, nor a token per call. Clocks are moved, never slept on; the slow
 * endpoint's delay is counted, not waited.
 */

const LIBRARY = fileURLToPath(new URL("../../scenarios/", import.meta.url));
const LIBRARY_NAMES = readdirSync(LIBRARY)
  .filter((f) => f.endsWith(".yaml"))
  .map((f) => f.slice(0, -".yaml".length))
  .sort();

const noSleep = { sleep: async () => {} };
const server = serverPerDescribe(noSleep);
const ownServer = serversPerTest();

interface Run {
  id: string;
  client: CorrectMerchantClient;
}

/** A session of the scenario and the correct client configured with its base_url and credentials. */
async function correctClientIn(t: TestServer, scenario = "default"): Promise<Run> {
  const created = await t.call("/__sandbox/sessions", postJson({ scenario }));
  expect(created.status).toBe(201);
  const { id, base_url: baseUrl, merchant } = created.json;
  const client = new CorrectMerchantClient({
    baseUrl,
    apiKey: merchant.api_key,
    apiSecret: merchant.api_secret,
    paymentToken: merchant.payment_token,
    wait: async (seconds) => expect((await t.call(`/__sandbox/sessions/${id}/clock`, postJson({ advance: `${seconds}s` }))).status).toBe(200),
    secretStore: async () => (await t.call(`/__sandbox/sessions/${id}`)).json.merchant.api_secret,
  });
  return { id, client };
}

async function report(t: TestServer, id: string): Promise<Finding[]> {
  const r = await t.call(`/__sandbox/sessions/${id}/report`);
  expect(r.status).toBe(200);
  return r.json.findings;
}

/** What the test does to the session behind the client's back, and the refusals that makes the client meet. */
interface Break {
  name: string;
  run: (t: TestServer, id: string) => Promise<void>;
  /** After the client's next working day (a disabled merchant enabled again). */
  then?: (t: TestServer, id: string) => Promise<void>;
  codes: string[];
  /** Moves the sandbox clock, which every session follows: its own server. */
  sandboxWide?: true;
}

async function ok(reply: Promise<{ status: number; text: string }>): Promise<void> {
  const r = await reply;
  expect(r.status, r.text).toBe(200);
}
const actions = (body: unknown) => (t: TestServer, id: string) => ok(t.call(`/__sandbox/sessions/${id}/actions`, postJson(body)));
const sessionClock = (body: unknown) => (t: TestServer, id: string) => ok(t.call(`/__sandbox/sessions/${id}/clock`, postJson(body)));

/** Every `now` action (checked below against the schema's list), each with what a client meets after it. */
const NOW_BREAKS: Break[] = [
  { name: "now revoke_token: all", run: actions({ now: { revoke_token: "all" } }), codes: ["token_revoked"] },
  { name: "now expire_token: all", run: actions({ now: { expire_token: "all" } }), codes: ["token_expired"] },
  { name: "now rotate_signing_key: true", run: actions({ now: { rotate_signing_key: true } }), codes: ["token_unknown_kid"] },
  { name: "now rotate_signing_key: keep_old", run: actions({ now: { rotate_signing_key: { keep_old: true } } }), codes: [] },
  {
    name: "now disable_merchant (then enable_merchant)",
    run: actions({ now: { disable_merchant: true } }),
    then: actions({ now: { enable_merchant: true } }),
    codes: ["merchant_disabled"],
  },
  { name: "now enable_merchant", run: actions({ now: { enable_merchant: true } }), codes: [] },
  // The new secret is deployed to the client's secret store; its next exchange meets it once.
  { name: "now rotate_secret: true", run: actions({ now: { rotate_secret: true } }), codes: ["wrong_api_secret"] },
  { name: "now rotate_secret: a value", run: actions({ now: { rotate_secret: "rotated-by-the-test-0123456789" } }), codes: ["wrong_api_secret"] },
  { name: "now expire_payment_token", run: actions({ now: { expire_payment_token: true } }), codes: ["payment_token_expired"] },
  { name: "now revoke_payment_token", run: actions({ now: { revoke_payment_token: true } }), codes: ["payment_token_revoked"] },
  { name: "now login_gone", run: actions({ now: { login_gone: true } }), codes: [] },
  { name: "now set_state", run: actions({ now: { set_state: "broken-by-the-test" } }), codes: [] },
  { name: "now advance_clock: 61m", run: actions({ now: { advance_clock: "61m" } }), codes: ["token_expired"] },
];

/** Clock jumps the client cannot see, and the `next` rules that break its next call. */
const OTHER_BREAKS: Break[] = [
  { name: "session clock +61m", run: sessionClock({ advance: "61m" }), codes: ["token_expired"] },
  { name: "session clock +5m (no token expires)", run: sessionClock({ advance: "5m" }), codes: [] },
  { name: "session clock +25h", run: sessionClock({ advance: "25h" }), codes: ["token_expired"] },
  {
    name: "session clock set 2 h ahead",
    run: async (t, id) => {
      const now = Date.parse((await t.call(`/__sandbox/sessions/${id}/clock`)).json.now);
      await sessionClock({ set: new Date(now + 2 * 3600_000).toISOString() })(t, id);
    },
    codes: ["token_expired"],
  },
  {
    name: "sandbox clock +61m",
    run: (t) => ok(t.call("/__sandbox/clock", postJson({ advance: "61m" }))),
    codes: ["token_expired"],
    sandboxWide: true,
  },
  {
    name: "next expire_token: presented",
    run: actions({ next: { endpoint: "payment", times: 1, then: { expire_token: "presented" } } }),
    codes: ["token_expired"],
  },
  {
    name: "next revoke_token: presented",
    run: actions({ next: { endpoint: "payment", times: 1, then: { revoke_token: "presented" } } }),
    codes: ["token_revoked"],
  },
  {
    name: "next advance_clock: 61m on a payment call",
    run: actions({ next: { endpoint: "payment", times: 1, then: { advance_clock: "61m" } } }),
    codes: ["token_expired"],
  },
  {
    name: "an outage of the token endpoint, then an expiry",
    run: async (t, id) => {
      await actions({ next: { endpoint: "token", times: 1, then: { respond: { status: 503, retry_after: "30s" } } } })(t, id);
      await actions({ now: { expire_token: "all" } })(t, id);
    },
    codes: ["token_expired", "service_unavailable"],
  },
];

const EVERY_BREAK = [...NOW_BREAKS, ...OTHER_BREAKS];

/** The refusals each library scenario makes the correct client meet in a working day. */
const SCENARIO_CODES: Record<string, string[]> = {
  "cashout-without-scope": ["insufficient_scope"],
  default: [],
  "login-gone": [],
  "merchant-disabled": ["merchant_disabled"],
  "payment-token-expired": ["payment_token_expired"],
  "secret-rotated": ["wrong_api_secret"],
  "server-clock-ahead": [],
  "server-clock-behind": [],
  "short-lived-tokens": [],
  "signing-key-rotation": ["token_unknown_kid"],
  "signing-key-rotation-overlap": [],
  "slow-token-endpoint": [],
  "token-connection-dropped": [], // its first exchange's connection dropped: status 0, no code
  "token-endpoint-outage": ["service_unavailable"],
  "token-expires-after-calls": ["token_expired"],
  "token-rate-limited": ["rate_limited"],
  "token-revoked-mid-session": ["token_revoked"],
};

describe("a correct client's report is empty in every library scenario", () => {
  it("the scenarios listed are the library's files", async () => {
    const listed = await server().call("/__sandbox/scenarios");
    expect(listed.status).toBe(200);
    const names = (listed.json.scenarios as Array<{ name: string }>).map((s) => s.name).sort();
    expect(names).toEqual(LIBRARY_NAMES);
  });

  for (const scenario of LIBRARY_NAMES) {
    it(`${scenario}: no finding`, async () => {
      const t = server();
      const { id, client } = await correctClientIn(t, scenario);
      await client.day();
      // The scenario did break something (a new library scenario needs its line in SCENARIO_CODES).
      expect(client.codes).toEqual(SCENARIO_CODES[scenario]);
      expect(await report(t, id)).toEqual([]);
    });
  }
});

describe("a correct client's report is empty whatever the test breaks behind its back", () => {
  it("the cases cover every action `now` takes", () => {
    const now = (sessionActionsJsonSchema() as { properties: { now: { properties: Record<string, unknown> } } }).properties.now.properties;
    const used = new Set(NOW_BREAKS.map((b) => b.name.split(" ")[1]!.replace(/:$/, "")));
    expect([...used].sort()).toEqual(Object.keys(now).sort());
  });

  for (const b of EVERY_BREAK) {
    it(`${b.name}, alone: no finding`, async () => {
      const t = b.sandboxWide ? await ownServer(noSleep) : server();
      const { id, client } = await correctClientIn(t);
      await client.day();
      expect(client.codes).toEqual([]);
      await b.run(t, id);
      await client.day();
      await b.then?.(t, id);
      await client.day();
      expect(client.codes.sort()).toEqual([...b.codes].sort());
      expect(await report(t, id)).toEqual([]);
    });
  }

  it("every one of them, one after the other in one session: no finding", async () => {
    const t = await ownServer(noSleep);
    const { id, client } = await correctClientIn(t);
    await client.day();
    // The payment token cannot come back: those two go last.
    const last = (b: Break) => (b.name.includes("payment_token") ? 1 : 0);
    for (const b of [...EVERY_BREAK].sort((x, y) => last(x) - last(y))) {
      await b.run(t, id);
      await client.day(2);
      if (b.then) {
        await b.then(t, id);
        await client.day(2);
      }
    }
    // Its payment token refused as expired, the client never sends it again: it never sees it revoked.
    const met = new Set(EVERY_BREAK.flatMap((b) => b.codes));
    met.delete("payment_token_revoked");
    expect(client.codes.sort()).toEqual([...met].sort());
    expect(await report(t, id)).toEqual([]);
  });
});
