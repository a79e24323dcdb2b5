import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/adapters/node-http.js";
import { createSandbox, type Sandbox } from "../../src/app/sandbox.js";
import { DEFAULT_PAYMENT_TOKEN, T0 } from "../support/server.js";
import { documentedStatus, OpenApiChecker, type WireReply, wireRequest } from "../support/openapi-check.js";

/**
 * A test of the tests: the OpenAPI checks (test/support/openapi-check.ts, which
 * openapi-answers, openapi-conformance and openapi.test.ts use) must be able to fail. A sandbox
 * made to answer what its document does not say, or a document made to leave out what the sandbox
 * answers, is reported; only an answer a scenario rule scripted (X-Sandbox-Rule) may be the
 * operation's `default`.
 */

const INIT = "/api/v2/payment/init";
const GOOD_INIT = { authorization: `Bearer ${DEFAULT_PAYMENT_TOKEN}`, "content-type": "application/json" };
const INIT_BODY = JSON.stringify({ amount: 1999, currency: "EUR" });

/** A 409 problem+json, the status no operation of the merchant API lists. */
function conflict(headers: Record<string, string> = {}) {
  const detail = "Served on purpose.";
  const body = {
    type: "about:blank",
    title: "Conflict",
    status: 409,
    detail,
    instance: INIT,
    error: "invalid_request",
    error_description: detail,
    code: "simulated_409",
  };
  return { status: 409, headers: { "content-type": "application/problem+json", ...headers }, body: JSON.stringify(body) };
}

/** The sandbox, but payment/init answers `answer` instead of its own: what the mutation of issue 25 does. */
function withPaymentInit(sandbox: Sandbox, answer: () => ReturnType<typeof conflict>): Sandbox {
  const mutated = Object.create(sandbox) as Sandbox;
  mutated.handle = async (request) => {
    const response = await sandbox.handle(request);
    return request.method === "POST" && request.path === INIT ? answer() : response;
  };
  return mutated;
}

let plain: RunningServer;
let undocumented: RunningServer;
let scripted: RunningServer;

beforeAll(async () => {
  const sandboxes = await Promise.all([0, 1, 2].map(() => createSandbox({ frozenAt: T0 })));
  [plain, undocumented, scripted] = await Promise.all([
    startServer(sandboxes[0]!, { port: 0 }),
    startServer(
      withPaymentInit(sandboxes[1]!, () => conflict()),
      { port: 0 },
    ),
    startServer(
      withPaymentInit(sandboxes[2]!, () => conflict({ "x-sandbox-rule": "test-of-the-test/0" })),
      { port: 0 },
    ),
  ]);
});
afterAll(async () => {
  await Promise.all([plain, undocumented, scripted].map((s) => s?.close()));
});

// biome-ignore lint/suspicious/noExplicitAny: the served OpenAPI document, changed member by member
type Doc = any;

async function served(server: RunningServer): Promise<Doc> {
  const r = await wireRequest(server.port, "GET", "/__sandbox/openapi.json");
  expect(r.status).toBe(200);
  return JSON.parse(r.body.toString("utf8"));
}

function postInit(server: RunningServer, path = INIT, headers: Record<string, string> = GOOD_INIT): Promise<WireReply> {
  return wireRequest(server.port, "POST", path, headers, INIT_BODY);
}

/** The response object `status` of payment/init, followed to where it is written (a shared response). */
function initResponse(doc: Doc, status: string): Doc {
  const response = doc.paths[INIT].post.responses[status];
  return response.$ref ? doc.components.responses[response.$ref.split("/").at(-1)] : response;
}

