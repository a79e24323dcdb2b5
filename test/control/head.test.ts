import { beforeAll, describe, expect, it } from "vitest";
import { postJson, problem, rawRequest, serverPerDescribe, type TestServer } from "../support/server.js";
import { expectProblem } from "../support/expect.js";

/**
 * HEAD on the control plane: every route that takes GET answers HEAD with GET's status and
 * headers (content-length of the GET body included) and no body (RFC 9110 §9.3.2), over a raw
 * socket so the test sees the bytes node writes, not what a client makes of them.
 */

/** The headers that differ between two answers for reasons other than the method. */
function comparable(headers: Headers): Record<string, string> {
  const { date: _date, ...rest } = Object.fromEntries(headers);
  return rest;
}

describe("HEAD on the control plane", () => {
  const server = serverPerDescribe();
  let t: TestServer;
  let sessionId: string;

  beforeAll(async () => {
    t = server();
    const session = await t.call("/__sandbox/sessions", postJson({}));
    expect(session.status).toBe(201);
    sessionId = session.json.id;
    // Something in the journal, so /requests and /report have a body worth measuring.
    expect((await t.call("/api/v2/payment/p_1")).status).toBe(401);
  });

  const routes = (): string[] => [
    "/__sandbox/health",
    "/__sandbox/openapi.json",
    "/__sandbox/sessions",
    `/__sandbox/sessions/${sessionId}`,
    `/__sandbox/sessions/${sessionId}/clock`,
    `/__sandbox/sessions/${sessionId}/report`,
    "/__sandbox/clock",
    "/__sandbox/requests",
    "/__sandbox/report",
  ];

  it("regression: HEAD answered 405 on control-plane GET routes; now GET's status and headers, no body", async () => {
    for (const path of routes()) {
      const get = await rawRequest(t, "GET", path);
      const head = await rawRequest(t, "HEAD", path);
      expect(get.status, path).toBe(200);
      expect({ path, status: head.status, headers: comparable(head.headers), rest: head.text }).toEqual({
        path,
        status: 200,
        headers: comparable(get.headers),
        rest: "",
      });
      expect(Number(head.headers.get("content-length")), path).toBe(Buffer.byteLength(get.text));
      expect(Buffer.byteLength(get.text), path).toBeGreaterThan(0);
    }
  });

  it("HEAD of a refusal is the refusal's status and headers, without its body (an unknown session: 404)", async () => {
    const path = "/__sandbox/sessions/ses_0000000000000000";
    const get = await rawRequest(t, "GET", path);
    const head = await rawRequest(t, "HEAD", path);
    expect(get.status).toBe(404);
    expect({ status: head.status, headers: comparable(head.headers), rest: head.text }).toEqual({
      status: 404,
      headers: comparable(get.headers),
      rest: "",
    });
  });

  it("HEAD changes nothing: it runs GET's read, never the route's POST or DELETE", async () => {
    const before = (await t.call("/__sandbox/clock")).json;
    expect((await rawRequest(t, "HEAD", "/__sandbox/clock")).status).toBe(200);
    expect((await rawRequest(t, "HEAD", `/__sandbox/sessions/${sessionId}`)).status).toBe(200);
    expect((await t.call("/__sandbox/clock")).json).toEqual(before);
    expect((await t.call(`/__sandbox/sessions/${sessionId}`)).status).toBe(200);
  });

  it.each([
    ["/__sandbox/sessions", "PUT", "GET, HEAD, POST", "Use GET, HEAD or POST."],
    ["/__sandbox/clock", "DELETE", "GET, HEAD, POST", "Use GET, HEAD or POST."],
    ["/__sandbox/requests", "POST", "GET, HEAD", "Use GET or HEAD."],
    ["/__sandbox/reset", "HEAD", "POST", "Use POST."],
    ["/__sandbox/tokens", "GET", "POST", "Use POST."],
  ])("%s %s → 405 whose Allow lists HEAD wherever GET is allowed (%s)", async (path, method, allow, use) => {
    const r = await t.call(path, { method });
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe(allow);
    if (method !== "HEAD") {
      expectProblem(
        r,
        problem(405, "Method Not Allowed", "method_not_allowed", `${method} is not allowed on ${path}. ${use}`, path, "method_not_allowed"),
      );
    }
  });

  it(`the session route's 405 lists GET, HEAD and DELETE`, async () => {
    const r = await t.call(`/__sandbox/sessions/${sessionId}`, { method: "PATCH" });
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe("GET, HEAD, DELETE");
  });
});
