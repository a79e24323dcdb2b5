// Fault checks (not part of `npm test`): the sandbox CLI stopped by SIGTERM under load and with slow
// requests in flight, clients that abort mid-body and mid-response, the drop_connection scenario
// action under concurrent load, a scenario response template that fails at request time, and a
// secret scan of everything the processes printed. Each check is named and passes or fails on its
// own. Builds nothing: run `npm run build` first. Loopback only, bounded (well under 60 s). Writes
// bench/results/faults.{json,md}; exits 1 when a check fails.
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, machineDescription, rssKb, scanForSecrets, startSandboxCli, tokenSegmentSet, writeRecordedRun } from "./support.mjs";

const DEFAULT_CREDENTIALS = { api_key: "sandbox-api-key", api_secret: "sandbox-api-secret" };
const PAYMENT_TOKEN = "sandbox-payment-token";
const secrets = new Set(["sandbox-api-secret", "sandbox-payment-token", "sandbox-password"]);
const issuedTokens = new Set();
const outputs = []; // { label, stdout, stderr } of every process started
const checks = [];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// Helpers

async function startSandbox(label, extraArgs = []) {
  const server = await startSandboxCli(label, extraArgs);
  outputs.push(server.out);
  return server;
}

async function stopSandbox(server) {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return server.exited;
  server.child.kill("SIGTERM");
  const exit = await Promise.race([server.exited, sleep(3000).then(() => null)]);
  if (exit) return exit;
  server.child.kill("SIGKILL");
  return server.exited;
}

const fdCount = (pid) => readdirSync(`/proc/${pid}/fd`).length;
const mb = (kb) => +(kb / 1024).toFixed(1);

/**
 * One HTTP request. Resolves with what came back (complete or not) once a response started;
 * rejects when no response came at all (refused, reset, dropped).
 */
function call(server, { method = "GET", path, headers = {}, body, agent = false, timeoutMs = 5000 }) {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: server.host,
      port: server.port,
      method,
      path,
      headers: { ...(agent === false ? { connection: "close" } : {}), ...headers },
      agent,
    });
    req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error("client timeout"), { code: "CLIENT_TIMEOUT" })));
    req.on("error", reject);
    req.on("response", (res) => {
      const chunks = [];
      let settled = false;
      const done = (error) => {
        if (settled) return;
        settled = true;
        const text = Buffer.concat(chunks).toString("utf8");
        resolve({ status: res.statusCode, headers: res.headers, body: text, complete: res.complete && !error, error: error?.code ?? error?.message });
      };
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => done());
      res.on("error", (e) => done(e));
      res.on("close", () => done(res.complete ? undefined : new Error("closed before the end")));
    });
    req.end(body);
  });
}

/** Why a response is not a complete, valid answer of the expected status; undefined when it is. */
function invalidity(r, expectedStatus) {
  if (!r.complete) return `incomplete body (${r.error ?? "closed"}): ${Buffer.byteLength(r.body)} of ${r.headers["content-length"]} bytes`;
  if (r.headers["content-length"] !== undefined && Number(r.headers["content-length"]) !== Buffer.byteLength(r.body)) {
    return `content-length ${r.headers["content-length"]} but ${Buffer.byteLength(r.body)} bytes`;
  }
  if (/json/.test(r.headers["content-type"] ?? "")) {
    try {
      JSON.parse(r.body);
    } catch {
      return `body is not valid JSON: ${r.body.slice(0, 80)}`;
    }
  }
  if (expectedStatus !== undefined && r.status !== expectedStatus) return `status ${r.status}, expected ${expectedStatus}: ${r.body.slice(0, 160)}`;
  return undefined;
}

function rememberToken(body) {
  try {
    const t = JSON.parse(body).access_token ?? JSON.parse(body).token;
    if (typeof t === "string") issuedTokens.add(t);
    return t;
  } catch {
    return undefined;
  }
}

