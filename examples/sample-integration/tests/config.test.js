import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError, configFromEnv } from "../src/config.js";

const ENV = {
  MERCHANT_API_BASE_URL: "https://api.merchant.test/",
  MERCHANT_API_KEY: "key",
  MERCHANT_API_SECRET: "secret-value",
  MERCHANT_PAYMENT_TOKEN: "payment-token-value",
};

test("reads the base URL (without its trailing slash) and the credentials from the environment", () => {
  assert.deepEqual(configFromEnv(ENV), {
    baseUrl: "https://api.merchant.test",
    apiKey: "key",
    apiSecret: "secret-value",
    paymentToken: "payment-token-value",
    logFile: undefined,
  });
});

test("names every missing variable, and prints none of the values it has", () => {
  const { MERCHANT_API_SECRET: _, MERCHANT_PAYMENT_TOKEN: __, ...partial } = ENV;
  assert.throws(
    () => configFromEnv(partial),
    (e) => {
      assert.ok(e instanceof ConfigError);
      assert.equal(
        e.message,
        "Set MERCHANT_API_SECRET, MERCHANT_PAYMENT_TOKEN: the merchant API's base URL and credentials (against merchant-sandbox, POST /__sandbox/sessions gives all four).",
      );
      return true;
    },
  );
});

test("refuses a base URL that is not an http(s) URL", () => {
  assert.throws(() => configFromEnv({ ...ENV, MERCHANT_API_BASE_URL: "api.merchant.test" }), {
    message: "MERCHANT_API_BASE_URL must be an http(s) URL such as https://api.merchant.test, got 'api.merchant.test'.",
  });
});
