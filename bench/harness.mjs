// The bench's load harness, shared by run.mjs and quick.mjs: starting a server and timing its
// start, loading it with wrk (or autocannon), reading its CPU and RSS from /proc, and the request
// table every server is measured with.
import autocannon from "autocannon";
import { execFile, execFileSync, spawn } from "node:child_process";
import { promisify } from "node:util";
import { readFileSync, readdirSync, writeFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, rssKb } from "./support.mjs";

export const DURATION = Number(process.env.BENCH_DURATION ?? 5);
// The cache-miss row: more distinct tokens than a verified-token cache should keep.
export const ROTATION_TOKENS = 5000;
export const CLK_TCK = 100; // Linux USER_HZ
const benchStarted = Date.now();

/** A line on stderr as each part starts: a run of minutes says where it is (and where it stopped). */
export function progress(what) {
  process.stderr.write(`bench: ${Math.round((Date.now() - benchStarted) / 1000)} s: ${what}\n`);
}
// wrk (C, one thread) where installed: it leaves the server more of a 2-core machine than
// autocannon (Node) does, and it is what the reference figures were measured with.
export const LOADGEN = process.env.BENCH_LOADGEN ?? (hasWrk() ? "wrk" : "autocannon");

function hasWrk() {
  try {
    execFileSync("wrk", ["--version"], { stdio: "ignore" });
    return true;
  } catch (e) {
    return e.status === 1; // wrk --version prints its usage and exits 1
  }
}

export const CREDENTIALS = JSON.stringify({ api_key: "sandbox-api-key", api_secret: "sandbox-api-secret" });

/**
 * The servers this run started and has not seen exit: killed when the bench itself ends early (an
 * uncaught error, Ctrl-C), so none outlives it. One crashed run left its sandbox listening 40 minutes.
 */
const running = new Set();
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130));

export async function startServer(name, args, env = {}) {
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] });
  running.add(child);
  child.once("exit", () => running.delete(child));
  let out = "";
  const url = await new Promise((resolve, reject) => {
    const onData = (d) => {
      out += d;
      const m = /listening on (http:\/\/[^\s"]+)/.exec(out);
      if (!m) return;
      // Past this line stdout is the request log (a line per request with the default text log):
      // no longer kept, or this process would hold every line of the run.
      child.stdout.off("data", onData);
      resolve(m[1]);
    };
    child.stdout.on("data", onData);
    child.on("exit", (code) => reject(new Error(`${name} exited with ${code}`)));
  });
  // Start → first 200 on the health endpoint, as a CI job waiting for the container would see it.
  for (;;) {
    try {
      const r = await fetch(`${url}/__sandbox/health`);
      if (r.status === 200) break;
    } catch {}
    await new Promise((r) => setTimeout(r, 2));
  }
  const startMs = performance.now() - started;
  // Read and dropped from here on: writes to a pipe are synchronous in Node on Linux, so a pipe
  // left full would stall the server on its next log line and the bench would measure the stall.
  child.stdout.resume();
  return { name, child, url, startMs };
}

export async function stopServer(server) {
  server.child.kill("SIGTERM");
  await exited(server.child);
}

/** Resolves once the child has exited, also when it had already (no 'exit' event would come). */
function exited(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", resolve));
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1];
}

/** /proc/<pid>/stat's fields after the command name (which may itself hold ") "). */
function statFields(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
}

/**
 * The process and its descendants: a peer runs under npx (and WireMock's npm wrapper starts
 * Java), so its CPU and memory are the whole tree's. A server started directly is just itself.
 */
function processTree(pid) {
  const parents = new Map();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      parents.set(Number(entry), Number(statFields(entry)[1]));
    } catch {} // gone between the listing and the read
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) for (const [child, parent] of parents) if (parent === tree[i]) tree.push(child);
  return tree;
}

/** Summed over the process tree; a process that ends between the listing and the read counts 0. */
function sumOverTree(pid, read) {
  return processTree(pid).reduce((sum, p) => {
    try {
      return sum + read(p);
    } catch {
      return sum;
    }
  }, 0);
}

/** CPU time (utime + stime, in clock ticks of 1/100 s) of the process and its descendants. */
export function cpuTicks(pid) {
  return sumOverTree(pid, (p) => {
    const fields = statFields(p);
    return Number(fields[11]) + Number(fields[12]); // utime + stime
  });
}

