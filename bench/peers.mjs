// The peers of BENCH_PEERS=1: WireMock (its npm package, on the machine's Java runtime), Prism and
// Mockoon (from npm), each started through npx with stubs for the bench's requests. They answer
// fixed bodies: a static token, no signing and no verifying, so their rows measure HTTP and
// matching only. Each is skipped, with the reason, when it cannot start here.
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./support.mjs";

const TOKEN_BODY = { access_token: "static-peer-token", token_type: "Bearer", expires_in: 3600 };
const PAYMENT_BODY = { merchant_id: "m", operation: "GET /api/v2/payment/p_1" };
const INIT_BODY = { payment_id: "pay_1" };
const READY_PATH = "/api/v2/payment/p_1";

/**
 * The bench's requests as an OpenAPI document with examples: what Prism and Mockoon serve. The
 * answer is the schema's `example` too, since Mockoon's default answer is built from the schema
 * (named `examples` become extra answers it does not pick); and a JSON request body is declared
 * wherever the bench sends one (Prism answers 415 to an undeclared one).
 */
function openApiStubs() {
  const json = (description, value) => ({
    description,
    content: { "application/json": { schema: { type: "object", example: value }, examples: { fixed: { value } } } },
  });
  const jsonBody = { content: { "application/json": { schema: { type: "object" } } } };
  return {
    openapi: "3.0.3",
    info: { title: "merchant API stubs for the bench", version: "1" },
    paths: {
      "/api/v2/auth/token": {
        post: {
          requestBody: jsonBody,
          responses: { 200: json("a static token", TOKEN_BODY) },
        },
      },
      "/api/v2/payment/init": { post: { requestBody: jsonBody, responses: { 201: json("a payment", INIT_BODY) } } },
      "/api/v2/payment/{id}": {
        get: {
          parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
          responses: { 200: json("a payment", PAYMENT_BODY) },
        },
      },
    },
  };
}

/** The same stubs as WireMock mappings. */
function wireMockStubs() {
  const answer = (status, jsonBody) => ({ status, jsonBody, headers: { "content-type": "application/json" } });
  return {
    mappings: [
      { request: { method: "POST", url: "/api/v2/auth/token" }, response: answer(200, TOKEN_BODY) },
      { request: { method: "POST", url: "/api/v2/payment/init" }, response: answer(201, INIT_BODY) },
      { request: { method: "GET", urlPathPattern: "/api/v2/payment/[^/]+" }, response: answer(200, PAYMENT_BODY) },
    ],
  };
}

/** Each peer: its npm package, and its arguments for a port and a folder holding its stubs. */
const PEERS = [
  {
    name: "WireMock",
    pkg: "wiremock",
    needs: "java",
    stubs: (dir) => {
      mkdirSync(join(dir, "mappings"));
      writeFileSync(join(dir, "mappings", "stubs.json"), JSON.stringify(wireMockStubs()));
    },
    // The journal capped like the sandbox's (1,000 requests), so neither holds more than the other.
    args: (port, dir) => ["--port", String(port), "--root-dir", dir, "--disable-banner", "--max-request-journal-entries", "1000"],
  },
  {
    name: "Prism",
    pkg: "@stoplight/prism-cli",
    bin: "prism",
    stubs: (dir) => writeFileSync(join(dir, "openapi.json"), JSON.stringify(openApiStubs())),
    args: (port, dir) => ["mock", "--host", "127.0.0.1", "--port", String(port), join(dir, "openapi.json")],
  },
  {
    name: "Mockoon",
    pkg: "@mockoon/cli",
    bin: "mockoon-cli",
    stubs: (dir) => writeFileSync(join(dir, "openapi.json"), JSON.stringify(openApiStubs())),
    args: (port, dir) => ["start", "--data", join(dir, "openapi.json"), "--port", String(port)],
  },
];

function hasCommand(command, args) {
  try {
    execFileSync(command, args, { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

const npxArgs = (peer, args) => ["--yes", "--package", peer.pkg, "--", peer.bin ?? peer.pkg, ...args];

/**
 * Starts one peer and resolves once READY_PATH answers 200; the time from spawn to then is its
 * start → first 200. npx fetches the package once, untimed, before (`--version`), so the start
 * measures the peer and not the download.
 */
async function startPeer(peer, timeoutMs = 60_000) {
  if (peer.needs && !hasCommand(peer.needs, ["-version"])) return { skipped: `no '${peer.needs}' on this machine` };
  if (!hasCommand("npx", npxArgs(peer, ["--version"]))) return { skipped: `npx could not run ${peer.pkg}` };
  const dir = mkdtempSync(join(tmpdir(), `bench-${peer.pkg.replace(/\W/g, "-")}-`));
  peer.stubs(dir);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const started = performance.now();
  // stdout read and dropped, so a chatty peer never blocks on a full pipe.
  const child = spawn("npx", npxArgs(peer, peer.args(port, dir)), { cwd: dir, stdio: ["ignore", "pipe", "pipe"], detached: true });
  child.stdout.resume();
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr = (stderr + d).slice(-2000);
  });
  let exited = false;
  child.once("exit", () => {
    exited = true;
  });
  while (performance.now() - started < timeoutMs && !exited) {
    try {
      const r = await fetch(url + READY_PATH);
      await r.arrayBuffer();
      if (r.status === 200) return { name: peer.name, child, url, dir, startMs: performance.now() - started };
    } catch {}
    await new Promise((r) => setTimeout(r, 20));
  }
  await stopPeer({ child, dir });
  return { skipped: `${peer.name} did not answer ${READY_PATH} with 200 within ${timeoutMs / 1000} s: ${stderr.trim().slice(-300)}` };
}

/** npx starts the peer as a child (and WireMock's wrapper Java as a grandchild): the whole group goes. */
async function stopPeer(server) {
  try {
    process.kill(-server.child.pid, "SIGTERM");
  } catch {}
  if (server.child.exitCode === null && server.child.signalCode === null) await new Promise((resolve) => server.child.once("exit", resolve));
  rmSync(server.dir, { recursive: true, force: true }); // its stubs, and WireMock's journal files
}

/**
 * Every peer that starts, measured with `measure(server)` (the run's own request table), each
 * stopped before the next starts. A peer that cannot start is a row that says why.
 */
export async function measurePeers(measure) {
  const results = [];
  for (const peer of PEERS) {
    const server = await startPeer(peer);
    if (server.skipped) {
      results.push({ name: peer.name, skipped: server.skipped });
      continue;
    }
    try {
      results.push({ name: peer.name, startMs: Math.round(server.startMs), ...(await measure(server)) });
    } finally {
      await stopPeer(server);
    }
  }
  return results;
}
