import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_KEY, DEFAULT_MERCHANT_ID, DEFAULT_SECRET, postEmpty, postJson, startTestServer, type TestServer } from "../support/server.js";
import {
  FUZZ_TIMEOUT,
  PROTO_KEYS,
  anyJsonValue,
  assertAnswer,
  assertHealthy,
  contentType,
  describeRequest,
  fuzzParams,
  fuzzSeed,
  hostileBody,
  method,
  mutatePath,
  rawExchange,
  refusedByHttpLayer,
  serialize,
  shown,
  utf8,
  type RawRequest,
} from "./support.js";

/**
 * Property-based fuzzing of the control plane (/__sandbox/*) over real HTTP, on a sandbox without
 * an admin token and on one with an admin token. Every case starts from a reset sandbox (so a case
 * that breaks something cannot spill into the next, and a failure shrinks cleanly). For every case:
 *  - an answer, never a 5xx; every non-2xx answer is problem+json with string code and
 *    error_description; GET /__sandbox/health still answers 200;
 *  - a refused call changes nothing: the clock, the sessions and the journal read as before, and
 *    the access token issued before the call still gives 200 on a protected endpoint;
 *  - an accepted call leaves a sandbox that still works: clock, journal and report read without a
 *    5xx, a token exchange gives 200 and that token gives 200; a token minted by POST
 *    /__sandbox/tokens never makes a protected endpoint answer 5xx;
 *  - a call a web page could make (another site's Origin, Origin: null, Sec-Fetch-Site:
 *    cross-site, a Host the sandbox does not answer to) gets 403 on every route but health,
 *    whatever its method, body and admin token; a POST not declared as JSON gets 415; a call from
 *    the sandbox's own site (loopback, IP and single-label Hosts, its own Origin) gets neither.
 */

const SEED = fuzzSeed();
const params = (numRuns: number) => fuzzParams(SEED, numRuns);
const ADMIN = "fuzz-admin-t0ken";
const SID = "$SID$";
const HOST: [string, string] = ["Host", "127.0.0.1"];

interface Target {
  t: TestServer;
  admin: string | undefined;
}
const open: Target = { t: undefined as unknown as TestServer, admin: undefined };
const guarded: Target = { t: undefined as unknown as TestServer, admin: ADMIN };

beforeAll(async () => {
  [open.t, guarded.t] = await Promise.all([startTestServer(), startTestServer({ adminToken: ADMIN })]);
});
afterAll(async () => {
  await Promise.all([open.t?.close(), guarded.t?.close()]);
});

function adminHeaders(target: Target): Record<string, string> {
  return target.admin ? { authorization: `Bearer ${target.admin}` } : {};
}

async function get(target: Target, path: string) {
  return target.t.call(path, { headers: adminHeaders(target) });
}

async function snapshot(target: Target): Promise<Record<string, string>> {
  const [clock, sessions, journal] = await Promise.all([
    get(target, "/__sandbox/clock"),
    get(target, "/__sandbox/sessions"),
    get(target, "/__sandbox/requests?limit=1"),
  ]);
  return {
    clock: `${clock.status} ${clock.text}`,
    sessions: `${sessions.status} ${sessions.text}`,
    journal: `${journal.status} ${journal.json?.requests?.at(-1)?.seq ?? 0}`,
  };
}

async function exchange(target: Target): Promise<string> {
  const r = await target.t.call("/api/v2/auth/token", postJson({ api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET }));
  if (r.status !== 200) throw new Error(`token exchange answered ${r.status}: ${r.text.slice(0, 300)}`);
  return r.json.access_token as string;
}

async function protectedCall(target: Target, token: string, path = "/api/v2/payment/fuzz-check") {
  return target.t.call(path, { headers: { authorization: `Bearer ${token}` } });
}