async function tokenFor(server, credentials = DEFAULT_CREDENTIALS) {
  const r = await call(server, {
    method: "POST",
    path: "/api/v2/auth/token",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(credentials),
  });
  if (r.status !== 200) throw new Error(`token exchange → ${r.status}: ${r.body.slice(0, 200)}`);
  return rememberToken(r.body);
}

/** The default merchant's traffic: each kind with the status it must get. */
function defaultMix(token) {
  const json = { "content-type": "application/json" };
  return [
    { kind: "protected", expected: 200, method: "GET", path: "/api/v2/payment/p_1", headers: { authorization: `Bearer ${token}` } },
    { kind: "token", expected: 200, method: "POST", path: "/api/v2/auth/token", headers: json, body: JSON.stringify(DEFAULT_CREDENTIALS) },
    {
      kind: "init",
      expected: 201,
      method: "POST",
      path: "/api/v2/payment/init",
      headers: { ...json, authorization: `Bearer ${PAYMENT_TOKEN}` },
      body: '{"amount":1000}',
    },
    { kind: "cashout", expected: 200, method: "POST", path: "/api/v2/cashout/payouts", headers: { authorization: `Bearer ${token}` } },
    { kind: "unknown", expected: 404, method: "GET", path: "/nope" },
  ];
}

/** `workers` loops, each on its own keep-alive connection, until stop() is called. */
function driveLoad(server, workers, mix) {
  const stats = { responses: 0, valid: 0, invalid: 0, invalidSamples: [], noResponse: {}, noResponseSentAt: [], byKind: {} };
  let stopped = false;
  const onResponse = [];
  const loop = async (w) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    let i = w;
    while (!stopped) {
      const spec = mix[i++ % mix.length];
      const sentAt = performance.now();
      try {
        const r = await call(server, { ...spec, agent });
        const at = performance.now();
        stats.responses++;
        const bad = invalidity(r, spec.expected);
        stats.byKind[spec.kind] ??= { ok: 0, bad: 0 };
        if (bad) {
          stats.invalid++;
          stats.byKind[spec.kind].bad++;
          if (stats.invalidSamples.length < 10) stats.invalidSamples.push(`${spec.kind}: ${bad}`);
        } else {
          stats.valid++;
          stats.byKind[spec.kind].ok++;
          if (spec.kind === "token") rememberToken(r.body);
        }
        for (const f of onResponse) f(r, at);
      } catch (e) {
        const code = e.code ?? e.message;
        stats.noResponse[code] = (stats.noResponse[code] ?? 0) + 1;
        if (stats.noResponseSentAt.length < 100_000) stats.noResponseSentAt.push({ sentAt, failedAt: performance.now(), code });
        await sleep(5);
      }
    }
    agent.destroy();
  };
  const all = Array.from({ length: workers }, (_, w) => loop(w));
  return {
    stats,
    onResponse,
    stop: async () => {
      stopped = true;
      await Promise.all(all);
      return stats;
    },
  };
}

function check(name, ok, details) {
  checks.push({ name, ok: Boolean(ok), details });
  process.stdout.write(`${ok ? "PASS" : "FAIL"}  ${name}\n`);
  for (const [k, v] of Object.entries(details)) process.stdout.write(`        ${k}: ${typeof v === "string" ? v : JSON.stringify(v)}\n`);
}

async function guarded(name, fn) {
  try {
    await fn();
  } catch (e) {
    check(name, false, { error: String(e?.stack ?? e) });
  }
}

async function pool(n, concurrency, task) {
  let next = 0;
  const run = async () => {
    while (next < n) await task(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, run));
}

// ---------------------------------------------------------------------------------------------
// a) SIGTERM under load

