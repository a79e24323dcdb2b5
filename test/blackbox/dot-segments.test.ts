import { request as httpRequest } from "node:http";
import { describe, expect, it } from "vitest";
import { serverPerDescribe, toReply, type Reply } from "../support/server.js";

/**
 * Issue 23 §14: routing by prefix took `/api/v2/payment/../cashout/x` (and `%2e%2e`) for a payment
 * call, so a payment-only token got 200 where `/api/v2/cashout/x` gets 403. A path with dot segments
 * is refused before routing, with the path the client meant; nothing is routed, read or counted.
 */

const server = serverPerDescribe({ scenarios: ["cashout-without-scope"] });

/** A GET with the path exactly as written: fetch and a URL string would resolve the dot segments first. */
function rawGet(path: string, headers: Record<string, string>): Promise<Reply> {
  const { hostname, port } = new URL(server().url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname, port, path, method: "GET", headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const pairs: Array<[string, string]> = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i]!, res.rawHeaders[i + 1]!]);
        resolve(toReply(res.statusCode ?? 0, pairs, Buffer.concat(chunks).toString("utf8")));
      });
    });
    req.on("error", reject);
    req.end();
  });
}

describe("no routing around a scope: dot segments are refused before routing", () => {
  it("a payment-only token: /api/v2/cashout/x is 403, and no dotted path reaches a payment route instead", async () => {
    const t = server();
    const token = await t.token("cashout-without-scope-key", "cashout-without-scope-secret");
    const auth = { authorization: `Bearer ${token}` };
    const direct = await rawGet("/api/v2/cashout/x", auth);
    expect([direct.status, direct.json.code]).toEqual([403, "insufficient_scope"]);
    const cases: Array<[string, string]> = [
      ["/api/v2/payment/../cashout/x", "/api/v2/cashout/x"],
      ["/api/v2/payment/%2e%2e/cashout/x", "/api/v2/cashout/x"],
      ["/api/v2/payment/%2E%2E/cashout/x", "/api/v2/cashout/x"],
      ["/api/v2/payment/.%2e/cashout/x", "/api/v2/cashout/x"],
      ["/api/v2/payment/./x", "/api/v2/payment/x"],
      ["/api/v2/payment/x/..", "/api/v2/payment/"],
      ["/s/abc/../../api/v2/cashout/x", "/api/v2/cashout/x"],
    ];
    const before = t.sandbox.journal.list().length;
    for (const [path, meant] of cases) {
      const r = await rawGet(path, auth);
      expect([r.status, r.headers.get("content-type"), r.json]).toEqual([
        400,
        "application/problem+json",
        {
          type: "urn:merchant-sandbox:problem:path_dot_segment",
          title: "Bad Request",
          status: 400,
          detail: `The path ${path} has a '.' or '..' segment (also when sent as %2e), which this sandbox does not resolve. Send the path with its dot segments resolved: ${meant}.`,
          code: "path_dot_segment",
          error: "invalid_request",
          error_description: `The path ${path} has a '.' or '..' segment (also when sent as %2e), which this sandbox does not resolve. Send the path with its dot segments resolved: ${meant}.`,
          instance: path,
        },
      ]);
    }
    // Journaled as sent, refused before any endpoint: no merchant, no token counted, no rule.
    const refused = t.sandbox.journal.list().slice(before);
    expect(refused.map((e) => [e.path, e.endpoint, e.status, e.code, e.merchant, e.tokenId])).toEqual(
      cases.map(([path]) => [path, "unknown", 400, "path_dot_segment", undefined, undefined]),
    );
  });

  it("segments that only contain dots, or dots inside a segment, are paths like any other", async () => {
    const t = server();
    const token = await t.token("cashout-without-scope-key", "cashout-without-scope-secret");
    for (const path of ["/api/v2/payment/.../x", "/api/v2/payment/a..b", "/api/v2/payment/.well-known", "/api/v2/payment/%2e%2e%2e"]) {
      const r = await rawGet(path, { authorization: `Bearer ${token}` });
      expect([path, r.status]).toEqual([path, 200]);
    }
  });
});