/** One case: a fresh sandbox state, the call, then every property; the call's answer. */
async function check(target: Target, generated: ControlCase): Promise<{ status: number; code: unknown }> {
  const reset = await target.t.call("/__sandbox/reset", postEmpty(adminHeaders(target)));
  if (reset.status !== 200) throw new Error(`POST /__sandbox/reset answered ${reset.status}: ${reset.text.slice(0, 300)}`);
  let sid = "ses_0000000000000000";
  if (generated.needsSession) {
    const s = await target.t.call("/__sandbox/sessions", postJson({}, adminHeaders(target)));
    if (s.status !== 201) throw new Error(`POST /__sandbox/sessions answered ${s.status}: ${s.text.slice(0, 300)}`);
    sid = s.json.id as string;
  }
  const token = await exchange(target);
  const before = await snapshot(target);

  const fill = (s: string) => s.split(SID).join(sid);
  const request: RawRequest = {
    ...generated.request,
    target: fill(generated.request.target),
    headers: [...generated.request.headers.map(([n, v]) => [n, fill(v)] as [string, string]), ...authFor(target, generated.auth)],
  };
  const what = describeRequest(request);
  const res = assertAnswer(await rawExchange(target.t.server.port, serialize(request), { head: request.method === "HEAD" }), request);
  await assertHealthy(target.t, request);
  const answer = { status: res.status, code: codeOf(res.body) };

  if (res.status < 200 || res.status >= 300) {
    const after = await snapshot(target);
    // A mutated path that left /__sandbox/ (e.g. /__sandbox%2Fclock) is a merchant-API request: journaled once.
    const journaled = request.target.startsWith("/__sandbox/") || refusedByHttpLayer(res, request.target) ? 0 : 1;
    const expected = { ...before, journal: String(before.journal).replace(/\d+$/, (n) => String(Number(n) + journaled)) };
    if (JSON.stringify(after) !== JSON.stringify(expected)) {
      throw new Error(
        `a refused call (${res.status}) changed the sandbox: ${what}\nexpected: ${JSON.stringify(expected)}\nafter:    ${JSON.stringify(after)}`,
      );
    }
    const r = await protectedCall(target, token);
    if (r.status !== 200)
      throw new Error(`the token issued before the call now gets ${r.status} (${r.text.slice(0, 200)}) after ${res.status} to ${what}`);
    return answer;
  }

  // Accepted: whatever it changed, the sandbox must still work.
  for (const path of ["/__sandbox/clock", "/__sandbox/requests", "/__sandbox/report", "/__sandbox/sessions"]) {
    const r = await get(target, path);
    if (r.status !== 200) throw new Error(`after ${res.status} to ${what}\nGET ${path} answers ${r.status}: ${r.text.slice(0, 300)}`);
  }
  const fresh = await target.t.call("/api/v2/auth/token", postJson({ api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET }));
  if (fresh.status !== 200) throw new Error(`after ${res.status} to ${what}\na token exchange answers ${fresh.status}: ${fresh.text.slice(0, 300)}`);
  const used = await protectedCall(target, fresh.json.access_token as string);
  if (used.status !== 200)
    throw new Error(`after ${res.status} to ${what}\na fresh token gets ${used.status} on a protected endpoint: ${used.text.slice(0, 300)}`);
  const minted =
    request.target.split("?")[0] === "/__sandbox/tokens" && request.method === "POST"
      ? (JSON.parse(res.body.toString("utf8")) as { token?: unknown }).token
      : undefined;
  if (typeof minted === "string") {
    for (const path of ["/api/v2/payment/fuzz-check", "/api/v2/cashout/fuzz-check"]) {
      const r = await protectedCall(target, minted, path);
      if (r.status >= 500) throw new Error(`the token minted by ${what}\ngets ${r.status} on ${path}: ${r.text.slice(0, 300)}`);
    }
  }
  return answer;
}