async function sigtermUnderLoad() {
  const server = await startSandbox("a-sigterm");
  const token = await tokenFor(server);
  const load = driveLoad(server, 50, defaultMix(token));
  let afterSignal = 0;
  let afterSignalWithClose = 0;
  let signalAt;
  load.onResponse.push((r, at) => {
    if (signalAt !== undefined && at > signalAt) {
      afterSignal++;
      if (/close/i.test(r.headers.connection ?? "")) afterSignalWithClose++;
    }
  });
  await sleep(1500);
  const beforeSignal = load.stats.responses;
  signalAt = performance.now();
  server.child.kill("SIGTERM");
  const exit = await Promise.race([server.exited, sleep(5000).then(() => null)]);
  const exitMs = exit ? Math.round(exit.at - signalAt) : null;
  await sleep(200);
  const stats = await load.stop();
  if (!exit) {
    server.child.kill("SIGKILL");
    await server.exited;
  }
  // Requests already sent when the signal came, that never got an answer (README: "it answers requests in flight first").
  const lostInFlight = stats.noResponseSentAt.filter((e) => e.sentAt < signalAt).length;
  // Requests sent after the signal on still-open keep-alive connections, then cut without an answer.
  const cutAfterSignal = stats.noResponseSentAt.filter((e) => e.sentAt >= signalAt && e.code === "ECONNRESET");
  check(
    "a) SIGTERM under load (50 in flight): complete answers, exit 0 within 2 s",
    stats.invalid === 0 && exit?.code === 0 && exitMs !== null && exitMs <= 2000,
    {
      "responses before the signal": beforeSignal,
      "responses after the signal": `${afterSignal} (${afterSignalWithClose} with Connection: close)`,
      "complete and valid / invalid or truncated": `${stats.valid} / ${stats.invalid}`,
      "invalid samples": stats.invalidSamples,
      "requests with no response (client side)": stats.noResponse,
      "exit code": exit ? `${exit.code}${exit.signal ? ` (${exit.signal})` : ""}` : "still running after 5 s",
      "signal → exit": exitMs === null ? "> 5000 ms" : `${exitMs} ms`,
    },
  );
  check("a2) SIGTERM under load: every request already sent when the signal came was answered", lostInFlight === 0, {
    "sent before the signal, never answered": lostInFlight,
    "sent after the signal on open keep-alive connections, then reset without an answer (not a failure here)": `${cutAfterSignal.length}, reset ${cutAfterSignal.length ? Math.round(Math.min(...cutAfterSignal.map((e) => e.failedAt - signalAt))) : "-"}–${cutAfterSignal.length ? Math.round(Math.max(...cutAfterSignal.map((e) => e.failedAt - signalAt))) : "-"} ms after the signal`,
  });
}

// ---------------------------------------------------------------------------------------------
// a3) SIGTERM with slow requests in flight: the library's slow-token-endpoint scenario (3 s per exchange)

