import { describe, expect, it } from "vitest";
import type { SandboxOptions } from "../../src/app/sandbox.js";
import type { MerchantFile, RuleFile, ScenarioFile } from "../../src/scenarios/schema.js";
import { DEFAULT_KEY, DEFAULT_MERCHANT_ID, DEFAULT_SECRET, postJson, type Reply, type TestServer, serversPerTest } from "../support/server.js";
import { bearer } from "../support/expect.js";

/**
 * Every `match` condition of a scenario rule (src/scenarios/schema.ts, rules.ts), played over real
 * HTTP against the node:http server: each rule answers 418 `{"fired": "<rule name>"}` when it
 * fires, and the answer carries `x-sandbox-rule: <scenario>/<rule>`. Each test asserts the rule
 * fires exactly when its conditions hold, and that the endpoint answers untouched otherwise.
 * Time only moves on the sandbox clock (frozen at T0 by the harness).
 */

// ---------------------------------------------------------------------------------------------
// helpers

const startServer = serversPerTest();

/** A test server whose replies remember the path they answer (login answers carry more headers). */
async function start(options: SandboxOptions): Promise<TestServer> {
  const s = await startServer(options);
  const call = s.call;
  s.call = async (path, init) => Object.assign(await call(path, init), { path });
  return s;
}

/** The deprecated login's headers: on every answer of /api/login_check, scripted ones included. */
const LOGIN_HEADERS = {
  deprecation: "@1735689600",
  sunset: "Wed, 30 Jun 2027 23:59:59 GMT",
  link: '</api/v2/auth/token>; rel="successor-version"',
};

function merchant(id: string): MerchantFile {
  return {
    id,
    api_key: `${id}-key`,
    api_secret: `${id}-secret`,
    payment_token: `${id}-payment-token`,
    login: { email: `${id}@sandbox.test`, password: `${id}-password` },
  };
}

function scenario(name: string, rules: RuleFile[], merchants: MerchantFile[] = [merchant(`m_${name.replace(/-/g, "_")}`)]): ScenarioFile {
  return { name, description: `test scenario ${name}`, merchants, rules };
}

/** A rule that answers 418 with its own name when it fires. */
function firing(name: string, match?: RuleFile["match"]): RuleFile {
  return { name, ...(match && { match }), then: { respond: { status: 418, body: { fired: "{{rule.name}}" } } } };
}

/** Headers a test can compare exactly: everything but the transport's own. */
function headersOf(reply: Reply): Record<string, string> {
  const out: Record<string, string> = {};
  reply.headers.forEach((value, name) => {
    if (!["date", "connection", "keep-alive", "content-length", "transfer-encoding"].includes(name)) out[name] = value;
  });
  return out;
}

function expectFired(reply: Reply, scenarioName: string, ruleName: string): void {
  expect(reply.status).toBe(418);
  expect(reply.json).toEqual({ fired: ruleName });
  const path = (reply as Reply & { path?: string }).path?.split("?")[0];
  expect(headersOf(reply)).toEqual({
    "content-type": "application/json",
    "cache-control": "no-store",
    ...(path === "/api/login_check" && LOGIN_HEADERS),
    "x-sandbox-rule": `${scenarioName}/${ruleName}`,
  });
}

function expectNotFired(reply: Reply): void {
  expect(reply.headers.get("x-sandbox-rule")).toBeNull();
  expect(reply.status).not.toBe(418);
  expect(reply.json?.fired).toBeUndefined();
}

/** A request attributed to the first merchant of the primary scenario (by its payment token as a bearer). */
function mc(s: TestServer, path: string, init: RequestInit = {}): Promise<Reply> {
  return s.call(path, bearer(s.sandbox.scenarios[0]!.merchants[0]!.paymentToken, init));
}

/** One request per endpoint, all attributed to merchant `m` where the endpoint can attribute. */
function endpointRequests(m: MerchantFile): Record<string, [string, RequestInit]> {
  return {
    token: ["/api/v2/auth/token", postJson({ api_key: m.api_key, api_secret: m.api_secret })],
    login: ["/api/login_check", postJson({ username: m.login!.email, password: m.login!.password })],
    // The payment token as a bearer attributes the request to its merchant (the endpoint refuses it).
    payment: ["/api/v2/payment/p1", bearer(m.payment_token)],
    cashout: ["/api/v2/cashout/c1", bearer(m.payment_token, { method: "POST" })],
    "payment-init": ["/api/v2/payment/init", bearer(m.payment_token, postJson({ amount: 1999, currency: "EUR" }))],
    jwks: ["/.well-known/jwks.json", {}],
    unknown: ["/not/an/endpoint", {}],
    control: ["/__sandbox/health", {}],
  };
}