function codeOf(body: Buffer): unknown {
  try {
    return (JSON.parse(body.toString("utf8")) as { code?: unknown }).code;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// generators

type Auth = "admin-bearer" | "admin-header" | "none" | "wrong" | "twice" | "lowercase" | "spaces";
interface ControlCase {
  request: RawRequest;
  needsSession: boolean;
  auth: Auth;
}

function authFor(target: Target, auth: Auth): Array<[string, string]> {
  const token = target.admin ?? "no-admin-token-configured";
  switch (auth) {
    case "admin-bearer":
      return target.admin ? [["Authorization", `Bearer ${token}`]] : [];
    case "admin-header":
      return target.admin ? [["X-Admin-Token", token]] : [];
    case "none":
      return [];
    case "wrong":
      return [["Authorization", `Bearer ${token}x`]];
    case "twice":
      return [
        ["Authorization", `Bearer ${token}`],
        ["X-Admin-Token", `${token}`],
        ["X-Admin-Token", "other"],
      ];
    case "lowercase":
      return [["authorization", `bearer ${token}`]];
    case "spaces":
      return [["Authorization", `Bearer   ${token}   `]];
  }
}

const LIBRARY = ["default", "token-endpoint-outage", "cashout-without-scope", "login-gone", "signing-key-rotation", "token-revoked-mid-session"];
const VARIANTS = [
  "valid",
  "expired",
  "not_yet_valid",
  "wrong_audience",
  "wrong_issuer",
  "unknown_kid",
  "foreign_key",
  "alg_none",
  "bad_signature",
  "login_token",
];

/** Durations the clock and mint endpoints take, well-formed, signed, fractional and enormous. */
const duration = fc.oneof(
  fc
    .tuple(
      fc.constantFrom("", "-", "+", " "),
      fc.oneof(fc.nat(), fc.nat({ max: 99 }), fc.constantFrom(1e6, 1e9, 1e12, 1e15, 9007199254740991)),
      fc.constantFrom("ms", "s", "m", "h", "d", "", "y", "1h30m"),
    )
    .map(([sign, n, unit]) => `${sign}${n}${unit}`),
  fc.constantFrom("1.5h", "0", "-0", "1e3", "Infinity", "NaN", "", " ", "59m", "-5m", "1h30m", "100000000d", "1h-1h"),
  fc.double(),
  fc.constantFrom(1e300, -1e300, Number.MAX_SAFE_INTEGER, -1, 0.5),
  // magnitudes at and past the range of a Date (8.64e15 ms)
  fc.tuple(fc.integer({ min: 3, max: 20 }), fc.constantFrom("s", "m", "h", "d", "")).map(([e, unit]) => `${10 ** e}${unit}`),
);

/** Instants for `set` and `since`: ISO at every range, and not quite ISO. */
const instant = fc.oneof(
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom(
    "2026-01-01T00:00:00Z",
    "+275760-09-13T00:00:00.000Z",
    "-271821-04-20T00:00:00.000Z",
    "2026-13-01",
    "yesterday",
    "0",
    "1e15",
    "req_0",
    "req_999999999999999999999",
  ),
);

const controlValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: anyJsonValue },
  { weight: 2, arbitrary: duration },
  { weight: 1, arbitrary: instant },
  {
    weight: 1,
    arbitrary: fc.constantFrom(...LIBRARY, ...VARIANTS, DEFAULT_KEY, DEFAULT_MERCHANT_ID, "../default", "default.yaml", "/etc/passwd", "DEFAULT"),
  },
);

/** Values that fit each field (well-formed or nearly), so the fuzzer gets past type checks and into the logic. */
const FIELD_VALUES: Record<string, fc.Arbitrary<unknown>> = {
  advance: duration,
  set: instant,
  freeze: fc.boolean(),
  scenario: fc.constantFrom(...LIBRARY, "../default", "default.yaml", "/etc/passwd", "DEFAULT", "nope"),
  merchant: fc.constantFrom(DEFAULT_KEY, DEFAULT_MERCHANT_ID, "nope", "__proto__"),
  variant: fc.constantFrom(...VARIANTS, "nope", "__proto__", "toString"),
  ttl: duration,
  text: fc.oneof(fc.string({ maxLength: 200 }), fc.constantFrom(DEFAULT_SECRET, `x ${DEFAULT_SECRET} y`, "eyJhbGciOiJub25lIn0.e30.")),
};
const FIELDS = Object.keys(FIELD_VALUES);
const fieldValue = (key: string): fc.Arbitrary<unknown> =>
  Object.hasOwn(FIELD_VALUES, key) ? fc.oneof({ weight: 3, arbitrary: FIELD_VALUES[key]! }, { weight: 1, arbitrary: controlValue }) : controlValue;

