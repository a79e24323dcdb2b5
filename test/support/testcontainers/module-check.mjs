// What merchant-sandbox/testcontainers does beyond the docs' example, run by
// test/package/testcontainers.test.ts with `node --test` against a real engine (DOCKER_HOST and
// the Testcontainers variables in the environment; MERCHANT_SANDBOX_IMAGE the image it built;
// PROFILE_FILE, SCENARIO_FILE and BAD_SCENARIO_FILE files of this machine). Exact statuses, headers and bodies.
import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, test } from "node:test";
import { MerchantSandboxContainer, SANDBOX_PORT } from "merchant-sandbox/testcontainers";

const ADMIN_TOKEN = "module-check-admin-token-0123456789";
let sandbox;

before(async () => {
  sandbox = await new MerchantSandboxContainer(process.env.MERCHANT_SANDBOX_IMAGE)
    .withScenario(process.env.SCENARIO_FILE)
    .withProfile(process.env.PROFILE_FILE)
    .withAdminToken(ADMIN_TOKEN)
    .start();
});

after(() => sandbox?.stop());

/** GET /containers/{id}/json from the engine itself, over its unix socket. */
function inspect(id) {
  const socketPath = process.env.DOCKER_HOST.replace(/^unix:\/\//, "");
  return new Promise((resolve, reject) => {
    request({ socketPath, path: `/containers/${id}/json` }, (res) => {
      let text = "";
      res.on("data", (chunk) => (text += chunk));
      res.on("end", () => resolve(JSON.parse(text)));
    })
      .on("error", reject)
      .end();
  });
}

test("the port is published on 127.0.0.1 only, and getBaseUrl names it", async () => {
  const info = await inspect(sandbox.getId());
  const bindings = info.NetworkSettings.Ports[`${SANDBOX_PORT}/tcp`];
  assert.equal(bindings.length, 1);
  assert.equal(bindings[0].HostIp, "127.0.0.1");
  assert.equal(sandbox.getBaseUrl(), `http://127.0.0.1:${bindings[0].HostPort}`);
});

test("the control plane requires the admin token, and the module sends it", async () => {
  const bare = await fetch(`${sandbox.getBaseUrl()}/__sandbox/sessions`, { method: "POST" });
  assert.equal(bare.status, 401);
  assert.equal(bare.headers.get("content-type"), "application/problem+json");
  assert.equal(bare.headers.get("www-authenticate"), 'Bearer realm="merchant-api"');
  const said = "This sandbox's control plane needs the admin token: send 'Authorization: Bearer <admin token>' or 'X-Admin-Token: <admin token>'.";
  assert.deepEqual(await bare.json(), {
    type: "urn:merchant-sandbox:problem:admin_token_required",
    title: "Unauthorized",
    status: 401,
    detail: said,
    code: "admin_token_required",
    error: "invalid_token",
    error_description: said,
    instance: "/__sandbox/sessions",
  });
  const session = await sandbox.createSession();
  assert.match(session.id, /^ses_[0-9a-f]{16}$/);
});

test("the scenario file and the profile file are the sandbox's: the session answers in the profile", async () => {
  const session = await sandbox.createSession({ scenario: "module-check" });
  assert.equal(session.scenario, "module-check");
  assert.equal(session.profile, "module-check-profile");
  const { merchant, base_url } = session;
  const token = await fetch(`${base_url}/api/v2/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ api_key: merchant.api_key, api_secret: merchant.api_secret }),
  });
  assert.equal(token.status, 200);
  assert.equal(token.headers.get("x-acme-env"), "test");
  const body = await token.json();
  assert.deepEqual(Object.keys(body), ["result"]);
  assert.match(body.result.accessToken, /^eyJ[\w-]+\.[\w-]+\.[\w-]+$/);
  const wrong = await fetch(`${base_url}/api/v2/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ api_key: merchant.api_key, api_secret: "not-the-secret" }),
  });
  assert.equal(wrong.status, 403);
  const message = `The api_secret does not match the api_key '${merchant.api_key}'. Check that the secret belongs to this key and was not rotated.`;
  assert.equal(wrong.headers.get("content-type"), "application/json");
  assert.equal(wrong.headers.get("www-authenticate"), 'ApiKey realm="merchant-api", error="invalid_client"');
  assert.equal(wrong.headers.get("x-sandbox-explanation"), message);
  assert.deepEqual(await wrong.json(), { error: { code: "INVALID_CREDENTIALS", message } });
});

test("report() answers the session's findings; a wrong session id is the control plane's 404, passed on", async () => {
  const session = await sandbox.createSession();
  assert.deepEqual(await sandbox.report(session.id), { session: session.id, findings: [] });
  await assert.rejects(
    sandbox.report("ses_0000000000000000"),
    /^Error: GET \/__sandbox\/sessions\/ses_0000000000000000\/report: the sandbox answered 404: \{/,
  );
});

test("a scenario file the sandbox refuses fails start() at once, with the sandbox's own words", async () => {
  const refused = new MerchantSandboxContainer(process.env.MERCHANT_SANDBOX_IMAGE).withScenario(process.env.BAD_SCENARIO_FILE).start();
  await assert.rejects(refused, (error) => {
    assert.match(error.message, /^Container exited during HTTP healthCheck/);
    assert.match(error.message, /the scenarios do not load, nothing was started/);
    assert.match(error.message, /\/sandbox\/files\/0-bad-scenario\.yaml:1:1: description: is required: a text/);
    return true;
  });
});

test("a command of one's own replaces serve's flags, and the port is still published on loopback", async () => {
  const own = await new MerchantSandboxContainer(process.env.MERCHANT_SANDBOX_IMAGE)
    .withScenario("token-expires-after-calls")
    .withCommand(["serve", "--token-ttl", "60s"])
    .start();
  try {
    const token = await fetch(`${own.getBaseUrl()}/api/v2/auth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ api_key: "sandbox-api-key", api_secret: "sandbox-api-secret" }),
    });
    assert.equal(token.status, 200);
    assert.equal((await token.json()).expires_in, 60);
    const health = await (await fetch(`${own.getBaseUrl()}/__sandbox/health`)).json();
    assert.deepEqual(health.scenarios, ["default"]);
    assert.match(own.getBaseUrl(), /^http:\/\/127\.0\.0\.1:\d+$/);
  } finally {
    await own.stop();
  }
});
