#!/usr/bin/env node
import { ConfigError, configFromEnv } from "./config.js";
import { createLogger } from "./log.js";
import { MerchantClient } from "./merchant-client.js";

/**
 * One run of the integration: a token, a call to the payment group, a hosted payment. Configured
 * from the environment (see config.js); logs JSON lines without a secret.
 */
let config;
try {
  config = configFromEnv();
} catch (e) {
  if (!(e instanceof ConfigError)) throw e;
  process.stderr.write(`${e.message}\n`);
  process.exit(2);
}
const log = createLogger({ secrets: () => [config.apiSecret, config.paymentToken, client.token?.value], file: config.logFile });
const client = new MerchantClient({ ...config, log });

try {
  const status = await client.call("GET", "/api/v2/payment/status");
  log.info("payment API reachable", { operation: status.operation });
  const payment = await client.initPayment({ amount: 1250, currency: "EUR", order_id: `order-${Date.now()}` });
  log.info("send the buyer to the checkout page", { checkoutUrl: payment.checkout_url });
} catch (e) {
  log.error("run failed", { error: e.message });
  process.exitCode = 1;
}