export function rssMb(pid) {
  return Math.round(sumOverTree(pid, rssKb) / 1024);
}

export async function load(server, endpoint, connections, duration = DURATION) {
  const before = cpuTicks(server.child.pid);
  const result =
    LOADGEN === "wrk"
      ? await wrk(server.url + endpoint.path, endpoint.request, connections, duration)
      : await autocannonRun(server.url + endpoint.path, endpoint.request, connections, duration);
  const cpuMs = ((cpuTicks(server.child.pid) - before) * 1000) / CLK_TCK;
  // Every answer should be the expected kind: 2xx, or 404 for the unknown path.
  const unexpected = endpoint.expect4xx ? result.total - result.non2xx : result.non2xx;
  return {
    reqPerSec: Math.round(result.reqPerSec),
    p50: result.p50,
    p99: result.p99,
    cpuUsPerReq: result.total ? Math.round((cpuMs * 1000) / result.total) : null,
    errors: result.errors + unexpected,
    total: result.total,
  };
}

async function autocannonRun(url, request, connections, duration) {
  const { tokens, ...fixed } = request;
  let next = 0;
  // With `tokens`, each request carries the next one of the list, round and round.
  const rotation = tokens && {
    requests: [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, authorization: `Bearer ${tokens[next++ % tokens.length]}` } }) }],
  };
  const r = await autocannon({ url, connections, duration, ...fixed, ...rotation });
  return {
    reqPerSec: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    total: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
  };
}

const execFileAsync = promisify(execFile);
const wrkDir = mkdtempSync(join(tmpdir(), "bench-wrk-"));

/**
 * One wrk run. Not execFileSync: this process must keep reading while wrk loads the server (the
 * event stream the session rows hold open, as a QA page does), or the stream stalls and the
 * sandbox closes it as a client that fell behind.
 */
async function wrk(url, request = {}, connections, duration) {
  const script = join(wrkDir, "request.lua");
  const headers = Object.entries(request.headers ?? {}).map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`);
  writeFileSync(
    script,
    [
      `wrk.method = ${JSON.stringify(request.method ?? "GET")}`,
      ...(request.body ? [`wrk.body = ${JSON.stringify(request.body)}`] : []),
      ...headers,
      ...(request.tokens ? wrkRotation(request.tokens) : []),
    ].join("\n") + "\n",
  );
  const { stdout: out } = await execFileAsync("wrk", ["-t1", `-c${connections}`, `-d${duration}s`, "--latency", "-s", script, url], {
    encoding: "utf8",
  });
  const ms = (text) => {
    const m = /([\d.]+)(us|ms|s)/.exec(text);
    return m ? +(Number(m[1]) * { us: 0.001, ms: 1, s: 1000 }[m[2]]).toFixed(2) : null;
  };
  const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    reqPerSec: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)[1]),
    p50: ms(/\s50%\s+(\S+)/.exec(out)[1]),
    p99: ms(/\s99%\s+(\S+)/.exec(out)[1]),
    total: Number(/(\d+) requests in/.exec(out)[1]),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
    errors: errors ? errors.slice(1).reduce((a, b) => a + Number(b), 0) : 0,
  };
}

/**
 * The wrk script's part for a token rotation: the tokens from a file (one a line), each request
 * formatted once in init, then `request()` hands out the next, so the load generator does no
 * string work per request and every token comes round in turn.
 */
function wrkRotation(tokens) {
  const file = join(wrkDir, "tokens.txt");
  writeFileSync(file, tokens.join("\n") + "\n");
  return [
    "local requests = {}",
    "local turn = 0",
    "function init(args)",
    `  for token in io.lines(${JSON.stringify(file)}) do`,
    "    local headers = {}",
    "    for k, v in pairs(wrk.headers) do headers[k] = v end",
    '    headers["Authorization"] = "Bearer " .. token',
    "    requests[#requests + 1] = wrk.format(nil, nil, headers)",
    "  end",
    "end",
    "function request()",
    "  turn = turn % #requests + 1",
    "  return requests[turn]",
    "end",
  ];
}

export async function tokenFrom(url) {
  const r = await fetchFresh(`${url}/api/v2/auth/token`, { method: "POST", headers: { "content-type": "application/json" }, body: CREDENTIALS });
  const body = await r.json();
  if (r.status !== 200 || !body.access_token) throw new Error(`token exchange at ${url} answered ${r.status}: ${JSON.stringify(body)}`);
  return body.access_token;
}

/** `count` calls of `task(i)`, at most `concurrency` at a time (the server has one core to give). */
export async function inParallel(count, concurrency, task) {
  const results = new Array(count);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) results[i] = await task(i);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return results;
}

/** Distinct tokens from the token exchange, each signed by the server with the run's algorithm. */
export function tokensFrom(url, count) {
  return inParallel(count, 10, () => tokenFrom(url));
}

export function endpoints(token, tokens = []) {
  return [
    {
      key: "token",
      label: "token exchange",
      path: "/api/v2/auth/token",
      request: { method: "POST", headers: { "content-type": "application/json" }, body: CREDENTIALS },
    },
    { key: "protected", label: "protected call", path: "/api/v2/payment/p_1", request: { headers: { authorization: `Bearer ${token}` } } },
    {
      key: "init",
      label: "payment/init",
      path: "/api/v2/payment/init",
      request: { method: "POST", headers: { authorization: "Bearer sandbox-payment-token", "content-type": "application/json" }, body: "{}" },
    },
    { key: "unknown", label: "unknown path", path: "/nope", request: {}, expect4xx: true },
    // Each token seen once every ROTATION_TOKENS requests: a verified-token cache misses.
    { key: "rotation", label: `protected call, ${ROTATION_TOKENS} tokens in rotation`, path: "/api/v2/payment/p_1", request: { tokens } },
  ];
}

/**
 * An event stream of one session (GET /__sandbox/events?session=), as an open QA page holds it:
 * read and discarded by this process. `ended` says whether the sandbox closed it before we did
 * (an overflow: the client fell a buffer behind), which would leave part of a run without it.
 */
async function openEventStream(url) {
  const controller = new AbortController();
  const res = await fetch(url, { signal: controller.signal });
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${await res.text()}`);
  const reader = res.body.getReader();
  const state = { bytes: 0, ended: false, closing: false };
  const reading = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        state.bytes += value.length;
      }
    } catch {}
    if (!state.closing) state.ended = true;
  })();
  return {
    state,
    async close() {
      state.closing = true;
      controller.abort();
      await reading;
    },
  };
}