const ROUTE_FIELDS: Record<string, string[]> = {
  clock: ["advance", "set", "freeze"],
  sessions: ["scenario"],
  tokens: ["merchant", "variant", "ttl"],
  scan: ["text"],
};

/** A body for a route: mostly the route's own fields (with values of every type), sometimes anything. */
const controlBody = (path: string): fc.Arbitrary<Uint8Array> => {
  const own = Object.entries(ROUTE_FIELDS).find(([k]) => path.endsWith(`/${k}`))?.[1] ?? FIELDS;
  return fc.oneof(
    {
      weight: 5,
      arbitrary: fc
        .array(
          fc
            .oneof(
              { weight: 6, arbitrary: fc.constantFrom(...own) },
              { weight: 2, arbitrary: fc.constantFrom(...FIELDS) },
              { weight: 1, arbitrary: fc.constantFrom(...PROTO_KEYS) },
              { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
            )
            .chain((k) => fieldValue(k).map((v) => [k, v] as const)),
          { maxLength: 3 },
        )
        .map((pairs) => utf8(`{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v) ?? "null"}`).join(",")}}`)),
    },
    { weight: 2, arbitrary: hostileBody(64 * 1024) },
    { weight: 1, arbitrary: fc.constant(new Uint8Array(0)) },
  );
};

const queryValue = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom("-1", "0", "1", "1.5", "1e400", "NaN", "", "req_1", "req_x", "%ZZ", "9007199254740993"),
  instant,
);
const controlQuery = fc.oneof(
  { weight: 3, arbitrary: fc.constant("") },
  {
    weight: 2,
    arbitrary: fc
      .array(
        fc.tuple(
          fc.oneof(fc.constantFrom("session", "merchant", "since", "limit", "__proto__", "constructor"), fc.string({ maxLength: 6 })),
          queryValue,
        ),
        { minLength: 1, maxLength: 4 },
      )
      .map((pairs) => "?" + pairs.map(([k, v]) => `${encodeURIComponent(k)}=${v.includes("%ZZ") ? v : encodeURIComponent(v)}`).join("&")),
  },
  { weight: 1, arbitrary: fc.constantFrom("?", "?%ZZ", "?limit", "?limit=1&limit=2", `?session=${SID}`, "?since=req_1&limit=1") },
);

const PATHS: Array<[string, string[]]> = [
  ["/__sandbox/health", ["GET", "HEAD"]],
  ["/__sandbox/openapi.json", ["GET", "HEAD"]],
  ["/__sandbox/sessions", ["GET", "HEAD", "POST"]],
  [`/__sandbox/sessions/${SID}`, ["GET", "HEAD", "DELETE"]],
  [`/__sandbox/sessions/${SID}/clock`, ["GET", "HEAD", "POST"]],
  [`/__sandbox/sessions/${SID}/reset`, ["POST"]],
  [`/__sandbox/sessions/${SID}/report`, ["GET", "HEAD"]],
  ["/__sandbox/clock", ["GET", "HEAD", "POST"]],
  ["/__sandbox/reset", ["POST"]],
  ["/__sandbox/requests", ["GET", "HEAD"]],
  ["/__sandbox/report", ["GET", "HEAD"]],
  ["/__sandbox/tokens", ["POST"]],
  ["/__sandbox/scan", ["POST"]],
];

const sessionId = fc.oneof(
  fc.constantFrom("__proto__", "constructor", "ses_", "ses_0000000000000000", "%ZZ", "%00", "..", "%2F..%2Fclock", "%E2%80%AE"),
  fc.string({ maxLength: 20 }).map(encodeURIComponent),
);

const controlCase: fc.Arbitrary<ControlCase> = fc
  .record({
    route: fc.constantFrom(...PATHS),
    otherId: fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: sessionId }),
    mutate: fc.nat(),
    oddMethod: fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: method }),
    methodPick: fc.nat(),
    query: controlQuery,
    type: fc.oneof({ weight: 5, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: contentType }),
    auth: fc.constantFrom<Auth>("admin-bearer", "admin-bearer", "admin-header", "none", "wrong", "twice", "lowercase", "spaces"),
  })
  .chain(({ route, otherId, oddMethod, methodPick, query, type, auth }) => {
    const [template, methods] = route;
    const path = otherId === undefined ? template : template.replace(SID, otherId);
    return fc.tuple(mutatePath(path), controlBody(template)).map(([p, body]) => {
      const m = oddMethod ?? methods[methodPick % methods.length]!;
      const request = shown({
        method: m,
        target: p + query,
        headers: [HOST, ["Content-Type", (type ?? "application/json").replace(/[\r\n]/g, "")]],
        body: m === "GET" || m === "HEAD" ? new Uint8Array(0) : body,
      });
      return { request, needsSession: p.includes(SID) || query.includes(SID), auth };
    });
  })
  .map((c) => {
    Object.defineProperty(c, fc.toStringMethod, { value: () => `${describeRequest(c.request)} [auth: ${c.auth}]`, enumerable: false });
    return c;
  });

/** Well-formed calls (route, method, JSON, admin token all right) whose field values are fuzzed. */
const BODY_ROUTES: Array<[string, string[]]> = [
  ["/__sandbox/clock", ["advance", "set", "freeze"]],
  [`/__sandbox/sessions/${SID}/clock`, ["advance", "set", "freeze"]],
  ["/__sandbox/sessions", ["scenario"]],
  ["/__sandbox/tokens", ["merchant", "variant", "ttl"]],
  ["/__sandbox/scan", ["text"]],
];
const wellFormedCase: fc.Arbitrary<ControlCase> = fc.constantFrom(...BODY_ROUTES).chain(([path, fields]) =>
  fc
    .uniqueArray(fc.constantFrom(...fields), { maxLength: fields.length })
    .chain((keys) => fc.tuple(...keys.map((k) => fieldValue(k).map((v) => [k, v] as const))))
    .map((pairs) => {
      const request = shown({
        method: "POST",
        target: path,
        headers: [HOST, ["Content-Type", "application/json"]],
        body: utf8(JSON.stringify(Object.fromEntries(pairs))),
      });
      const c: ControlCase = { request, needsSession: path.includes(SID), auth: "admin-bearer" };
      Object.defineProperty(c, fc.toStringMethod, { value: () => describeRequest(request), enumerable: false });
      return c;
    }),
);

/**
 * What a web page's request carries (`[headers, expected code]`): another site's Origin, `null`,
 * Sec-Fetch-Site: cross-site, or a Host of the page's own (DNS rebinding). Each replaces the
 * default Host line, so a case is one signal, as a browser would send it.
 */
const WEB_PAGE: Array<[Array<[string, string]>, string]> = [
  [[HOST, ["Origin", "https://evil.example"]], "cross_site_request"],
  [[HOST, ["Origin", "null"]], "cross_site_request"],
  [[HOST, ["Origin", "http://127.0.0.1.evil.example"]], "cross_site_request"],
  [[HOST, ["Origin", "http://localhost"]], "cross_site_request"],
  [[HOST, ["Origin", "http://127.0.0.1:1"]], "cross_site_request"],
  [[HOST, ["Origin", "file://"]], "cross_site_request"],
  [[HOST, ["Origin", "not an origin"]], "cross_site_request"],
  [[HOST, ["Sec-Fetch-Site", "cross-site"]], "cross_site_request"],
  [[HOST, ["Origin", "http://127.0.0.1"], ["Sec-Fetch-Site", "cross-site"]], "cross_site_request"],
  [[["Host", "attacker.example"]], "host_not_allowed"],
  [
    [
      ["Host", "attacker.example:4010"],
      ["Origin", "http://attacker.example:4010"],
    ],
    "host_not_allowed",
  ],
  [[["Host", "127.0.0.1.nip.io"]], "host_not_allowed"],
  [[["Host", "localhost.evil.example"]], "host_not_allowed"],
  [[["Host", "sandbox.example."]], "host_not_allowed"],
  [[["Host", "evil.example@127.0.0.1"]], "host_not_allowed"],
];

/** What a script, a test or CI sends: loopback, IP and single-label Hosts, the sandbox's own Origin. */
const OWN_SITE: Array<Array<[string, string]>> = [
  [HOST],
  [["Host", "localhost:4010"]],
  [["Host", "LOCALHOST"]],
  [["Host", "app.localhost"]],
  [["Host", "127.1.2.3"]],
  [["Host", "[::1]:4010"]],
  [["Host", "10.0.0.7"]],
  [["Host", "sandbox:4010"]],
  [["Host", "sandbox."]],
  [HOST, ["Origin", "http://127.0.0.1"]],
  [
    ["Host", "localhost:4010"],
    ["Origin", "http://localhost:4010"],
  ],
  [HOST, ["Sec-Fetch-Site", "same-origin"]],
  [HOST, ["Sec-Fetch-Site", "none"]],
];

/** Any route, method, body, content type and admin token, with one web-page signal. */
const webPageCase: fc.Arbitrary<ControlCase & { expected: string | undefined }> = fc
  .record({
    route: fc.constantFrom(...PATHS),
    oddMethod: fc.oneof(
      { weight: 3, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.constantFrom("PUT", "PATCH", "DELETE", "OPTIONS") },
    ),
    methodPick: fc.nat(),
    site: fc.constantFrom(...WEB_PAGE),
    type: fc.oneof({ weight: 1, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: contentType }),
    auth: fc.constantFrom<Auth>("admin-bearer", "admin-header", "none", "wrong"),
  })
  .chain(({ route, oddMethod, methodPick, site, type, auth }) => {
    const [path, methods] = route;
    const m = oddMethod ?? methods[methodPick % methods.length]!;
    return controlBody(path).map((body) => {
      const [headers, code] = site;
      const request = shown({
        method: m,
        target: path,
        headers: [...headers, ...(type === undefined ? [] : [["Content-Type", type.replace(/[\r\n]/g, "")] as [string, string]])],
        body: m === "GET" || m === "HEAD" ? new Uint8Array(0) : body,
      });
      // Health stays open to any Host and Origin (probes); its other methods get 405 as ever.
      const expected = path === "/__sandbox/health" ? undefined : code;
      return { request, needsSession: path.includes(SID), auth, expected };
    });
  });

/** A POST of the sandbox's own site, with the admin token, not declared as JSON. */
const NOT_JSON = [
  "text/plain",
  "text/plain; charset=utf-8",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=xyz",
  "text/json",
  "application/jsonx",
  "application/json, text/plain",
  "",
];
const notJsonCase: fc.Arbitrary<ControlCase> = fc
  .record({
    route: fc.constantFrom(...PATHS.filter(([, methods]) => methods.includes("POST"))),
    site: fc.constantFrom(...OWN_SITE),
    type: fc.option(fc.constantFrom(...NOT_JSON), { nil: undefined }),
  })
  .chain(({ route, site, type }) =>
    controlBody(route[0]).map((body) => {
      const request = shown({
        method: "POST",
        target: route[0],
        headers: [...site, ...(type === undefined ? [] : [["Content-Type", type] as [string, string]])],
        body,
      });
      return { request, needsSession: route[0].includes(SID), auth: "admin-bearer" as Auth };
    }),
  );

/** A well-formed call from one of the sandbox's own sites. */
const ownSiteCase: fc.Arbitrary<ControlCase> = fc.tuple(wellFormedCase, fc.constantFrom(...OWN_SITE)).map(([c, site]) => {
  const request = shown({ ...c.request, headers: [...site, ...c.request.headers.filter(([n]) => n !== "Host")] });
  return { ...c, request };
});

// ---------------------------------------------------------------------------------------------

describe("fuzz: control plane over real HTTP", { timeout: FUZZ_TIMEOUT }, () => {
  it("without an admin token: random bodies, wrong types, queries, methods, paths", async () => {
    await fc.assert(
      fc.asyncProperty(controlCase, async (c) => void (await check(open, c))),
      params(400),
    );
  });

  it("with an admin token: the same, with the admin token right, wrong, missing, repeated", async () => {
    await fc.assert(
      fc.asyncProperty(controlCase, async (c) => void (await check(guarded, c))),
      params(400),
    );
  });

  it("well-formed calls with fuzzed values: clock, session clock, sessions, tokens, scan", async () => {
    await fc.assert(
      fc.asyncProperty(wellFormedCase, async (c) => void (await check(guarded, c))),
      params(300),
    );
  });
});

describe("fuzz: the control plane keeps web pages out", { timeout: FUZZ_TIMEOUT }, () => {
  it("a web page's call (another site's Origin, Origin: null, Sec-Fetch-Site: cross-site, a foreign Host) gets 403 and changes nothing", async () => {
    const property = async (target: Target, c: ControlCase & { expected: string | undefined }) => {
      const answer = await check(target, c);
      // HEAD gets the status and headers of the refusal without its body, so without its code.
      const code = c.request.method === "HEAD" ? undefined : c.expected;
      if (c.expected !== undefined) expect({ status: answer.status, code: answer.code }, describeRequest(c.request)).toEqual({ status: 403, code });
      else expect(answer.status, describeRequest(c.request)).not.toBe(403);
    };
    await fc.assert(
      fc.asyncProperty(webPageCase, (c) => property(open, c)),
      params(150),
    );
    await fc.assert(
      fc.asyncProperty(webPageCase, (c) => property(guarded, c)),
      params(150),
    );
  });

  it("a POST not declared as JSON gets 415 control_json_required and changes nothing", async () => {
    await fc.assert(
      fc.asyncProperty(notJsonCase, async (c) => {
        const answer = await check(guarded, c);
        expect(answer, describeRequest(c.request)).toEqual({ status: 415, code: "control_json_required" });
      }),
      params(100),
    );
  });

  it("a well-formed call from the sandbox's own site is never refused as a web page's", async () => {
    await fc.assert(
      fc.asyncProperty(ownSiteCase, async (c) => {
        const answer = await check(guarded, c);
        expect([403, 415], `${answer.status} ${String(answer.code)}: ${describeRequest(c.request)}`).not.toContain(answer.status);
      }),
      params(100),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// What the fuzzer found, shrunk.

describe("fuzz findings, minimal reproducers", { timeout: FUZZ_TIMEOUT }, () => {
  it("POST /__sandbox/clock with an enormous advance is refused (400) and leaves the clock alone", async () => {
    const t = open.t;
    await t.call("/__sandbox/reset", postEmpty());
    const before = await t.call("/__sandbox/clock");
    const r = await t.call("/__sandbox/clock", postJson({ advance: "100000000d" }));
    const after = await t.call("/__sandbox/clock");
    await t.call("/__sandbox/reset", postEmpty());
    expect({ status: r.status, clockAfter: after.status }).toEqual({ status: 400, clockAfter: 200 });
    expect(after.text).toBe(before.text);
  });

  it("POST /__sandbox/tokens with an enormous ttl is refused (400) with what the limit is", async () => {
    const t = open.t;
    await t.call("/__sandbox/reset", postEmpty());
    const m = await t.call("/__sandbox/tokens", postJson({ ttl: 1e300 }));
    expect(m.status).toBe(400);
    expect(m.json).toMatchObject({ code: "mint_ttl_invalid", error_description: "ttl must be at most 3650d (ten years), got '1e+300'." });
  });
});
