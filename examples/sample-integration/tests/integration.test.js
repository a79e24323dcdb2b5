import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { configFromEnv } from "../src/config.js";
import { createLogger } from "../src/log.js";
import { MerchantApiError, MerchantClient } from "../src/merchant-client.js";
import { line, sandboxFromEnv } from "./sandbox.js";

/**
 * The integration against a merchant-sandbox session (its base URL and credentials in the
 * environment, as the CI recipe sets them). The control plane breaks the session at chosen moments
 * (revoke, expire, rotate the key, a busy token endpoint) and moves its clock, so nothing sleeps;
 * the session's journal shows what the client sent. The tests run in order, on one session.
 */
const config = configFromEnv();
const sandbox = sandboxFromEnv();
const logged = [];

function newClient() {
  let client;
  const log = createLogger({
    secrets: () => [config.apiSecret, config.paymentToken, client?.token?.value],
    write: (l) => logged.push(l),
    file: config.logFile,
  });
  // The client waits out a Retry-After on the session's clock, which is the clock the sandbox judges by.
  client = new MerchantClient({ ...config, log, now: sandbox.now, sleep: (ms) => sandbox.advance(ms / 1000) });
  return client;
}

/** What the session's journal gained while `run` ran, one line per request. */
async function sent(run) {
  const since = await sandbox.lastRequestId();
  await run();
  return (await sandbox.requests(since)).map(line);
}

const TOKEN_OK = "POST /api/v2/auth/token 200";
const CALL_OK = "GET /api/v2/payment/orders 200";
let client;

before(() => {
  client = newClient();
});

test("exchanges the credentials once and reuses the token for every call", async () => {
  const journal = await sent(async () => {
    for (let i = 0; i < 3; i++) assert.equal((await client.call("GET", "/api/v2/payment/orders")).operation, "GET /api/v2/payment/orders");
  });
  assert.deepEqual(journal, [TOKEN_OK, CALL_OK, CALL_OK, CALL_OK]);
});

test("renews the token shortly before it expires, on the session's clock, not after a refusal", async () => {
  // 3600 s tokens, renewed 60 s before the end: 120 s before, it is kept; 30 s before, renewed.
  await sandbox.advance(3600 - 120);
  assert.deepEqual(await sent(() => client.call("GET", "/api/v2/payment/orders")), [CALL_OK]);
  await sandbox.advance(90);
  assert.deepEqual(await sent(() => client.call("GET", "/api/v2/payment/orders")), [TOKEN_OK, CALL_OK]);
});

test("after 401 token_revoked, gets one new token and retries once", async () => {
  await sandbox.actions({ now: { revoke_token: "all" } });
  const journal = await sent(() => client.call("GET", "/api/v2/payment/orders"));
  assert.deepEqual(journal, ["GET /api/v2/payment/orders 401 token_revoked", TOKEN_OK, CALL_OK]);
});

test("after 401 token_expired (an early expiry the client could not foresee), gets one new token and retries once", async () => {
  await sandbox.actions({ next: { endpoint: "payment", times: 1, then: { expire_token: "presented" } } });
  const journal = await sent(() => client.call("GET", "/api/v2/payment/orders"));
  assert.deepEqual(journal, ["GET /api/v2/payment/orders 401 token_expired", TOKEN_OK, CALL_OK]);
});

test("renews once only: a second refusal is an error, and the refused token is never sent again", async () => {
  await sandbox.actions({ next: { endpoint: "payment", times: 2, then: { expire_token: "presented" } } });
  const journal = await sent(async () => {
    await assert.rejects(client.call("GET", "/api/v2/payment/orders"), (e) => e instanceof MerchantApiError && e.code === "token_expired");
    assert.equal((await client.call("GET", "/api/v2/payment/orders")).scope, "payment");
  });
  assert.deepEqual(journal, [
    "GET /api/v2/payment/orders 401 token_expired",
    TOKEN_OK,
    "GET /api/v2/payment/orders 401 token_expired",
    TOKEN_OK,
    CALL_OK,
  ]);
});

test("a 401 for another reason (the signing key rotated) is not retried, and the next call gets a new token", async () => {
  await sandbox.actions({ now: { rotate_signing_key: true } });
  const journal = await sent(async () => {
    await assert.rejects(client.call("GET", "/api/v2/payment/orders"), (e) => e instanceof MerchantApiError && e.code === "token_unknown_kid");
    await client.call("GET", "/api/v2/payment/orders");
  });
  assert.deepEqual(journal, ["GET /api/v2/payment/orders 401 token_unknown_kid", TOKEN_OK, CALL_OK]);
});

test("waits what Retry-After asks when the token endpoint answers 503, then gets its token", async () => {
  await sandbox.actions({ next: { endpoint: "token", times: 1, then: { respond: { status: 503, retry_after: "30s" } } } });
  const fresh = newClient();
  const journal = await sent(() => fresh.call("GET", "/api/v2/payment/orders"));
  assert.deepEqual(journal, ["POST /api/v2/auth/token 503", TOKEN_OK, CALL_OK]);
});

test("starts a hosted payment with the merchant payment token, not the access token", async () => {
  let payment;
  const journal = await sent(async () => {
    payment = await client.initPayment({ amount: 1250, currency: "EUR", order_id: "order-1" });
  });
  assert.deepEqual(journal, ["POST /api/v2/payment/init 201"]);
  assert.equal(payment.status, "created");
  assert.equal(payment.order_id, "order-1");
  assert.match(payment.checkout_url, /^https:\/\/checkout\.sandbox\.test\/pay\/pay_/);
});

test("src/main.js runs the whole flow from the environment and exits 0", async () => {
  const main = fileURLToPath(new URL("../src/main.js", import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, [main], { env: process.env });
  logged.push(stdout);
  const messages = stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l).message);
  assert.deepEqual(messages, [
    "access token issued",
    "merchant API call",
    "payment API reachable",
    "hosted payment created",
    "send the buyer to the checkout page",
  ]);
});

test("logged what it did and never a secret (the sandbox's own scan finds none)", async () => {
  // On everything the tests logged: the CI recipe's scan-logs gate does the same on files.
  const text = logged.join("");
  assert.ok(text.includes("hosted payment created"), "the run logged what it did");
  assert.ok(!text.includes(config.apiSecret) && !text.includes(config.paymentToken), "no credential in the logs");
  assert.deepEqual(await sandbox.scan(text), [], "the sandbox finds no secret of its own in the logs");
});

test("the session's report is clean (the CI recipe's report gate): the renewals these tests forced are not held against the client", async () => {
  assert.deepEqual(await sandbox.report(), []);
});