/** What each of those requests gets when no rule fires. */
const UNTOUCHED_STATUS: Record<string, number> = {
  token: 200,
  login: 200,
  payment: 401,
  cashout: 401,
  "payment-init": 201,
  jwks: 200,
  unknown: 404,
  control: 200,
};

// ---------------------------------------------------------------------------------------------

describe("match.endpoint", () => {
  const cases: Array<[string, string | string[], string[]]> = [
    ["token", "token", ["token"]],
    ["login", "login", ["login"]],
    ["payment", "payment", ["payment"]],
    ["cashout", "cashout", ["cashout"]],
    ["payment-init", "payment-init", ["payment-init"]],
    ["jwks", "jwks", ["jwks"]],
    // `any` is every endpoint; never an unknown path (no merchant can be read from it, so it runs
    // no rules) and never the sandbox's own control routes.
    ["any", "any", ["token", "login", "payment", "cashout", "payment-init", "jwks"]],
    ["a list", ["payment", "cashout"], ["payment", "cashout"]],
    ["a list with any", ["jwks", "any"], ["token", "login", "payment", "cashout", "payment-init", "jwks"]],
  ];

  for (const [label, endpoint, firesOn] of cases) {
    it(`endpoint: ${label} fires on ${firesOn.join(", ")} and nothing else`, async () => {
      const m = merchant("m_ep");
      const s = await start({ scenarios: [scenario("ep", [firing("by-endpoint", { endpoint: endpoint as never })], [m])] });
      for (const [name, [path, init]] of Object.entries(endpointRequests(m))) {
        const reply = await s.call(path, init);
        if (firesOn.includes(name)) expectFired(reply, "ep", "by-endpoint");
        else {
          expectNotFired(reply);
          expect({ name, status: reply.status }).toEqual({ name, status: UNTOUCHED_STATUS[name] });
        }
      }
    });
  }

  it("endpoint: payment does not match POST /api/v2/payment/init (that is payment-init)", async () => {
    const m = merchant("m_ep");
    const s = await start({ scenarios: [scenario("ep", [firing("payments", { endpoint: "payment" })], [m])] });
    const [path, init] = endpointRequests(m)["payment-init"]!;
    const reply = await s.call(path, init);
    expectNotFired(reply);
    expect(reply.status).toBe(201);
    expectFired(await s.call("/api/v2/payment", bearer(m.payment_token)), "ep", "payments");
  });
});

describe("match.method", () => {
  it("a single method fires only for that method", async () => {
    const s = await start({ scenarios: [scenario("meth", [firing("posts", { method: "POST" })])] });
    expectFired(await mc(s, "/api/v2/payment/x", { method: "POST" }), "meth", "posts");
    const get = await mc(s, "/api/v2/payment/x");
    expectNotFired(get);
    expect(get.status).toBe(401);
    expectNotFired(await mc(s, "/api/v2/payment/x", { method: "PUT" }));
    expectNotFired(await s.call("/.well-known/jwks.json"));
    // A method the route refuses is refused for its form before any rule matches (405, nothing fired).
    const refused = await s.call("/.well-known/jwks.json", { method: "POST" });
    expectNotFired(refused);
    expect(refused.status).toBe(405);
  });

  it("a list of methods fires for each of them and no other", async () => {
    const s = await start({ scenarios: [scenario("meth", [firing("reads-and-deletes", { method: ["GET", "DELETE"] })])] });
    expectFired(await mc(s, "/api/v2/cashout/x"), "meth", "reads-and-deletes");
    expectFired(await mc(s, "/api/v2/cashout/x", { method: "DELETE" }), "meth", "reads-and-deletes");
    for (const method of ["POST", "PUT", "PATCH", "OPTIONS"]) {
      const reply = await mc(s, "/api/v2/cashout/x", { method });
      expectNotFired(reply);
      expect(reply.status).toBe(401);
    }
  });
});

