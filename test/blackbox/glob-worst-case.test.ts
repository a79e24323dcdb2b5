import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCliServer, type CliProcess } from "../support/cli.js";

/**
 * Issue 10 §1: a scenario rule's path glob was a backtracking regular expression, and one request
 * with a long run of dashes under `/api/v2/payment/*-*-*-*-*` held the sandbox's only thread for
 * minutes: health stopped answering. The server runs as a child process (the real CLI), so on the
 * old code this test's own event loop stays free and it fails by its timeout instead of hanging
 * the runner with the server. No time is asserted: every answer must simply come.
 */

const MERCHANT = { id: "m_glob", api_key: "glob-key", api_secret: "glob-secret", payment_token: "glob-payment-token" };
const SCENARIO = `name: glob-worst-case
description: rules whose path globs made the former matcher backtrack for minutes
merchants:
  - id: ${MERCHANT.id}
    api_key: ${MERCHANT.api_key}
    api_secret: ${MERCHANT.api_secret}
    payment_token: ${MERCHANT.payment_token}
rules:
  - name: uuid-shaped
    match: {merchant: ${MERCHANT.id}, path: "/api/v2/payment/*-*-*-*-*"}
    then: {respond: {status: 418, body: {fired: "{{rule.name}}"}}}
  - name: letters
    match: {merchant: ${MERCHANT.id}, path: "/api/v2/payment/*a*a*a*a*a*a*a*a*b"}
    then: {respond: {status: 418, body: {fired: "{{rule.name}}"}}}
  - name: deep
    match: {merchant: ${MERCHANT.id}, path: "/api/v2/cashout/**/*-*-*/**/x"}
    then: {respond: {status: 418, body: {fired: "{{rule.name}}"}}}
`;

const KB8 = 8 * 1024;
/** Paths no rule matches, each the worst case of one rule for a backtracking matcher. */
const PATHOLOGICAL = [`/api/v2/payment/${"-".repeat(KB8)}/`, `/api/v2/payment/${"a".repeat(KB8)}`, `/api/v2/cashout/${"-".repeat(KB8)}/y`];

let dir: string;
let cli: CliProcess & { url: string };
let token: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "merchant-sandbox-glob-"));
  const file = join(dir, "glob-worst-case.yaml");
  writeFileSync(file, SCENARIO);
  cli = await startCliServer(["--scenario", file, "--log-format", "off"]);
  const res = await fetch(`${cli.url}/api/v2/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ api_key: MERCHANT.api_key, api_secret: MERCHANT.api_secret }),
  });
  expect(res.status).toBe(200);
  token = ((await res.json()) as { access_token: string }).access_token;
});

afterAll(() => {
  // SIGKILL: on the old code the server is stuck in a regular expression and handles no signal.
  cli?.child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

/** What the protected endpoints answer a valid access token of the scenario's merchant. */
function placeholderBody(method: string, path: string, scope: "payment" | "cashout") {
  const claims = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8")) as { jti: string; exp: number };
  return {
    sandbox: true,
    merchant_id: MERCHANT.id,
    operation: `${method} ${path}`,
    scope,
    token_id: claims.jti,
    expires_at: new Date(claims.exp * 1000).toISOString(),
    note: "Authenticated. merchant-sandbox simulates authentication only; payment and cashout business behaviour is not simulated.",
  };
}

async function get(path: string, auth = true): Promise<{ path: string; status: number; rule: string | null; body: unknown }> {
  const res = await fetch(cli.url + path, auth ? { headers: { authorization: `Bearer ${token}` } } : {});
  return { path, status: res.status, rule: res.headers.get("x-sandbox-rule"), body: await res.json() };
}

describe("regression: a path glob froze the whole server (issue 10 §1)", () => {
  it("health keeps answering while 8 KB pathological paths of the scenario's merchant are matched", async () => {
    const attacks = Array.from({ length: 24 }, (_, i) => PATHOLOGICAL[i % PATHOLOGICAL.length]!);
    const [replies, healths] = await Promise.all([
      Promise.all(attacks.map((path) => get(path))),
      Promise.all(Array.from({ length: 12 }, () => get("/__sandbox/health", false))),
    ]);
    expect(replies).toEqual(
      attacks.map((path) => ({
        path,
        status: 200,
        rule: null,
        body: placeholderBody("GET", path, path.startsWith("/api/v2/cashout/") ? "cashout" : "payment"),
      })),
    );
    expect(healths).toEqual(
      healths.map(() => ({
        path: "/__sandbox/health",
        status: 200,
        rule: null,
        body: { status: "ok", version: expect.stringMatching(/^\d+\.\d+\.\d+$/), scenarios: ["glob-worst-case", "default"] },
      })),
    );
  });

  it("the same rules still fire on 8 KB paths they match", async () => {
    const matching: Array<[string, string]> = [
      [`/api/v2/payment/${"-".repeat(KB8)}`, "uuid-shaped"],
      [`/api/v2/payment/${"a".repeat(KB8)}b`, "letters"],
      [`/api/v2/cashout/${"a/".repeat(KB8 / 4)}-${"-".repeat(KB8 / 2)}/b/x`, "deep"],
    ];
    const replies = await Promise.all(matching.map(([path]) => get(path)));
    expect(replies).toEqual(matching.map(([path, rule]) => ({ path, status: 418, rule: `glob-worst-case/${rule}`, body: { fired: rule } })));
  });
});