async function sigtermWithSlowRequests() {
  const server = await startSandbox("a3-sigterm-slow", ["--scenario", "slow-token-endpoint"]);
  const credentials = { api_key: "slow-token-endpoint-key", api_secret: "slow-token-endpoint-secret" };
  secrets.add(credentials.api_secret);
  secrets.add("slow-token-endpoint-payment-token");
  const sentAt = performance.now();
  const exchanges = Array.from({ length: 3 }, () =>
    call(server, {
      method: "POST",
      path: "/api/v2/auth/token",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(credentials),
      timeoutMs: 15_000,
    }).then(
      (r) => ({ ...r, at: performance.now() }),
      (e) => ({ error: e.code ?? e.message, at: performance.now() }),
    ),
  );
  await sleep(500); // well inside the 3 s delay: the three are in flight
  const signalAt = performance.now();
  server.child.kill("SIGTERM");
  const exit = await Promise.race([server.exited, sleep(15_000).then(() => null)]);
  const answers = await Promise.all(exchanges);
  if (!exit) {
    server.child.kill("SIGKILL");
    await server.exited;
  }
  for (const a of answers) if (a.body) rememberToken(a.body);
  const ok = answers.filter((a) => !a.error && !invalidity(a, 200));
  const logLines = Buffer.concat(server.out.stdout)
    .toString("utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l))
    .filter((l) => /received SIGTERM|stopped/.test(l.msg))
    .map(({ msg, in_flight, answered, cut, drain_ms }) => ({ msg, in_flight, answered, cut, drain_ms }));
  const exitMs = exit ? Math.round(exit.at - signalAt) : null;
  check("a3) SIGTERM with three 3-second token exchanges in flight: all three answered 200, then exit 0", ok.length === 3 && exit?.code === 0, {
    answers: answers.map((a) =>
      a.error
        ? `no answer (${a.error})`
        : `${a.status}${invalidity(a, 200) ? ` ✗ ${invalidity(a, 200)}` : ""}, Connection: ${a.headers.connection}, ${Math.round(a.at - sentAt)} ms after sending`,
    ),
    "exit code": exit ? `${exit.code}${exit.signal ? ` (${exit.signal})` : ""}` : "still running after 15 s",
    "signal → exit": exitMs === null ? "> 15000 ms" : `${exitMs} ms (the exchanges were sent 500 ms before the signal; the scenario delays each 3 s)`,
    "drain log lines": logLines,
  });
}

// ---------------------------------------------------------------------------------------------
// b) Clients aborting mid-body and mid-response

function abortMidBody(server) {
  return new Promise((resolve) => {
    const socket = net.connect(server.port, server.host, () => {
      socket.write(
        "POST /api/v2/auth/token HTTP/1.1\r\nHost: sandbox\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n" + '{"api_key"',
        () => setTimeout(() => socket.destroy(), 2),
      );
    });
    socket.on("error", () => undefined);
    socket.on("close", resolve);
  });
}

function abortMidResponse(server, token, i) {
  // Alternate a token exchange (the sandbox signs a JWT: the costliest answer) and a protected call.
  const request =
    i % 2 === 0
      ? `POST /api/v2/auth/token HTTP/1.1\r\nHost: sandbox\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(JSON.stringify(DEFAULT_CREDENTIALS))}\r\n\r\n${JSON.stringify(DEFAULT_CREDENTIALS)}`
      : `GET /api/v2/payment/p_1 HTTP/1.1\r\nHost: sandbox\r\nAuthorization: Bearer ${token}\r\n\r\n`;
  return new Promise((resolve) => {
    const socket = net.connect(server.port, server.host, () => {
      socket.write(request, () => socket.destroy());
    });
    socket.on("error", () => undefined);
    socket.on("close", resolve);
  });
}

async function answersNormally(server, token) {
  const problems = [];
  for (const spec of defaultMix(token)) {
    try {
      const r = await call(server, spec);
      const bad = invalidity(r, spec.expected);
      if (bad) problems.push(`${spec.kind}: ${bad}`);
    } catch (e) {
      problems.push(`${spec.kind}: no response (${e.code ?? e.message})`);
    }
  }
  return problems;
}

async function settle(pid, baselineFds, maxMs = 5000) {
  const start = performance.now();
  let fds = fdCount(pid);
  while (fds > baselineFds && performance.now() - start < maxMs) {
    await sleep(100);
    fds = fdCount(pid);
  }
  return { fds, ms: Math.round(performance.now() - start) };
}

async function abortingClients() {
  const server = await startSandbox("b-aborts");
  const pid = server.child.pid;
  const token = await tokenFor(server);
  for (let i = 0; i < 200; i++) await call(server, defaultMix(token)[i % 5]); // warm-up
  await sleep(1000);
  const baseline = { fds: fdCount(pid), rssKb: rssKb(pid) };
  const started = performance.now();
  await pool(500, 25, () => abortMidBody(server));
  await pool(500, 25, (i) => abortMidResponse(server, token, i));
  const abortMs = Math.round(performance.now() - started);
  const duringPeakFds = fdCount(pid);
  const settled = await settle(pid, baseline.fds);
  await sleep(500);
  const problems = await answersNormally(server, token);
  const after = { fds: fdCount(pid), rssKb: rssKb(pid) };
  const rssGrowthPct = +(((after.rssKb - baseline.rssKb) / baseline.rssKb) * 100).toFixed(1);
  const alive = server.child.exitCode === null;
  const stderr = Buffer.concat(server.out.stderr).toString("utf8").trim();
  await stopSandbox(server);
  const fdOk = after.fds <= baseline.fds + 2;
  const rssOk = after.rssKb - baseline.rssKb <= Math.max(10 * 1024, baseline.rssKb * 0.15);
  check(
    "b) 500 clients abort mid-body + 500 mid-response: answers normally, fds and RSS back near baseline",
    alive && problems.length === 0 && fdOk && rssOk && !stderr,
    {
      "aborts sent": `500 mid-body (Content-Length 1000, 10 bytes sent) + 500 mid-response, in ${abortMs} ms`,
      "answers normally afterwards": problems.length === 0 ? "yes (protected 200, token 200, init 201, cashout 200, unknown 404)" : problems,
      "open fds baseline → right after → settled": `${baseline.fds} → ${duringPeakFds} → ${after.fds} (settled in ${settled.ms} ms; limit baseline + 2)`,
      "RSS baseline → after": `${mb(baseline.rssKb)} → ${mb(after.rssKb)} MB (${rssGrowthPct}%; limit +15% or +10 MB)`,
      "process alive": alive,
      stderr: stderr ? stderr.slice(0, 500) : "(empty)",
    },
  );
}

// ---------------------------------------------------------------------------------------------
// c) drop_connection under concurrent load

/** Sends a request on its own connection and reports whether the server closed it without an answer. */
function expectDropped(server, credentials) {
  const body = JSON.stringify(credentials);
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = net.connect(server.port, server.host, () => {
      socket.write(
        `POST /api/v2/auth/token HTTP/1.1\r\nHost: sandbox\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    });
    let received = "";
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ dropped: false, why: "still open after 3 s" });
    }, 3000);
    socket.on("data", (d) => (received += d));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({
        dropped: received.length === 0,
        ms: performance.now() - started,
        why: received ? `answered: ${received.split("\r\n")[0]}` : undefined,
      });
    });
  });
}

async function dropConnectionUnderLoad() {
  const server = await startSandbox("c-drop-connection", ["--scenario", "token-connection-dropped", "--journal-size", "20000"]);
  const pid = server.child.pid;
  const token = await tokenFor(server);
  secrets.add("token-connection-dropped-secret");
  secrets.add("token-connection-dropped-payment-token");
  secrets.add("token-connection-dropped-password");
  // The library scenario's merchant, plus 40 sessions of the same scenario: 41 first exchanges to drop.
  const merchants = [{ api_key: "token-connection-dropped-key", api_secret: "token-connection-dropped-secret" }];
  for (let i = 0; i < 40; i++) {
    const r = await call(server, {
      method: "POST",
      path: "/__sandbox/sessions",
      headers: { "content-type": "application/json" },
      body: '{"scenario":"token-connection-dropped"}',
    });
    if (r.status !== 201) throw new Error(`POST /__sandbox/sessions → ${r.status}: ${r.body.slice(0, 200)}`);
    const info = JSON.parse(r.body);
    for (const m of info.merchants) for (const s of [m.api_secret, m.payment_token, m.login.password]) secrets.add(s);
    merchants.push({ api_key: info.merchant.api_key, api_secret: info.merchant.api_secret });
  }
  await sleep(300);
  const baselineFds = fdCount(pid);
  const load = driveLoad(server, 20, defaultMix(token));
  await sleep(300);
  const drops = [];
  await pool(merchants.length, 10, async (i) => drops.push(await expectDropped(server, merchants[i])));
  await sleep(300);
  const stats = await load.stop();
  const seconds = [];
  for (const m of merchants) {
    const r = await call(server, {
      method: "POST",
      path: "/api/v2/auth/token",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(m),
    });
    if (r.status === 200) rememberToken(r.body);
    seconds.push(r.status);
  }
  const settled = await settle(pid, baselineFds);
  const journal = await call(server, { path: "/__sandbox/requests" });
  outputs.at(-1).journal = journal.body;
  const droppedInJournal = journal.status === 200 ? JSON.parse(journal.body).requests.filter((e) => e.status === 0 && e.rules?.length).length : null;
  const alive = server.child.exitCode === null;
  await stopSandbox(server);
  const dropped = drops.filter((d) => d.dropped).length;
  const maxCloseMs = Math.round(Math.max(...drops.map((d) => d.ms ?? 3000)));
  const secondOk = seconds.filter((s) => s === 200).length;
  check(
    "c) drop_connection (token-connection-dropped) under load: dropped connections close, other merchants' requests all succeed",
    dropped === merchants.length &&
      secondOk === merchants.length &&
      stats.invalid === 0 &&
      Object.keys(stats.noResponse).length === 0 &&
      stats.valid > 0 &&
      alive,
    {
      "first exchanges dropped (closed, no answer)": `${dropped} / ${merchants.length} (slowest close ${maxCloseMs} ms)`,
      "not dropped": drops
        .filter((d) => !d.dropped)
        .map((d) => d.why)
        .slice(0, 5),
      "second exchanges answered 200": `${secondOk} / ${merchants.length}`,
      "default merchant's concurrent requests (20 keep-alive connections)": `${stats.valid} succeeded, ${stats.invalid} wrong, no response: ${JSON.stringify(stats.noResponse)}`,
      "by kind": stats.byKind,
      "invalid samples": stats.invalidSamples,
      "journal entries of dropped requests (status 0)": droppedInJournal,
      "open fds before → after": `${baselineFds} → ${settled.fds}`,
      "process alive": alive,
    },
  );
}

// ---------------------------------------------------------------------------------------------
// d) An exception inside a scenario template
//
// What can make rendering fail at request time rather than at load (src/scenarios/template.ts,
// actions.ts): every {{placeholder}} is checked when the file loads (the value paths are a fixed
// list; a faker generator must exist and is called once with no arguments). A TemplateError at
// render time would need a generator that works at load and throws later: none of faker 10's
// zero-argument generators does (each called 3000 times on a sandbox-seeded faker, none threw).
// What does fail at request time is the {{now}} value: an ISO string of the scenario's clock, which
// a rule can move (advance_clock) past the end of JavaScript dates (±8.64e15 ms), so
// toISOString() throws a RangeError while the response is being built.

const FAULT_SCENARIO = `name: template-fault
description: The rule moves the scenario clock past the last date JavaScript can represent, then answers with a template that renders {{now}}.
merchants:
  - id: m_template_fault
    api_key: template-fault-key
    api_secret: template-fault-secret
    payment_token: template-fault-payment-token
rules:
  - name: render-now-out-of-range
    match: { endpoint: payment-init }
    then:
      advance_clock: 1000000000d
      respond:
        status: 200
        body: { rendered_at: "{{now}}", payment_id: "{{faker.string.uuid}}" }
`;

const LOAD_TIME_FAULT = `name: template-fault-at-load
description: A placeholder that cannot be filled, refused when the file loads.
merchants:
  - id: m_template_fault_load
    api_key: template-fault-load-key
    api_secret: template-fault-load-secret
    payment_token: template-fault-load-payment-token
rules:
  - name: needs-arguments
    match: { endpoint: payment-init }
    then:
      respond: { status: 200, body: { pick: "{{faker.helpers.arrayElement}}", nothing: "{{faker.nope.nothing}}" } }
`;

function runCli(args) {
  return new Promise((resolve) => {
    execFile(process.execPath, ["dist/bin/main.js", ...args], { cwd: ROOT }, (error, stdout, stderr) => {
      outputs.push({ label: `cli ${args[0]}`, args, stdout: [Buffer.from(stdout)], stderr: [Buffer.from(stderr)] });
      resolve({ code: error ? error.code : 0, stdout, stderr });
    });
  });
}

async function templateFault() {
  const dir = mkdtempSync(join(tmpdir(), "sandbox-faults-"));
  const runtimeFile = join(dir, "template-fault.yaml");
  const loadFile = join(dir, "template-fault-at-load.yaml");
  writeFileSync(runtimeFile, FAULT_SCENARIO);
  writeFileSync(loadFile, LOAD_TIME_FAULT);
  for (const s of ["template-fault-secret", "template-fault-payment-token", "template-fault-load-secret", "template-fault-load-payment-token"])
    secrets.add(s);
  try {
    // Load time: a placeholder that cannot be filled never reaches a request.
    const validate = await runCli(["validate", loadFile]);
    check(
      "d1) a template placeholder that cannot be filled is refused at load (validate exits 1, names file:line)",
      validate.code === 1 && /template-fault-at-load\.yaml:\d+:\d+/.test(validate.stdout + validate.stderr),
      {
        "exit code": validate.code,
        output: (validate.stdout + validate.stderr).trim().split("\n").slice(0, 4),
      },
    );

    // Request time.
    const server = await startSandbox("d-template-fault", ["--scenario", runtimeFile]);
    const faulted = await call(server, {
      method: "POST",
      path: "/api/v2/payment/init",
      headers: { "content-type": "application/json", authorization: "Bearer template-fault-payment-token" },
      body: "{}",
    });
    let problem = {};
    try {
      problem = JSON.parse(faulted.body);
    } catch {}
    const ruleName = "render-now-out-of-range";
    const namesRuleInBody = JSON.stringify(problem).includes(ruleName);
    const ruleHeader = faulted.headers["x-sandbox-rule"];
    const isProblem = faulted.status === 500 && /^application\/problem\+json/.test(faulted.headers["content-type"] ?? "") && problem.status === 500;
    const alive1 = server.child.exitCode === null;

    // The next requests: other endpoints, another merchant (the default one), the control plane.
    const token = await tokenFor(server);
    const next = [
      ...defaultMix(token),
      { kind: "jwks", expected: 200, method: "GET", path: "/.well-known/jwks.json" },
      { kind: "health", expected: 200, method: "GET", path: "/__sandbox/health" },
      { kind: "journal (GET /__sandbox/requests)", expected: 200, method: "GET", path: "/__sandbox/requests" },
      { kind: "journal, default merchant only", expected: 200, method: "GET", path: "/__sandbox/requests?merchant=merchant_sandbox_default" },
      { kind: "report (GET /__sandbox/report)", expected: 200, method: "GET", path: "/__sandbox/report" },
    ];
    const nextResults = [];
    for (const spec of next) {
      const r = await call(server, spec);
      const bad = invalidity(r, spec.expected);
      nextResults.push({ kind: spec.kind, status: r.status, ok: !bad, ...(bad && { why: bad.slice(0, 200) }) });
      if (spec.kind.startsWith("journal (")) outputs.at(-1).journal = r.body;
    }
    await sleep(200);
    const alive2 = server.child.exitCode === null;
    const stderr = Buffer.concat(server.out.stderr).toString("utf8").trim();
    const exit = await stopSandbox(server);
    check(
      "d2) a template that fails at request time ({{now}} past the end of dates): 500 problem+json naming the rule",
      isProblem && namesRuleInBody && alive1,
      {
        status: faulted.status,
        "content-type": faulted.headers["content-type"],
        code: problem.code,
        detail: problem.detail,
        "names the rule in the body": namesRuleInBody,
        "X-Sandbox-Rule header": ruleHeader ?? "(none)",
      },
    );
    const failedNext = nextResults.filter((r) => !r.ok);
    check("d3) after the template fault: other endpoints and merchants answered normally, process keeps running", failedNext.length === 0 && alive2, {
      answered: nextResults.map((r) => `${r.kind} ${r.status}${r.ok ? "" : " ✗"}`),
      failures: failedNext,
      "process alive": alive2,
      "exit code on SIGTERM": exit.code,
      "stderr (first lines)": stderr.split("\n").slice(0, 3),
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// e) Secret scan of everything printed

function secretScan() {
  const segments = tokenSegmentSet(issuedTokens);
  const noWords = new Set();
  const literals = [...secrets].filter(Boolean);
  const hits = [];
  let bytes = 0;
  for (const o of outputs) {
    for (const stream of ["stdout", "stderr"]) {
      const text = Buffer.concat(o[stream]).toString("utf8");
      bytes += text.length;
      hits.push(...scanForSecrets(`${o.label} ${stream}`, text, literals, noWords, segments));
    }
    if (o.journal) {
      bytes += o.journal.length;
      hits.push(...scanForSecrets(`${o.label} journal`, o.journal, literals, noWords, segments));
    }
  }
  const total = hits.reduce((a, h) => a + h.count, 0);
  // The scanner itself, on planted values: a literal secret, an issued JWT (shape and segments).
  const planted = scanForSecrets("self-check", `planted ${literals[0]} Bearer ${[...issuedTokens][0]}`, literals, noWords, segments).map(
    (h) => h.what,
  );
  check("e) no secret in clear in anything the processes printed (and the journals read)", total === 0 && planted.length === 3, {
    "scanner self-check (planted literal, JWT shape, token segment found)": `${planted.length} / 3`,
    scanned: `${outputs.length} processes, ${(bytes / 1024).toFixed(0)} KiB (stdout, stderr, journals of c and d)`,
    "secrets looked for": `${literals.length} literals (api secrets, payment tokens, passwords), ${issuedTokens.size} issued JWTs, JWT shapes`,
    hits: hits.length ? hits : 0,
  });
}

// ---------------------------------------------------------------------------------------------

const started = Date.now();
await guarded("a) SIGTERM under load", sigtermUnderLoad);
await guarded("a3) SIGTERM with slow requests in flight", sigtermWithSlowRequests);
await guarded("b) aborting clients", abortingClients);
await guarded("c) drop_connection under load", dropConnectionUnderLoad);
await guarded("d) template fault", templateFault);
secretScan();

const passed = checks.every((c) => c.ok);
const machine = machineDescription();
const results = { date: new Date().toISOString(), machine, checks, passed, seconds: Math.round((Date.now() - started) / 1000) };
const fmt = (v) => (typeof v === "string" ? v : JSON.stringify(v));
const md = [
  `# Fault checks: ${passed ? "PASS" : "FAIL"} (${checks.filter((c) => c.ok).length}/${checks.length})`,
  "",
  `Run ${results.date} on ${machine}, ${results.seconds} s. Server: \`node --max-semi-space-size=2 dist/bin/main.js serve --port 0 --log-format json …\`.`,
  "",
  "| check | result |",
  "|---|---|",
  ...checks.map((c) => `| ${c.name} | ${c.ok ? "PASS" : "FAIL"} |`),
  "",
  ...checks.flatMap((c) => [
    `## ${c.ok ? "PASS" : "FAIL"}: ${c.name}`,
    "",
    ...Object.entries(c.details).map(([k, v]) => `- ${k}: ${fmt(v).replace(/\|/g, "\\|")}`),
    "",
  ]),
].join("\n");
writeRecordedRun("faults", results, md);
process.stdout.write(`\n${passed ? "all checks passed" : "some checks FAILED"} in ${results.seconds} s; written to bench/results/faults.{json,md}\n`);
process.exit(passed ? 0 : 1);
