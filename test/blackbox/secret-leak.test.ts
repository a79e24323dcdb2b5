import { describe, expect, it } from "vitest";
import { startCliServer } from "../support/cli.js";

/**
 * The rule of the spec and of docs/configuration.md, "Logs and secrets": api_secret, passwords, payment tokens and JWTs never
 * appear in clear in anything the process prints, nor in an error message. Full flows run
 * against the real binary (text and JSON logs); then everything it printed, and every refusal it
 * sent, is searched for every secret and for every token it issued (whole and by signature).
 */

const SECRETS = ["sandbox-api-secret", "sandbox-password", "sandbox-payment-token"];
const WRONG_SECRET = "wrong-secret-that-must-not-leak-0123456789";

describe.each(["text", "json"])("no secret in clear in any output (log format %s)", (format) => {
  it("full flows, refusals included", async () => {
    const cli = await startCliServer(["--log-format", format]);
    const tokens: string[] = [];
    const refusals: string[] = [];
    const call = async (path: string, init: RequestInit = {}) => {
      const res = await fetch(cli.url + path, init);
      const text = await res.text();
      if (res.status >= 400) refusals.push(text + JSON.stringify([...res.headers]));
      return { status: res.status, text };
    };
    const json = { "content-type": "application/json" };
    try {
      const issued = await call("/api/v2/auth/token", {
        method: "POST",
        headers: json,
        body: JSON.stringify({ api_key: "sandbox-api-key", api_secret: "sandbox-api-secret" }),
      });
      const token = JSON.parse(issued.text).access_token as string;
      tokens.push(token);
      const viaHeaders = await call("/api/v2/auth/token", {
        method: "POST",
        headers: { "x-api-key": "sandbox-api-key", "x-api-secret": "sandbox-api-secret" },
      });
      tokens.push(JSON.parse(viaHeaders.text).access_token);
      const login = await call("/api/login_check", {
        method: "POST",
        headers: json,
        body: JSON.stringify({ username: "merchant@sandbox.test", password: "sandbox-password" }),
      });
      tokens.push(JSON.parse(login.text).token);

      const bearer = { authorization: `Bearer ${token}` };
      const statuses = [
        (await call("/api/v2/payment/anything", { headers: bearer })).status,
        (await call("/api/v2/cashout/anything?amount=1", { method: "POST", headers: bearer })).status,
        (await call("/api/v2/payment/init", { method: "POST", headers: { authorization: "Bearer sandbox-payment-token" } })).status,
        // Mistakes that carry secrets to places they should not go:
        (await call("/api/v2/payment/init", { method: "POST", headers: bearer })).status,
        (await call("/api/v2/payment/anything", { headers: { authorization: "Bearer sandbox-payment-token" } })).status,
        (await call(`/api/v2/payment/anything?access_token=${token}`)).status,
        (await call(`/api/v2/payment/anything?api_secret=sandbox-api-secret&password=sandbox-password`, { headers: bearer })).status,
        (await call("/api/v2/payment/anything", { headers: { authorization: `Basic ${token}` } })).status,
        (await call("/api/v2/payment/anything", { headers: { authorization: `Bearer ${token}x` } })).status,
        (await call("/api/v2/auth/token", { method: "POST", headers: json, body: `{"api_key":"sandbox-api-key","api_secret":"${WRONG_SECRET}"}` }))
          .status,
        (await call("/api/v2/auth/token", { method: "POST", headers: json, body: `{"api_key":"sandbox-api-key","api_secret":"${WRONG_SECRET}` }))
          .status,
        (await call("/api/v2/auth/token", { method: "POST", headers: json, body: `{"api_secret":"${WRONG_SECRET}"}` })).status,
        (
          await call("/api/v2/auth/token", {
            method: "POST",
            headers: { ...json, "x-api-secret": WRONG_SECRET },
            body: '{"api_key":"sandbox-api-key","api_secret":"sandbox-api-secret"}',
          })
        ).status,
        (await call("/api/v2/auth/token", { method: "POST", headers: { "content-type": "text/plain" }, body: WRONG_SECRET })).status,
        (await call("/api/login_check", { method: "POST", headers: json, body: `{"username":"merchant@sandbox.test","password":"${WRONG_SECRET}"}` }))
          .status,
        (await call("/api/login_check", { method: "POST", headers: json, body: `{"username":"merchant@sandbox.test","password":"${WRONG_SECRET}` }))
          .status,
        // Regression: a token in the URL path was logged, journaled and echoed in clear.
        (await call(`/nope/${token}`)).status,
      ];
      expect(statuses).toEqual([200, 200, 201, 401, 401, 400, 200, 400, 401, 401, 400, 400, 400, 415, 401, 400, 404]);
      const inPath = await call(`/api/v2/payment/${token}`, { headers: bearer });
      expect(inPath.status).toBe(200);
      expect(inPath.text).not.toContain(token);
      const journal = await call("/__sandbox/requests");
      expect(journal.status).toBe(200);
      for (const t of tokens) expect(journal.text).not.toContain(t.split(".")[2]!);
      await new Promise((r) => setImmediate(r));
    } finally {
      cli.child.kill("SIGTERM");
      await cli.exited;
    }

    const printed = cli.stdout() + cli.stderr();
    // The run was logged at all (a silent process would pass trivially).
    expect(printed.split("\n").filter((l) => l.includes("/api/")).length).toBeGreaterThanOrEqual(20);
    const forbidden = [...SECRETS, WRONG_SECRET, ...tokens, ...tokens.map((t) => t.split(".")[2]!)];
    expect(tokens).toHaveLength(3);
    for (const secret of forbidden) {
      expect(printed, `printed output contains ${secret.slice(0, 12)}...`).not.toContain(secret);
      for (const refusal of refusals) expect(refusal).not.toContain(secret);
    }
    expect(refusals.length).toBe(13);
  });
});
