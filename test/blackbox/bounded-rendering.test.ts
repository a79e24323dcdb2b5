import { describe, expect, it } from "vitest";
import { MAX_RENDERED_CHARS } from "../../src/core/render-budget.js";
import { createSession, postJson, serversPerTest } from "../support/server.js";

/**
 * Rendering amplifies without bound (attack round four, class 1): a template that prints request
 * values or whole objects over and over is stopped at MAX_RENDERED_CHARS while it renders, and
 * answered 500 `scenario_fault` naming what to fix; before, one request got a 55.6 MB answer.
 */

const start = serversPerTest();
const BOUND = MAX_RENDERED_CHARS.toLocaleString("en");
/** A path of about 15 KB, under the server's header limit. */
const LONG_PATH = `/api/v2/payment/${"p".repeat(15_000)}`;

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
    expect(r.status).toBe(500);
    expect(r.json.code).toBe("scenario_fault");
    expect(r.json.detail).toContain(`its answer renders to more than ${BOUND} characters, the bound of one answer`);
    // The problem's instance is the path, once.
    expect(r.text.length).toBeLessThan(LONG_PATH.length + 2_000);
    // The rule is spent as any fired rule is; the next request is answered as usual.
    expect((await t.call(`/s/${s.id}/api/v2/payment/p_1`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
  });

  it("a profile's protected body printing {{sandbox}} 60,000 times: a 500 scenario_fault naming the profile", async () => {
    const body = { items: Array.from({ length: 60_000 }, () => "{{sandbox}}") };
    const t = await start({ profile: { name: "amplifier", protected: { body } } });
    const token = await t.token();
    const r = await t.call("/api/v2/payment/p_1", { headers: { authorization: `Bearer ${token}` } });
    expect(r.status).toBe(500);
    expect(r.json.code).toBe("scenario_fault");
    expect(r.json.detail).toBe(
      `Response profile 'amplifier': its answer renders to more than ${BOUND} characters, the bound of one answer: its placeholders print request values or whole objects so often that the answer would be that large; print each once, or fewer. Fix its templates.`,
    );
    expect(r.text.length).toBeLessThan(2_000);
  });

  it("a profile's refusal template and its headers are bounded too, and the refusal is still answered", async () => {
    const body = { message: "{{message}}", again: Array.from({ length: 20_000 }, () => "{{path}}").join("") };
    const t = await start({ profile: { name: "loud-refusals", refusal: { body } } });
    const r = await t.call(`${LONG_PATH}?x=1`);
    expect(r.status).toBe(500);
    expect(r.json.code).toBe("scenario_fault");
    expect(r.json.detail).toContain("Response profile 'loud-refusals'");
    const wide = await start({ profile: { name: "loud-headers", headers: { "X-Path": Array.from({ length: 40 }, () => "{{path}}").join("") } } });
    const h = await wide.call(LONG_PATH);
    expect(h.status).toBe(500);
    expect(h.json.detail).toContain("Response profile 'loud-headers'");
    expect(h.headers.get("x-path")).toBeNull();
  });
});
