import { pathToFileURL } from "node:url";
import { createLocalJWKSet, jwtVerify } from "jose";
import { describe, expect, it, vi } from "vitest";
import { generateSigningKey, type SigningKey } from "../../src/core/keys.js";
import { runCli, startCliServer } from "../support/cli.js";
import { DEFAULT_MERCHANT_ID, DEFAULT_PAYMENT_TOKEN, postJson, serversPerTest, T0, type Reply } from "../support/server.js";

/**
 * The start key on its way (createSandbox's pregeneratedKey, which `serve` uses): the server answers
 * what needs no key at once, and what signs or verifies waits for the key. The key is a promise the
 * test settles itself, so nothing here depends on how long a key takes to make.
 */

function keyOnItsWay() {
  let resolve!: (key: SigningKey) => void;
  let reject!: (error: Error) => void;
  const key = new Promise<SigningKey>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { option: { alg: "RS256" as const, key }, resolve, reject };
}

/** A request whose answer the test can look at without waiting for it. */
function watch(reply: Promise<Reply>) {
  const state: { settled: boolean; reply: Promise<Reply> } = { settled: false, reply };
  void reply.finally(() => (state.settled = true));
  return state;
}

const CREDENTIALS = { api_key: "sandbox-api-key", api_secret: "sandbox-api-secret" };
const FAILED = "The sandbox's signing key could not be generated (no entropy today), so it can neither sign nor verify tokens. Restart the sandbox.";

