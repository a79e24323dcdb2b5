import { decodeJwt, decodeProtectedHeader } from "jose";
import { describe, expect, it } from "vitest";
import { internalsOf } from "../../src/app/internals.js";
import type { Sandbox } from "../../src/app/sandbox.js";
import { newApiSecret } from "../../src/control/sessions.js";
import { applyActionsNow } from "../../src/scenarios/actions.js";
import type { ScenarioInstance } from "../../src/scenarios/instance.js";
import { type InstanceState, instanceJson, instanceState, restoreInstance } from "../../src/scenarios/instance-state.js";
import type { MerchantFile, ScenarioFile } from "../../src/scenarios/schema.js";
import { testSandbox } from "../support/keys.js";

/**
 * A scenario's state taken from one sandbox and restored into another made from the same file, as
 * two replicas do: the first is changed by its real rules and actions (over `handle`, the whole
 * pipeline), the second takes its keys, ledger and scenario state, and then answers exactly as the
 * first. Keys are generated, so the two sandboxes share none until one absorbs the other's.
 */

const T0 = Date.UTC(2030, 0, 1);
const MIN = 60_000;

function merchant(id: string): MerchantFile {
  return {
    id,
    api_key: `${id}-key`,
    api_secret: `${id}-secret-declared`,
    payment_token: `mpt_test_${id}_payment`,
    login: { email: `${id}@sandbox.test`, password: `${id}-password` },
  };
}

const M1 = merchant("m_one");
const M2 = merchant("m_two");
const ROTATED = "rotated-secret-0123456789";

const FILE: ScenarioFile = {
  name: "shared",
  description: "every kind of state a rule changes",
  merchants: [M1, M2],
  settings: { clock_offset: "5m", token_ttl: "12h" },
  rules: [
    {
      name: "second-token-rotates",
      match: { endpoint: "token", calls: { nth: 2 } },
      then: { rotate_secret: ROTATED, rotate_signing_key: { keep_old: true }, set_state: "rotated" },
    },
    { name: "when-rotated", match: { state: "rotated", endpoint: "payment" }, then: { advance_clock: "1h", login_gone: true, revoke_token: "all" } },
    { name: "tenth-payment-fails", match: { endpoint: "payment", calls: { from: 10 } }, then: { respond: { status: 503 } } },
  ],
};

/** A sandbox of FILE; a second replica starts later than the first (its scenario's start differs until restored). */
async function replica(frozenAt = T0): Promise<{ sandbox: Sandbox; scenario: ScenarioInstance }> {
  const sandbox = await testSandbox({ scenarios: [FILE], algorithm: "ES256", frozenAt, generateKeys: true });
  return { sandbox, scenario: sandbox.scenario("shared")! };
}

function request(sandbox: Sandbox, method: string, path: string, headers: Record<string, string>, body?: object) {
  const bytes = body === undefined ? new Uint8Array(0) : new TextEncoder().encode(JSON.stringify(body));
  return sandbox.handle({ method, path, query: "", headers: { host: "127.0.0.1", "content-type": "application/json", ...headers }, body: bytes });
}

async function tokenFor(sandbox: Sandbox, m: MerchantFile, secret = m.api_secret): Promise<{ status: number; code?: string; token?: string }> {
  const answer = await request(sandbox, "POST", "/api/v2/auth/token", {}, { api_key: m.api_key, api_secret: secret });
  const body = JSON.parse(String(answer.body)) as { access_token?: string; code?: string };
  return {
    status: answer.status,
    ...(body.code !== undefined && { code: body.code }),
    ...(body.access_token !== undefined && { token: body.access_token }),
  };
}

async function pay(sandbox: Sandbox, token: string): Promise<{ status: number; code: string | undefined }> {
  const answer = await request(sandbox, "GET", "/api/v2/payment/p1", { authorization: `Bearer ${token}` });
  return { status: answer.status, code: (JSON.parse(String(answer.body)) as { code?: string }).code };
}

/** What replica `to` does on a sync: the keys, records and revocations first, then the scenario state. */
async function sync(from: Sandbox, to: Sandbox, state: string): Promise<void> {
  const source = internalsOf(from);
  const target = internalsOf(to);
  await target.ring.absorbKeys(source.ring.takeNewKeys().map((k) => k.json));
  target.ledger.absorbRecords(source.ledger.takeNewRecords(), to.clock.nowSeconds());
  target.ledger.restoreRevocations(JSON.parse(JSON.stringify(source.ledger.revocationsState())));
  to.clock.restore(JSON.parse(JSON.stringify(from.clock.toState())));
  restoreInstance(to.scenario("shared")!, JSON.parse(state) as InstanceState, target.merchants);
}