describe("match.path", () => {
  it("* matches exactly one segment", async () => {
    const s = await start({ scenarios: [scenario("glob", [firing("one-segment", { path: "/api/v2/payment/*" })])] });
    expectFired(await mc(s, "/api/v2/payment/abc"), "glob", "one-segment");
    expectFired(await mc(s, "/api/v2/payment/init", { method: "POST" }), "glob", "one-segment");
    expectFired(await mc(s, "/api/v2/payment/abc?with=query"), "glob", "one-segment");
    expectNotFired(await mc(s, "/api/v2/payment/abc/def"));
    expectNotFired(await mc(s, "/api/v2/payment"));
    expectNotFired(await mc(s, "/api/v2/cashout/abc"));
    expectNotFired(await s.call(...endpointRequests(merchant("m_glob")).token!));
  });

  it("* inside a segment matches within that segment only", async () => {
    const s = await start({ scenarios: [scenario("glob", [firing("prefix", { path: "/api/v2/payment/ord-*" })])] });
    expectFired(await mc(s, "/api/v2/payment/ord-1"), "glob", "prefix");
    expectNotFired(await mc(s, "/api/v2/payment/ord-1/refund"));
    expectNotFired(await mc(s, "/api/v2/payment/order-1"));
  });

  it("** matches any depth", async () => {
    const s = await start({ scenarios: [scenario("glob", [firing("deep", { path: "/api/v2/**" })])] });
    expectFired(await mc(s, "/api/v2/payment/a"), "glob", "deep");
    expectFired(await mc(s, "/api/v2/payment/a/b/c/d"), "glob", "deep");
    expectFired(await s.call(...endpointRequests(merchant("m_glob")).token!), "glob", "deep");
    expectFired(await mc(s, "/api/v2/cashout/x/y"), "glob", "deep");
    expectNotFired(await s.call(...endpointRequests(merchant("m_glob")).login!));
    expectNotFired(await s.call("/.well-known/jwks.json"));
  });

  it("** in the middle spans segments, and the rest must still match", async () => {
    const s = await start({ scenarios: [scenario("glob", [firing("refunds", { path: "/api/**/refund" })])] });
    expectFired(await mc(s, "/api/v2/payment/p1/refund"), "glob", "refunds");
    expectFired(await mc(s, "/api/v2/cashout/refund"), "glob", "refunds");
    expectNotFired(await mc(s, "/api/v2/payment/p1/refunds"));
    expectNotFired(await mc(s, "/api/v2/payment/p1"));
  });

  it("a literal path matches only itself; regex characters in it are literal", async () => {
    const s = await start({ scenarios: [scenario("glob", [firing("literal", { path: "/api/v2/payment/a.b+c" })])] });
    expectFired(await mc(s, "/api/v2/payment/a.b+c"), "glob", "literal");
    expectFired(await mc(s, "/api/v2/payment/a.b+c?x=1"), "glob", "literal");
    expectNotFired(await mc(s, "/api/v2/payment/aXb+c"));
    expectNotFired(await mc(s, "/api/v2/payment/a.bbc"));
    expectNotFired(await mc(s, "/api/v2/payment/a.b+c/d"));
    expectNotFired(await mc(s, "/api/v2/payment/a.b+"));
  });

  it("the path is compared exactly (case and trailing slash)", async () => {
    const s = await start({ scenarios: [scenario("glob", [firing("jwks-path", { path: "/.well-known/jwks.json" })])] });
    expectFired(await s.call("/.well-known/jwks.json"), "glob", "jwks-path");
    expectNotFired(await s.call("/.well-known/jwks.json/"));
    expectNotFired(await s.call("/.well-known/JWKS.json"));
    expectNotFired(await s.call("/.well-known/jwksXjson"));
  });
});

