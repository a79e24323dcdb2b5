/**
 * The integration's configuration, from the environment, as a twelve-factor app reads it. A missing
 * value stops it with the name of the variable to set, never with the values of the others.
 */
const REQUIRED = {
  baseUrl: "MERCHANT_API_BASE_URL",
  apiKey: "MERCHANT_API_KEY",
  apiSecret: "MERCHANT_API_SECRET",
  paymentToken: "MERCHANT_PAYMENT_TOKEN",
};

export class ConfigError extends Error {}

/** @param {Record<string, string | undefined>} env */
export function configFromEnv(env = process.env) {
  const missing = Object.values(REQUIRED).filter((name) => !env[name]);
  if (missing.length > 0) {
    throw new ConfigError(
      `Set ${missing.join(", ")}: the merchant API's base URL and credentials (against merchant-sandbox, POST /__sandbox/sessions gives all four).`,
    );
  }
  const baseUrl = env.MERCHANT_API_BASE_URL.replace(/\/+$/, "");
  if (!/^https?:\/\/[^/]+/.test(baseUrl)) {
    throw new ConfigError(`MERCHANT_API_BASE_URL must be an http(s) URL such as https://api.merchant.test, got '${baseUrl.slice(0, 100)}'.`);
  }
  return {
    baseUrl,
    apiKey: env.MERCHANT_API_KEY,
    apiSecret: env.MERCHANT_API_SECRET,
    paymentToken: env.MERCHANT_PAYMENT_TOKEN,
    logFile: env.MERCHANT_LOG_FILE || undefined,
  };
}