/**
 * fetch, once more if the first try met a socket the server had already closed: this process's
 * pooled keep-alive connection from the start-up health checks sits idle through the loads before,
 * past the server's keep-alive timeout, and undici may pick it just as it closes.
 */
export async function fetchFresh(url, init) {
  try {
    return await fetch(url, init);
  } catch (e) {
    if (e?.cause?.code !== "UND_ERR_SOCKET") throw e;
    return fetch(url, init);
  }
}

/**
 * The protected call under a session's base URL (`/s/<id>/api/v2/payment/…` with that session's
 * token), as an integration configured with `base_url` sends it: with no event stream open, then
 * with one stream of that session open (an open QA page), which journals each request to the
 * stream and recomputes the session's findings.
 */
export async function measureSessionRows(server) {
  const created = await fetchFresh(`${server.url}/__sandbox/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  if (created.status !== 201) throw new Error(`POST /__sandbox/sessions answered ${created.status}: ${await created.text()}`);
  const session = await created.json();
  const base = `/s/${session.id}`;
  const exchanged = await fetchFresh(`${server.url}${base}/api/v2/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ api_key: session.merchant.api_key, api_secret: session.merchant.api_secret }),
  });
  const token = (await exchanged.json()).access_token;
  const call = { path: `${base}/api/v2/payment/p_1`, request: { headers: { authorization: `Bearer ${token}` } } };
  const rows = { session: await load(server, call, 10) };
  const stream = await openEventStream(`${server.url}/__sandbox/events?session=${session.id}`);
  rows.sessionStream = await load(server, call, 10);
  // Let the reader take what arrived in the last moments before asking whether the stream ended.
  await new Promise((r) => setTimeout(r, 100));
  const streamEndedEarly = stream.state.ended;
  await stream.close();
  // An overflowed stream measured part of the run without a page: counted as an error of the row.
  if (streamEndedEarly) rows.sessionStream.errors += 1;
  return { rows, stream: { bytes: stream.state.bytes, endedEarly: streamEndedEarly } };
}
