#!/usr/bin/env node
// Creates a merchant-sandbox session and runs a command with its base URL and credentials in the
// environment (MERCHANT_API_BASE_URL, MERCHANT_API_KEY, MERCHANT_API_SECRET, MERCHANT_PAYMENT_TOKEN),
// for places without curl and jq (the node image of docker-compose.yml). The session id is written
// to SESSION_ID_FILE when set, for the report gate that runs after.
//   MERCHANT_SANDBOX_URL=http://sandbox:4010 node scripts/with-session.mjs npm test
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";

const sandbox = (process.env.MERCHANT_SANDBOX_URL ?? "").replace(/\/+$/, "");
const [command, ...args] = process.argv.slice(2);
if (!sandbox || !command) {
  process.stderr.write("usage: MERCHANT_SANDBOX_URL=http://sandbox:4010 [SCENARIO=default] node scripts/with-session.mjs <command> [args...]\n");
  process.exit(2);
}
const res = await fetch(`${sandbox}/__sandbox/sessions`, {
  method: "POST",
  headers: {
    "content-type": "application/json",
    ...(process.env.MERCHANT_SANDBOX_ADMIN_TOKEN ? { "x-admin-token": process.env.MERCHANT_SANDBOX_ADMIN_TOKEN } : {}),
  },
  body: JSON.stringify({ scenario: process.env.SCENARIO || "default" }),
});
if (res.status !== 201) {
  process.stderr.write(`POST ${sandbox}/__sandbox/sessions answered ${res.status}: ${(await res.text()).slice(0, 500)}\n`);
  process.exit(2);
}
const session = await res.json();
if (process.env.SESSION_ID_FILE) writeFileSync(process.env.SESSION_ID_FILE, `${session.id}\n`);
process.stdout.write(`session ${session.id} of scenario ${session.scenario}, base URL ${session.base_url}\n`);
const child = spawn(command, args, {
  stdio: "inherit",
  env: {
    ...process.env,
    MERCHANT_API_BASE_URL: session.base_url,
    MERCHANT_API_KEY: session.merchant.api_key,
    MERCHANT_API_SECRET: session.merchant.api_secret,
    MERCHANT_PAYMENT_TOKEN: session.merchant.payment_token,
  },
});
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