describe("the OpenAPI checks can fail: an undocumented answer is reported", () => {
  it("undocumented status: payment/init answering 409 (no X-Sandbox-Rule) is reported, not taken for the scripted default", async () => {
    const checker = new OpenApiChecker(await served(undocumented));
    const reply = await postInit(undocumented);
    expect(reply.status).toBe(409);
    expect(reply.headers.has("x-sandbox-rule")).toBe(false);
    const violations = checker.violations(INIT, "post", reply, "POST /api/v2/payment/init (good)");
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatch(/^POST \/api\/v2\/payment\/init \(good\) → 409: status not documented \(lists .*default, no X-Sandbox-Rule\)/);
    // The rule the conformance tests share: no fallback without the header.
    expect(documentedStatus((await served(undocumented)).paths[INIT].post.responses, 409, false)).toBeUndefined();
  });

  it("undocumented status: the same 409 marked X-Sandbox-Rule is a scripted answer, the operation's default", async () => {
    const checker = new OpenApiChecker(await served(scripted));
    const reply = await postInit(scripted);
    expect(reply.status).toBe(409);
    expect(checker.violations(INIT, "post", reply, "POST /api/v2/payment/init (scripted)")).toEqual([]);
  });

  it("undocumented status: a real scenario rule's 409 carries X-Sandbox-Rule and passes as the default", async () => {
    const checker = new OpenApiChecker(await served(plain));
    const made = await wireRequest(plain.port, "POST", "/__sandbox/sessions", { "content-type": "application/json" }, "{}");
    const session = JSON.parse(made.body.toString("utf8"));
    const rule = { next: { endpoint: "payment-init", times: 1, then: { respond: { status: 409 } } } };
    const acted = await wireRequest(
      plain.port,
      "POST",
      `/__sandbox/sessions/${session.id}/actions`,
      { "content-type": "application/json" },
      JSON.stringify(rule),
    );
    expect(acted.status, acted.body.toString("utf8")).toBe(200);
    const reply = await postInit(plain, INIT, { ...GOOD_INIT, authorization: `Bearer ${session.merchant.payment_token}` });
    expect(reply.status).toBe(409);
    expect(reply.headers.get("x-sandbox-rule")?.[0]).toMatch(/\S/);
    expect(checker.violations(INIT, "post", reply, "POST /api/v2/payment/init (a session's next rule)")).toEqual([]);
  });

  it("undocumented code: a document whose payment/init 400 leaves out token_in_query reports the answer", async () => {
    const doc = await served(plain);
    const reply = await postInit(plain, `${INIT}?access_token=x`);
    expect(reply.status).toBe(400);
    expect(JSON.parse(reply.body.toString("utf8")).code).toBe("token_in_query");
    expect(new OpenApiChecker(doc).violations(INIT, "post", reply, "as served")).toEqual([]);
    const response = structuredClone(initResponse(doc, "400"));
    const narrowed = response.content["application/problem+json"].schema.allOf[1].properties.code;
    narrowed.enum = narrowed.enum.filter((c: string) => c !== "token_in_query");
    doc.paths[INIT].post.responses["400"] = response;
    const violations = new OpenApiChecker(doc).violations(INIT, "post", reply, "without the code");
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatch(
      /^without the code → 400: body does not match the application\/problem\+json schema: data\/code must be equal to one of the allowed values/,
    );
  });

  it("undocumented status: a document without payment/init's 401 reports the answer, though the path has a default", async () => {
    const doc = await served(plain);
    const reply = await postInit(plain, INIT, { "content-type": "application/json" });
    expect(reply.status).toBe(401);
    delete doc.paths[INIT].post.responses["401"];
    expect(doc.paths[INIT].post.responses.default).toBeDefined();
    expect(new OpenApiChecker(doc).violations(INIT, "post", reply, "without 401")).toEqual([
      expect.stringMatching(/^without 401 → 401: status not documented/),
    ]);
  });
});

describe("undocumented paths: an address the document does not list answers only 404 not_found", () => {
  // Addresses browsers, scanners and newcomers try first.
  const ADDRESSES = [
    "/",
    "/index.html",
    "/favicon.ico",
    "/robots.txt",
    "/api",
    "/api/v2",
    "/api/v2/",
    "/__sandbox",
    "/.well-known/openid-configuration",
  ];

  it("each is documented (and answers as documented) or is 404 not_found", async () => {
    const doc = await served(plain);
    const checker = new OpenApiChecker(doc);
    const wrong: string[] = [];
    for (const path of ADDRESSES) {
      for (const method of ["GET", "HEAD", "POST"]) {
        const reply = await wireRequest(plain.port, method, path, { "content-type": "application/json" }, method === "POST" ? "{}" : undefined);
        const where = `${method} ${path}`;
        const listed = doc.paths[path]?.[method.toLowerCase()] !== undefined;
        if (listed) wrong.push(...checker.violations(path, method.toLowerCase(), reply, where));
        else if (reply.status !== 404 || (method !== "HEAD" && JSON.parse(reply.body.toString("utf8")).code !== "not_found"))
          wrong.push(`${where} → ${reply.status}, an address the document does not list: ${reply.body.toString("utf8").slice(0, 120)}`);
      }
    }
    expect(wrong).toEqual([]);
    // `/` is listed: the redirect a browser opening the sandbox's address follows.
    expect(Object.keys(doc.paths["/"])).toEqual(["get", "head"]);
  });
});