describe("match.merchant", () => {
  it("with two merchants in one scenario, only the named one fires", async () => {
    const m1 = merchant("m_first");
    const m2 = merchant("m_second");
    const s = await start({ scenarios: [scenario("pair", [firing("second-only", { merchant: "m_second" })], [m1, m2])] });
    // Every kind of attribution: api_key, login e-mail, payment token, access token's sub.
    expectFired(await s.call(...endpointRequests(m2).token!), "pair", "second-only");
    expectFired(await s.call(...endpointRequests(m2).login!), "pair", "second-only");
    expectFired(await s.call(...endpointRequests(m2)["payment-init"]!), "pair", "second-only");
    expectFired(await s.call(...endpointRequests(m2).payment!), "pair", "second-only");

    const t1 = await s.token(m1.api_key, m1.api_secret);
    for (const [path, init] of [...Object.values(endpointRequests(m1)), ["/api/v2/payment/x", bearer(t1)] as [string, RequestInit]]) {
      expectNotFired(await s.call(path, init));
    }
    const ok = await s.call("/api/v2/payment/x", bearer(t1));
    expect(ok.status).toBe(200);
    expect(ok.json.merchant_id).toBe("m_first");
    // Unattributed requests have no merchant, so a merchant condition never holds for them.
    expectNotFired(await s.call("/.well-known/jwks.json"));
    expectNotFired(await s.call("/api/v2/payment/x"));
  });
});

describe("match.calls", () => {
  /** Sends a payment call for the scenario's merchant, with non-matching calls in between that must not count. */
  async function sequence(s: TestServer, m: MerchantFile, n: number): Promise<boolean[]> {
    const fired: boolean[] = [];
    for (let i = 0; i < n; i++) {
      // Calls that miss another condition: other endpoint, other method. They never count.
      expectNotFired(await s.call("/.well-known/jwks.json"));
      expectNotFired(await s.call("/api/v2/payment/x", bearer(m.payment_token, { method: "DELETE" })));
      const reply = await s.call("/api/v2/payment/x", bearer(m.payment_token));
      fired.push(reply.headers.get("x-sandbox-rule") !== null);
      if (reply.headers.get("x-sandbox-rule") !== null) expectFired(reply, "calls", "counted");
      else expect(reply.status).toBe(401);
    }
    return fired;
  }

  const cases: Array<[string, NonNullable<NonNullable<RuleFile["match"]>["calls"]>, boolean[]]> = [
    ["nth: 3 is only the third matching call", { nth: 3 }, [false, false, true, false, false]],
    ["nth: 1 is only the first", { nth: 1 }, [true, false, false, false, false]],
    ["from: 3 is the third matching call on", { from: 3 }, [false, false, true, true, true]],
    ["times: 2 is the first two matching calls", { times: 2 }, [true, true, false, false, false]],
    ["from: 2 with times: 2 is the second and third", { from: 2, times: 2 }, [false, true, true, false, false]],
    ["from: 3 with times: 1 is the same as nth: 3", { from: 3, times: 1 }, [false, false, true, false, false]],
  ];
  for (const [label, calls, expected] of cases) {
    it(label, async () => {
      const m = merchant("m_calls");
      const s = await start({
        scenarios: [scenario("calls", [firing("counted", { endpoint: "payment", method: "GET", calls })], [m])],
      });
      expect(await sequence(s, m, 5)).toEqual(expected);
    });
  }

  it("counts only calls that met the other conditions (merchant, state)", async () => {
    const m1 = merchant("m_one");
    const m2 = merchant("m_two");
    const s = await start({
      scenarios: [
        scenario(
          "calls",
          [
            { name: "arm", match: { path: "/api/v2/payment/arm" }, then: { set_state: "armed" } },
            firing("counted", { merchant: "m_two", state: "armed", calls: { nth: 2 } }),
          ],
          [m1, m2],
        ),
      ],
    });
    const t1 = await s.token(m1.api_key, m1.api_secret);
    const t2 = await s.token(m2.api_key, m2.api_secret); // merchant m_two, but state is still 'started': not counted
    expectNotFired(await s.call("/api/v2/payment/x", bearer(t2)));
    expect((await mc(s, "/api/v2/payment/arm")).headers.get("x-sandbox-rule")).toBe("calls/arm");
    expectNotFired(await s.call("/api/v2/payment/x", bearer(t1))); // m_one: not counted
    expectNotFired(await s.call("/api/v2/payment/x", bearer(t2))); // 1st counted call
    expectNotFired(await s.call("/api/v2/payment/x", bearer(t1))); // m_one: not counted
    expectFired(await s.call("/api/v2/payment/x", bearer(t2)), "calls", "counted"); // 2nd counted call
    const after = await s.call("/api/v2/payment/x", bearer(t2));
    expectNotFired(after);
    expect(after.status).toBe(200);
  });
});

