import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { validateSessionActions } from "../../src/scenarios/session-actions.js";
import { createSession, postJson, serversPerTest } from "../support/server.js";

/**
 * Forcing an expiry, as the docs tell a newcomer to (issue 25, point 5): the README's session
 * section, the control plane's page and the scenarios' page recommend the session action
 * `next … expire_token: presented` over a clock jump, with what a client that checks `iat` itself
 * (PyJWT) raises after a jump. The body they show is taken from each page and sent as it is: the
 * actions endpoint takes it, the token presented next gets 401 token_expired, and no clock moved.
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PAGES = ["README.md", "docs/control-plane.md", "docs/scenarios.md"];
/** PyJWT's words, from `_validate_iat` in jwt/api_jwt.py (2.6.0 and later). */
const PYJWT_IAT = "ImmatureSignatureError: The token is not yet valid (iat)";

/** Every `-d '{…}'` body of a curl command the page shows that sets `expire_token: presented`. */
function expiryBodies(page: string): unknown[] {
  const text = readFileSync(join(ROOT, page), "utf8");
  return [...text.matchAll(/-d '(\{[^']*"expire_token": "presented"[^']*\})'/g)].map((m) => JSON.parse(m[1]!));
}

describe("docs: forcing an expiry", () => {
  it.each(
    PAGES,
  )("%s recommends next … expire_token: presented, as a body the actions endpoint takes, and says what PyJWT raises after a clock jump", (page) => {
    const bodies = expiryBodies(page);
    expect(bodies.length, `a curl … -d '{"next": … "expire_token": "presented" …}' in ${page}`).toBeGreaterThan(0);
    for (const body of bodies) {
      expect(validateSessionActions(body)).toEqual({ ok: true, value: body });
      expect(body).toMatchObject({ next: { times: 1, then: { expire_token: "presented" } } });
    }
    expect(readFileSync(join(ROOT, page), "utf8").replace(/\s+/g, " ")).toContain(PYJWT_IAT);
  });

  const server = serversPerTest();

  it.each(
    PAGES,
  )("the body %s shows expires the token presented next (401 token_expired), and the renewed token is stamped on the same clock", async (page) => {
    const t = await server();
    const session = await createSession(t);
    const exchange = async () => {
      const r = await t.call(
        `/s/${session.id}/api/v2/auth/token`,
        postJson({ api_key: session.merchant.api_key, api_secret: session.merchant.api_secret }),
      );
      expect(r.status, r.text).toBe(200);
      return r.json.access_token as string;
    };
    const pay = (token: string) => t.call(`/s/${session.id}/api/v2/payment/status`, { headers: { authorization: `Bearer ${token}` } });
    const first = await exchange();
    expect((await pay(first)).status).toBe(200);

    const acted = await t.call(`/__sandbox/sessions/${session.id}/actions`, postJson(expiryBodies(page)[0]));
    expect(acted.status, acted.text).toBe(200);
    const expired = await pay(first);
    expect([expired.status, expired.json.code]).toEqual([401, "token_expired"]);

    const renewed = await exchange();
    expect((await pay(renewed)).status).toBe(200);
    // No clock moved: a client that checks iat against its own time sees nothing issued in the future.
    expect(decodeJwt(renewed).iat).toBe(decodeJwt(first).iat);
  });
});
