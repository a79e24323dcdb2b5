import { describe, expect, it } from "vitest";
import { createSession, postJson, serversPerTest } from "../support/server.js";

/**
 * A reset gives a merchant back the secret its scenario declares: that secret is one the sandbox
 * holds again, so it is redacted wherever a request carries it, however many rotations dropped it
 * from the secrets kept in between; the rotated ones, no longer held, are not a merchant's any more.
 */

const start = serversPerTest();

describe("a session reset after more rotations than the sandbox keeps", () => {
  it("redacts the declared secret again in the journal", async () => {
    const t = await start();
    const session = await createSession(t);
    const declared = session.merchant.api_secret;
    for (let i = 0; i < 6; i++) {
      const rotated = await t.call(`/__sandbox/sessions/${session.id}/actions`, postJson({ now: { rotate_secret: true } }));
      expect(rotated.status).toBe(200);
    }
    expect((await t.call(`/__sandbox/sessions/${session.id}/reset`, postJson({}))).status).toBe(200);
    const ok = await t.call(`/s/${session.id}/api/v2/auth/token`, postJson({ api_key: session.merchant.api_key, api_secret: declared }));
    expect(ok.status).toBe(200);
    await t.call(`/s/${session.id}/api/v2/payment/p_1?leak=${declared}`);
    const journal = await t.call(`/__sandbox/requests?session=${session.id}`);
    const text = JSON.stringify(journal.json);
    expect(text).not.toContain(declared);
    expect(journal.json.requests.at(-1).query).toMatch(/^leak=/);
  });
});
