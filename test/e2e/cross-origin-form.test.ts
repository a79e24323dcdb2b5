import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { browserPerFile, E2E_TEST_MS } from "../support/browser.js";
import { postJson } from "../support/server.js";

/**
 * Issue 23 §3 in a real browser: a page on another origin can POST to the sandbox with no-cors
 * fetch (a "simple" request: no preflight, Content-Type text/plain, the response opaque). Before,
 * two such POSTs of token-endpoint-outage's published credentials used up its two scripted 503s.
 * Refused 415 for their form, they must leave both for the real client.
 */

const CREDS = { api_key: "token-endpoint-outage-key", api_secret: "token-endpoint-outage-secret" };

let attacker: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (attacker ? attacker.close(() => resolve()) : resolve()));
  attacker = undefined;
});

/** A page served from its own origin (another port of 127.0.0.1), with nothing in it. */
async function attackerOrigin(): Promise<string> {
  attacker = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>elsewhere</title>"));
  await new Promise<void>((resolve) => attacker!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`;
}

describe("refused request changes nothing: a cross-origin page (headless Chromium)", { timeout: E2E_TEST_MS }, () => {
  const ui = browserPerFile();

  it("refused request changes nothing: two no-cors text/plain exchanges from another origin leave token-endpoint-outage's 503s for the real client", async () => {
    const t = await ui.sandbox({ scenarios: ["token-endpoint-outage"] });
    const page = ui.page();
    // The page's own requests are refused 415, as they must be: Chromium logs that as an error.
    ui.allowConsoleErrors(/status of 415/);
    await page.goto(await attackerOrigin());
    const sent = await page.evaluate(
      async ({ url, body }) => {
        const types: string[] = [];
        for (let i = 0; i < 2; i++) {
          const r = await fetch(`${url}/api/v2/auth/token`, { method: "POST", mode: "no-cors", headers: { "content-type": "text/plain" }, body });
          types.push(r.type);
        }
        return types;
      },
      { url: t.url, body: JSON.stringify(CREDS) },
    );
    // The page sees nothing of the answers (opaque), but the requests were sent.
    expect(sent).toEqual(["opaque", "opaque"]);
    const journal = t.sandbox.journal.list();
    expect(journal.map((e) => [e.method, e.status, e.code, e.merchant, e.unverified, e.rules])).toEqual([
      ["POST", 415, "unsupported_media_type", "m_token_endpoint_outage", true, undefined],
      ["POST", 415, "unsupported_media_type", "m_token_endpoint_outage", true, undefined],
    ]);
    // The real client: the outage's two scripted 503s, then its token.
    const seen: Array<[number, string | null]> = [];
    for (let i = 0; i < 3; i++) {
      const r = await t.call("/api/v2/auth/token", postJson(CREDS));
      seen.push([r.status, r.headers.get("x-sandbox-rule")]);
    }
    expect(seen).toEqual([
      [503, "token-endpoint-outage/outage"],
      [503, "token-endpoint-outage/outage"],
      [200, null],
    ]);
  });
});
