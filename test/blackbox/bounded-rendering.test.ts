import { describe, expect, it } from "vitest";
import { MAX_RENDERED_CHARS } from "../../src/core/render-budget.js";
import { createSession, postJson, problem, type Reply, serversPerTest } from "../support/server.js";

/**
 * Rendering amplifies without bound (attack round four, class 1): a template that prints request
 * values or whole objects over and over is stopped at MAX_RENDERED_CHARS while it renders, and
 * answered 500 `scenario_fault` naming what to fix; before, one request got a 55.6 MB answer.
 */

const start = serversPerTest();
/** A path of about 15 KB, under the server's header limit. */
const LONG_PATH = `/api/v2/payment/${"p".repeat(15_000)}`;
const OVER = `its answer renders to more than ${MAX_RENDERED_CHARS.toLocaleString("en")} characters, the bound of one answer: its placeholders print request values or whole objects so often that the answer would be that large; print each once, or fewer.`;

/** The whole answer: the catalogue's 500, its body word for word, and its headers (`rule`: the X-Sandbox-Rule it names). */
function expectFault(r: Reply, detail: string, instance: string, rule: string | null = null): void {
  expect([r.status, r.json]).toEqual([500, problem(500, "Internal Server Error", "scenario_fault", detail, instance, "server_error")]);
  expect([r.headers.get("content-type"), r.headers.get("cache-control"), r.headers.get("x-sandbox-rule")]).toEqual([
    "application/problem+json",
    "no-store",
    rule,
  ]);
}

describe("rendering amplifies without bound", () => {
  it("a session's next rule printing {{request.path}} 3,700 times: a 500 scenario_fault, not 55 MB", async () => {
    const t = await start();
    const s = await createSession(t);
    const body = { x: Array.from({ length: 3_700 }, () => "{{request.path}}").join("") };
    const set = await t.call(
      `/__sandbox/sessions/${s.id}/actions`,
      postJson({ next: { endpoint: "payment", times: 1, then: { respond: { status: 200, body } } } }),
    );
    expect(set.status).toBe(200);
    const token = (await t.call(`/s/${s.id}/api/v2/auth/token`, postJson({ api_key: s.merchant.api_key, api_secret: s.merchant.api_secret }))).json
      .access_token;
    const r = await t.call(`/s/${s.id}${LONG_PATH}`, { headers: { authorization: `Bearer ${token}` } });
    expectFault(
      r,
      `Scenario 'default', rule 'action-1': ${OVER} Fix the response body in session ${s.id} of 'default'.`,
      LONG_PATH,
      "default/action-1",
    );
    // The rule is spent as any fired rule is; the next request is answered as usual.
    expect((await t.call(`/s/${s.id}/api/v2/payment/p_1`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
  });

  it("a profile's protected body printing {{sandbox}} 60,000 times: a 500 scenario_fault naming the profile", async () => {
    const body = { items: Array.from({ length: 60_000 }, () => "{{sandbox}}") };
    const t = await start({ profile: { name: "amplifier", protected: { body } } });
    const token = await t.token();
    const r = await t.call("/api/v2/payment/p_1", { headers: { authorization: `Bearer ${token}` } });
    expectFault(r, `Response profile 'amplifier': ${OVER} Fix its templates.`, "/api/v2/payment/p_1");
  });

  it("a profile's refusal template and its headers are bounded too, and the refusal is still answered", async () => {
    const body = { message: "{{message}}", again: Array.from({ length: 20_000 }, () => "{{path}}").join("") };
    const t = await start({ profile: { name: "loud-refusals", refusal: { body } } });
    expectFault(await t.call(`${LONG_PATH}?x=1`), `Response profile 'loud-refusals': ${OVER} Fix its templates.`, LONG_PATH);
    const wide = await start({ profile: { name: "loud-headers", headers: { "X-Path": Array.from({ length: 40 }, () => "{{path}}").join("") } } });
    const h = await wide.call(LONG_PATH);
    expectFault(h, `Response profile 'loud-headers': ${OVER} Fix its templates.`, LONG_PATH);
    expect(h.headers.get("x-path")).toBeNull();
  });
});