describe("match.state", () => {
  it("set_state drives a state machine: started → A → B", async () => {
    const respondWithState = (status: number) => ({ status, body: { rule: "{{rule.name}}", state: "{{scenario.state}}" } });
    const s = await start({
      scenarios: [
        scenario("machine", [
          { name: "to-a", match: { state: "started", path: "/api/v2/payment/next" }, then: { set_state: "A", respond: respondWithState(200) } },
          { name: "to-b", match: { state: "A", path: "/api/v2/payment/next" }, then: { set_state: "B", respond: respondWithState(201) } },
          { name: "in-b", match: { state: "B", path: "/api/v2/payment/next" }, then: { respond: respondWithState(202) } },
          firing("only-in-a", { state: "A", path: "/api/v2/payment/probe" }),
        ]),
      ],
    });
    expectNotFired(await mc(s, "/api/v2/payment/probe"));

    // The answer shows the state the request was matched in; the new state applies to the next request.
    const one = await mc(s, "/api/v2/payment/next");
    expect([one.status, one.json, one.headers.get("x-sandbox-rule")]).toEqual([200, { rule: "to-a", state: "started" }, "machine/to-a"]);
    expectFired(await mc(s, "/api/v2/payment/probe"), "machine", "only-in-a");

    const two = await mc(s, "/api/v2/payment/next");
    expect([two.status, two.json, two.headers.get("x-sandbox-rule")]).toEqual([201, { rule: "to-b", state: "A" }, "machine/to-b"]);
    expectNotFired(await mc(s, "/api/v2/payment/probe"));

    for (let i = 0; i < 2; i++) {
      const three = await mc(s, "/api/v2/payment/next");
      expect([three.status, three.json, three.headers.get("x-sandbox-rule")]).toEqual([202, { rule: "in-b", state: "B" }, "machine/in-b"]);
    }
    expect(s.sandbox.scenario("machine")!.state).toBe("B");
  });

  it("a rule with a state condition never fires in the initial state 'started' unless it names it", async () => {
    const s = await start({
      scenarios: [scenario("machine", [firing("needs-x", { state: "x" }), firing("started", { state: "started", path: "/api/v2/payment/s" })])],
    });
    expectNotFired(await s.call("/.well-known/jwks.json"));
    expectFired(await mc(s, "/api/v2/payment/s"), "machine", "started");
  });
});

describe("match.clock", () => {
  it("after (inclusive) and before (exclusive) on the scenario's clock", async () => {
    const s = await start({
      scenarios: [scenario("timed", [firing("window", { path: "/api/v2/payment/w", clock: { after: "10m", before: "20m" } })])],
    });
    const at = async (ms: number) => {
      s.sandbox.clock.set(Date.UTC(2026, 0, 1) + ms);
      return mc(s, "/api/v2/payment/w");
    };
    expectNotFired(await at(0));
    expectNotFired(await at(9 * 60_000 + 59_999));
    expectFired(await at(10 * 60_000), "timed", "window");
    expectFired(await at(19 * 60_000 + 59_999), "timed", "window");
    expectNotFired(await at(20 * 60_000));
    expectNotFired(await at(3_600_000));
  });

  it("after alone, and before alone", async () => {
    const s = await start({
      scenarios: [
        scenario("timed", [
          firing("late", { path: "/api/v2/payment/late", clock: { after: "90s" } }),
          firing("early", { path: "/api/v2/payment/early", clock: { before: 90 } }),
        ]),
      ],
    });
    expectFired(await mc(s, "/api/v2/payment/early"), "timed", "early");
    expectNotFired(await mc(s, "/api/v2/payment/late"));
    s.sandbox.clock.advance(89_999);
    expectFired(await mc(s, "/api/v2/payment/early"), "timed", "early");
    expectNotFired(await mc(s, "/api/v2/payment/late"));
    s.sandbox.clock.advance(1);
    expectNotFired(await mc(s, "/api/v2/payment/early"));
    expectFired(await mc(s, "/api/v2/payment/late"), "timed", "late");
    s.sandbox.clock.advance(24 * 3_600_000);
    expectFired(await mc(s, "/api/v2/payment/late"), "timed", "late");
  });

  it("counts from the scenario's start, whatever its clock_offset", async () => {
    const s = await start({
      scenarios: [
        { ...scenario("ahead", [firing("after-1m", { path: "/api/v2/payment/t", clock: { after: "1m" } })]), settings: { clock_offset: "2h" } },
      ],
    });
    expectNotFired(await mc(s, "/api/v2/payment/t"));
    s.sandbox.clock.advance(60_000);
    expectFired(await mc(s, "/api/v2/payment/t"), "ahead", "after-1m");
  });

  it("advance_clock of the scenario moves it into the window", async () => {
    const s = await start({
      scenarios: [
        scenario("timed", [
          { name: "jump", match: { path: "/api/v2/payment/jump" }, then: { advance_clock: "5m" } },
          firing("after-5m", { path: "/api/v2/payment/t", clock: { after: "5m" } }),
        ]),
      ],
    });
    expectNotFired(await mc(s, "/api/v2/payment/t"));
    expect((await mc(s, "/api/v2/payment/jump")).headers.get("x-sandbox-rule")).toBe("timed/jump");
    expectFired(await mc(s, "/api/v2/payment/t"), "timed", "after-5m");
  });
});