describe("a start key still being made", () => {
  // About key generation: these sandboxes make their keys, not the run's (test/support/keys.ts).
  const start = serversPerTest({ generateKeys: true });

  it("health, a 404 and payment/init answer at once; the token exchange waits for the key, then its token verifies against the JWKS", async () => {
    const key = keyOnItsWay();
    const t = await start({ pregeneratedKey: key.option });
    const exchange = watch(t.call("/api/v2/auth/token", postJson(CREDENTIALS)));
    await vi.waitFor(() => expect(t.server.inFlight).toBe(1));

    const health = await t.call("/__sandbox/health");
    expect(health.status).toBe(200);
    expect(health.json).toEqual({ status: "ok", version: "0.1.0", scenarios: ["default"] });
    const unknown = await t.call("/no/such/path");
    expect(unknown.status).toBe(404);
    expect(unknown.json.code).toBe("not_found");
    const init = await t.call(
      "/api/v2/payment/init",
      postJson({ amount: 1000, currency: "EUR" }, { authorization: `Bearer ${DEFAULT_PAYMENT_TOKEN}` }),
    );
    expect(init.status).toBe(201);
    expect(exchange.settled).toBe(false);
    expect(t.server.inFlight).toBe(1);

    key.resolve(await generateSigningKey("RS256"));
    const answer = await exchange.reply;
    expect(answer.status).toBe(200);
    await expect(t.sandbox.ready).resolves.toBeUndefined();
    const jwks = await t.call("/.well-known/jwks.json");
    expect(jwks.status).toBe(200);
    const { payload, protectedHeader } = await jwtVerify(answer.json.access_token, createLocalJWKSet(jwks.json), {
      issuer: "https://merchant-sandbox.test",
      audience: "merchant-api",
      currentDate: new Date(T0),
    });
    expect(payload.sub).toBe(DEFAULT_MERCHANT_ID);
    expect(protectedHeader).toEqual({ alg: "RS256", kid: jwks.json.keys[0].kid, typ: "at+jwt" });
    expect(jwks.json.keys).toHaveLength(1);
  });

  it("the JWKS, a bearer token's check, the deprecated login and a minted token wait for the key too", async () => {
    const key = keyOnItsWay();
    const t = await start({ pregeneratedKey: key.option });
    // A token of another sandbox: once the key is in, it is refused for its unknown key, not for an
    // algorithm this sandbox would not accept (which is what an empty key ring would say).
    const stranger = await generateSigningKey("RS256");
    const { signCompactJws } = await import("../../src/core/jws.js");
    const foreign = await signCompactJws({ alg: "RS256", kid: stranger.kid, typ: "at+jwt" }, { sub: DEFAULT_MERCHANT_ID }, stranger);
    const jwks = watch(t.call("/.well-known/jwks.json"));
    const bearer = watch(t.call("/api/v2/payment/pay_1", { headers: { authorization: `Bearer ${foreign}` } }));
    const login = watch(t.call("/api/login_check", postJson({ username: "merchant@sandbox.test", password: "sandbox-password" })));
    const minted = watch(t.call("/__sandbox/tokens", postJson({})));
    await vi.waitFor(() => expect(t.server.inFlight).toBe(4));
    expect((await t.call("/__sandbox/health")).status).toBe(200);
    expect([jwks.settled, bearer.settled, login.settled, minted.settled]).toEqual([false, false, false, false]);

    const made = await generateSigningKey("RS256");
    key.resolve(made);
    const keys = await jwks.reply;
    expect(keys.status).toBe(200);
    expect(keys.json.keys.map((k: { kid: string }) => k.kid)).toEqual([made.kid]);
    const refused = await bearer.reply;
    expect(refused.status).toBe(401);
    expect(refused.json.code).toBe("token_unknown_kid");
    expect((await login.reply).status).toBe(200);
    const mint = await minted.reply;
    expect(mint.status).toBe(201);
    const payment = await t.call("/api/v2/payment/pay_1", { headers: { authorization: `Bearer ${mint.json.token}` } });
    expect(payment.status).toBe(200);
  });

  it("a key that cannot be made: ready rejects, what needed the key answers a 500 that says why (nothing hangs), health still answers", async () => {
    const key = keyOnItsWay();
    const internalErrors: unknown[] = [];
    const t = await start({ pregeneratedKey: key.option, onInternalError: (e) => internalErrors.push(e) });
    const exchange = watch(t.call("/api/v2/auth/token", postJson(CREDENTIALS)));
    await vi.waitFor(() => expect(t.server.inFlight).toBe(1));

    key.reject(new Error("no entropy today"));
    await expect(t.sandbox.ready).rejects.toThrow(FAILED);
    const refused = await exchange.reply;
    expect(refused.status).toBe(500);
    expect(refused.json).toMatchObject({ code: "internal_error", detail: FAILED });
    const again = await t.call("/api/v2/auth/token", postJson(CREDENTIALS));
    expect(again.status).toBe(500);
    expect(again.json.detail).toBe(FAILED);
    expect((await t.call("/__sandbox/health")).status).toBe(200);
    expect(internalErrors).toHaveLength(2);
  });

  it("without a key on its way, createSandbox waits for its key as before: ready at once, the key readable", async () => {
    const t = await start();
    await expect(t.sandbox.ready).resolves.toBeUndefined();
    expect(t.sandbox.keys.signing.alg).toBe("RS256");
  });
});

describe("serve", () => {
  it("listens and answers health while its key is being made, and the first exchange gets a token", async () => {
    const cli = await startCliServer(["--log-format", "off"]);
    try {
      const health = await fetch(`${cli.url}/__sandbox/health`);
      expect(health.status).toBe(200);
      const exchange = await fetch(`${cli.url}/api/v2/auth/token`, postJson(CREDENTIALS));
      expect(exchange.status).toBe(200);
    } finally {
      cli.child.kill("SIGTERM");
      await cli.exited;
    }
  });

  it("stops with exit 1 and one line saying why when its signing key cannot be generated", async () => {
    const failing = pathToFileURL(new URL("../support/failing-key-generation.mjs", import.meta.url).pathname).href;
    const cli = runCli(["serve", "--port", "0", "--log-format", "off"], { NODE_OPTIONS: `--import=${failing}` });
    expect(await cli.exited).toBe(1);
    expect(cli.stderr()).toBe(
      "merchant-sandbox: stopping: The sandbox's signing key could not be generated (key generation is broken on this machine (injected by the test)), so it can neither sign nor verify tokens. Restart the sandbox.\n",
    );
  });
});
