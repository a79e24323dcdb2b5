import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, test } from "node:test";
import { MerchantClient } from "../src/merchant-client.js";

/**
 * When the client renews, for tokens of any lifetime: against a stub token endpoint that counts
 * exchanges and answers `expires_in` as the test sets it, with the client's clock moved by hand.
 */
let server;
let baseUrl;
let exchanges = 0;
let expiresIn = 60;

before(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      exchanges++;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ access_token: `token-${exchanges}`, token_type: "Bearer", expires_in: expiresIn }));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${server.address().port}`;
});

after(() => new Promise((resolve) => server.close(resolve)));

function clientAt(clock) {
  const log = { info() {}, warn() {}, error() {} };
  return new MerchantClient({ baseUrl, apiKey: "k", apiSecret: "s", paymentToken: "p", log, now: () => clock.ms });
}

test("a 60 s token is kept for 54 s (a tenth of its life before the end), not renewed on every call", async () => {
  expiresIn = 60;
  exchanges = 0;
  const clock = { ms: 0 };
  const client = clientAt(clock);
  for (let s = 0; s < 54; s += 9) {
    clock.ms = s * 1000;
    assert.equal(await client.accessToken(), "token-1");
  }
  clock.ms = 54_000;
  assert.equal(await client.accessToken(), "token-2");
  assert.equal(exchanges, 2);
});

test("a 3600 s token is renewed 60 s before it expires", async () => {
  expiresIn = 3600;
  exchanges = 0;
  const clock = { ms: 0 };
  const client = clientAt(clock);
  assert.equal(await client.accessToken(), "token-1");
  clock.ms = 3539_000;
  assert.equal(await client.accessToken(), "token-1");
  clock.ms = 3540_000;
  assert.equal(await client.accessToken(), "token-2");
});