describe("several conditions combined", () => {
  it("fires only when every condition holds", async () => {
    const m1 = merchant("m_one");
    const m2 = merchant("m_two");
    const s = await start({
      scenarios: [
        scenario(
          "combo",
          [
            { name: "arm", match: { path: "/api/v2/payment/arm" }, then: { set_state: "armed" } },
            firing("all-of-them", {
              endpoint: "cashout",
              method: ["POST", "PUT"],
              path: "/api/v2/cashout/*",
              merchant: "m_two",
              state: "armed",
              clock: { after: "1m" },
              calls: { nth: 2 },
            }),
          ],
          [m1, m2],
        ),
      ],
    });
    const post = (m: MerchantFile, path = "/api/v2/cashout/c1", method = "POST") => s.call(path, bearer(m.payment_token, { method }));
    // Each misses one condition.
    expectNotFired(await post(m2)); // state started, clock 0
    await mc(s, "/api/v2/payment/arm");
    expectNotFired(await post(m2)); // clock 0
    s.sandbox.clock.advance(60_000);
    expectNotFired(await post(m1)); // other merchant
    expectNotFired(await post(m2, "/api/v2/cashout/c1", "GET")); // other method
    expectNotFired(await post(m2, "/api/v2/cashout/c1/deeper")); // other path
    expectNotFired(await post(m2, "/api/v2/payment/c1")); // other endpoint
    // All hold: the first such call is number 1, the second fires.
    expectNotFired(await post(m2));
    expectFired(await post(m2, "/api/v2/cashout/c2", "PUT"), "combo", "all-of-them");
    expectNotFired(await post(m2));
  });
});