describe("a scenario's state, shared between two sandboxes of one file", () => {
  it("restored, the second sandbox is the first's copy: same state text, same answers", async () => {
    const a = await replica();
    const b = await replica(T0 + 7 * MIN);
    internalsOf(a.sandbox).ring.shareKeys();
    internalsOf(a.sandbox).ledger.shareRecords();
    const before = await tokenFor(a.sandbox, M1);
    // second-token-rotates fires before the endpoint answers: the secret this request sends is the old one.
    expect((await tokenFor(a.sandbox, M1)).status).toBe(401);
    expect(a.scenario.state).toBe("rotated");
    // when-rotated fires: the clock jumps, the login goes, every token of M1 is revoked.
    expect(await pay(a.sandbox, before.token!)).toEqual({ status: 401, code: "token_revoked" });
    await applyActionsNow(
      { disable_merchant: true, advance_clock: "30m", set_state: "broken" },
      a.scenario,
      internalsOf(a.sandbox),
      [a.scenario.merchants[1]!],
      newApiSecret,
    );
    a.scenario.addActionRule({ match: { endpoint: "payment", calls: { times: 3 } }, then: { respond: { status: 429 } } });
    const after = await tokenFor(a.sandbox, M1, ROTATED);
    expect(await pay(a.sandbox, after.token!)).toEqual({ status: 429, code: "rate_limited" });
    a.sandbox.clock.advance(10 * MIN);

    const state = instanceJson(a.scenario);
    expect(JSON.stringify(instanceState(b.scenario))).not.toBe(state);
    await sync(a.sandbox, b.sandbox, state);

    expect(instanceJson(b.scenario)).toBe(state);
    expect(JSON.parse(state)).toMatchObject({
      state: "broken",
      loginMode: "gone",
      counts: [3, 1, 2],
      next: [{ rule: { name: "action-1" }, calls: 1 }],
      nextAdded: 1,
    });
    expect(b.scenario.clock.now()).toBe(T0 + 10 * MIN + 5 * MIN + 60 * MIN + 30 * MIN);
    expect(b.scenario.clock.now()).toBe(a.scenario.clock.now());
    expect(b.scenario.keys.signing.kid).toBe(a.scenario.keys.signing.kid);
    expect([...b.scenario.keys.accepted]).toEqual([...a.scenario.keys.accepted]);
    expect(internalsOf(b.sandbox).ring.jwks(b.scenario.keys.accepted)).toEqual(internalsOf(a.sandbox).ring.jwks(a.scenario.keys.accepted));

    // Behaviour: the same requests get the same answers from both.
    for (const s of [a, b]) {
      // The `next` rule answers its two calls left, then the endpoint does.
      const scripted = [await pay(s.sandbox, after.token!), await pay(s.sandbox, after.token!)];
      const revoked = await pay(s.sandbox, before.token!);
      const declared = await tokenFor(s.sandbox, M1);
      const disabled = await tokenFor(s.sandbox, M2);
      const fresh = await tokenFor(s.sandbox, M1, ROTATED);
      expect([...scripted, revoked, declared, disabled, fresh.status]).toEqual([
        { status: 429, code: "rate_limited" },
        { status: 429, code: "rate_limited" },
        { status: 401, code: "token_revoked" },
        { status: 401, code: "wrong_api_secret" },
        { status: 401, code: "merchant_disabled" },
        200,
      ]);
      expect(decodeProtectedHeader(fresh.token!).kid).toBe(a.scenario.keys.signing.kid);
      expect(decodeJwt(fresh.token!).iat).toBe((T0 + 105 * MIN) / 1000);
      expect(await pay(s.sandbox, fresh.token!)).toEqual({ status: 200, code: undefined });
      const login = await request(s.sandbox, "POST", "/api/login_check", {}, { username: M1.login!.email, password: M1.login!.password });
      expect(login.status).toBe(410);
    }
    expect(instanceJson(b.scenario)).toBe(instanceJson(a.scenario));
    expect(b.scenario.actionRules).toEqual([]);
    expect(b.scenario.rules.map((r) => [r.name, r.callCount])).toEqual([
      ["second-token-rotates", 6],
      ["when-rotated", 1],
      ["tenth-payment-fails", 6],
    ]);
  });

  it("refuses the state of another scenario, or one naming keys not absorbed yet, and changes nothing", async () => {
    const a = await replica();
    const b = await replica();
    await a.scenario.keys.rotate(false);
    const state = JSON.parse(instanceJson(a.scenario)) as InstanceState;
    const before = instanceJson(b.scenario);
    const registry = internalsOf(b.sandbox).merchants;
    expect(() => restoreInstance(b.scenario, state, registry)).toThrow(
      `the key ring holds no key '${state.keys.start}' that a shared scenario state names; absorb the shared keys (absorbKeys) before restoring the states`,
    );
    expect(() => restoreInstance(b.scenario, { ...state, merchants: state.merchants.slice(1) }, registry)).toThrow(
      new TypeError(
        "scenario 'shared': the shared state needs 2 merchant(s), as the scenario has; give what instanceState() returned for this scenario",
      ),
    );
    expect(() => restoreInstance(b.scenario, { ...state, counts: [1] }, registry)).toThrow(/needs the counts of the 3 rule\(s\) of the file/);
    expect(() => restoreInstance(b.scenario, { ...state, clock: { offsetMs: "1" } } as never, registry)).toThrow(
      /has a clock state that needs a finite offsetMs/,
    );
    expect(() => restoreInstance(b.scenario, { ...state, loginMode: "off" } as never, registry)).toThrow(
      /has a loginMode other than deprecated or gone/,
    );
    expect(instanceJson(b.scenario)).toBe(before);
  });
});