describe("isolation between scenarios", () => {
  const a = merchant("m_alpha");
  const b = merchant("m_beta");
  const scenarioA = () => scenario("alpha", [firing("alpha-catch-all")], [a]);
  const scenarioB = () => scenario("beta", [firing("beta-only", { path: "/api/v2/payment/beta" })], [b]);

  it("a rule of scenario A never fires for scenario B's merchant or the default merchant", async () => {
    const s = await start({ scenarios: [scenarioA(), scenarioB()] });
    // B's merchant on every endpoint: B has no rule for these, A's catch-all must not fire.
    const tb = await s.token(b.api_key, b.api_secret);
    for (const [name, [path, init]] of Object.entries(endpointRequests(b))) {
      if (name === "jwks" || name === "unknown" || name === "control") continue; // unattributed: see below
      const reply = await s.call(path, init);
      expectNotFired(reply);
      expect({ name, status: reply.status }).toEqual({ name, status: UNTOUCHED_STATUS[name] });
    }
    const paid = await s.call("/api/v2/payment/x", bearer(tb));
    expectNotFired(paid);
    expect([paid.status, paid.json.merchant_id]).toEqual([200, "m_beta"]);

    // The default merchant belongs to the built-in default scenario, which has no rules.
    const td = await s.token(DEFAULT_KEY, DEFAULT_SECRET);
    const def = await s.call("/api/v2/cashout/x", bearer(td, { method: "POST" }));
    expectNotFired(def);
    expect([def.status, def.json.merchant_id]).toEqual([200, DEFAULT_MERCHANT_ID]);
    expectNotFired(await s.call("/api/login_check", postJson({ username: "merchant@sandbox.test", password: "sandbox-password" })));

    // A's own merchant: fires everywhere.
    for (const name of ["token", "login", "payment", "cashout", "payment-init"]) {
      expectFired(await s.call(...endpointRequests(a)[name]!), "alpha", "alpha-catch-all");
    }
    // B's rule fires for B only.
    expectFired(await s.call("/api/v2/payment/beta", bearer(tb)), "beta", "beta-only");
    expectFired(await s.call("/api/v2/payment/beta", bearer(a.payment_token)), "alpha", "alpha-catch-all");
  });

  it("unattributed requests run no rules, except the JWKS, which runs the primary (first) scenario's", async () => {
    const s = await start({ scenarios: [scenarioA(), scenarioB()] });
    // The JWKS never carries credentials: it runs the primary scenario's rules.
    expectFired(await s.call("/.well-known/jwks.json"), "alpha", "alpha-catch-all");
    // Requests no merchant can be read from never use up a scripted merchant's rules (README,
    // "How rules run"): the endpoint answers them untouched.
    const unattributed: Array<[string, RequestInit, number]> = [
      ["/api/v2/auth/token", postJson({ api_key: "nobody-key", api_secret: "nobody-secret" }), 401],
      ["/api/login_check", postJson({ username: "nobody@sandbox.test", password: "x" }), 401],
      ["/api/v2/payment/x", {}, 401],
      ["/api/v2/payment/x", bearer("not-a-known-token"), 401],
      ["/api/v2/payment/init", bearer("unknown-payment-token", postJson({})), 401],
      ["/nowhere", {}, 404],
    ];
    for (const [path, init, status] of unattributed) {
      const reply = await s.call(path, init);
      expectNotFired(reply);
      expect({ path, status: reply.status }).toEqual({ path, status });
    }
    // The catch-all still fires for A's own merchant afterwards (nothing was used up).
    expectFired(await s.call(...endpointRequests(a).token!), "alpha", "alpha-catch-all");

    // With B first, B is the primary: the JWKS meets B's rules (none match it), never A's.
    const s2 = await start({ scenarios: [scenarioB(), scenarioA()] });
    expectNotFired(await s2.call("/.well-known/jwks.json"));
    for (const [path, init] of unattributed) expectNotFired(await s2.call(path, init));
    expectFired(await s2.call("/api/v2/payment/beta", bearer(b.payment_token)), "beta", "beta-only");
  });

  it("a calls count is not used up by unattributed requests", async () => {
    const s = await start({ scenarios: [scenario("outage", [firing("first-exchange", { endpoint: "token", calls: { nth: 1 } })], [a])] });
    // A mistyped api_key first: it must not consume the scripted merchant's first exchange.
    const typo = await s.call("/api/v2/auth/token", postJson({ api_key: "m_alpha-kee", api_secret: a.api_secret }));
    expectNotFired(typo);
    expect([typo.status, typo.json.code]).toEqual([401, "unknown_api_key"]);
    expectFired(await s.call(...endpointRequests(a).token!), "outage", "first-exchange");
    expectNotFired(await s.call(...endpointRequests(a).token!));
  });

  it("the state and call counts of one scenario never affect another", async () => {
    const s = await start({
      scenarios: [
        scenario("alpha", [{ name: "flip", match: { endpoint: "token" }, then: { set_state: "flipped" } }], [a]),
        scenario("beta", [firing("while-started", { state: "started", path: "/api/v2/payment/probe", calls: { nth: 2 } })], [b]),
      ],
    });
    await s.token(a.api_key, a.api_secret);
    expect(s.sandbox.scenario("alpha")!.state).toBe("flipped");
    expect(s.sandbox.scenario("beta")!.state).toBe("started");
    // A's merchant on the path does not count for B's rule.
    expect((await s.call("/api/v2/payment/probe", bearer(a.payment_token))).headers.get("x-sandbox-rule")).toBeNull();
    expectNotFired(await s.call("/api/v2/payment/probe", bearer(b.payment_token)));
    expectFired(await s.call("/api/v2/payment/probe", bearer(b.payment_token)), "beta", "while-started");
  });
});
