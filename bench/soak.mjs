// Soak test (not part of `npm test`): the sandbox CLI under a mixed traffic mix, first flat out for
// SOAK_PROBE_SECONDS (default 5) to find its maximum rate, then at SOAK_LOAD (default 0.8) of that
// rate for SOAK_SECONDS (default 60), sampling RSS every second, with a lane of session churn
// (create, use, delete) beside it. Then everything the process printed and the whole journal are
// scanned for secrets in clear. Builds nothing: run `npm run build` first. Loopback only, bounded
// (about 75 s at the default). Writes bench/results/soak.{json,md}; exits 1 when a criterion fails.
import autocannon from "autocannon";
import { machineDescription, rssKb, scanForSecrets, startSandboxCli, tokenSegmentSet, writeRecordedRun } from "./support.mjs";

const SOAK_SECONDS = Number(process.env.SOAK_SECONDS ?? 60);
const PROBE_SECONDS = Number(process.env.SOAK_PROBE_SECONDS ?? 5);
const LOAD_FRACTION = Number(process.env.SOAK_LOAD ?? 0.8);
const CONNECTIONS = Number(process.env.SOAK_CONNECTIONS ?? 10);
const RSS_GROWTH_LIMIT_PCT = 10;
const MAX_SESSIONS = 1000; // the CLI default, passed explicitly so the bound checked is the one set
const JOURNAL_SIZE = 1000;

const API_SECRET = "sandbox-api-secret";
const PAYMENT_TOKEN = "sandbox-payment-token";
const WRONG_SECRET = "soak-wrong-secret-7f3a"; // what a client sent: as secret as the right one
const GOOD_CREDENTIALS = JSON.stringify({ api_key: "sandbox-api-key", api_secret: API_SECRET });
const BAD_CREDENTIALS = JSON.stringify({ api_key: "sandbox-api-key", api_secret: WRONG_SECRET });

// ---------------------------------------------------------------------------------------------
// The traffic mix: one cycle per connection, each kind with the one status it must get.

const issuedTokens = new Set(); // every access token this run received
function rememberToken(body) {
  try {
    const t = JSON.parse(body).access_token;
    if (typeof t === "string") issuedTokens.add(t);
    return t;
  } catch {
    return undefined;
  }
}

function trafficMix(seedToken) {
  const byKind = {};
  const kind = (name, expected, request) => {
    byKind[name] ??= { expected, sent: 0, statuses: {}, mismatches: 0 };
    const stats = byKind[name];
    const userOnResponse = request.onResponse;
    return {
      ...request,
      onResponse(status, body, context, headers) {
        stats.sent++;
        stats.statuses[status] = (stats.statuses[status] ?? 0) + 1;
        if (status !== expected) stats.mismatches++;
        userOnResponse?.(status, body, context, headers);
      },
    };
  };
  const withToken = (path) => (req, context) => ({
    ...req,
    path,
    headers: { ...req.headers, authorization: `Bearer ${context.token ?? seedToken}` },
  });
  const json = { "content-type": "application/json" };
  const requests = [
    kind("token exchange", 200, {
      method: "POST",
      path: "/api/v2/auth/token",
      headers: json,
      body: GOOD_CREDENTIALS,
      onResponse: (status, body, context) => {
        if (status === 200) context.token = rememberToken(body) ?? context.token;
      },
    }),
    kind("protected call (valid token)", 200, {
      method: "GET",
      path: "/api/v2/payment/p_1",
      headers: {},
      setupRequest: withToken("/api/v2/payment/p_1"),
    }),
    kind("payment/init (payment token)", 201, {
      method: "POST",
      path: "/api/v2/payment/init",
      headers: { ...json, authorization: `Bearer ${PAYMENT_TOKEN}` },
      body: '{"amount":1000,"currency":"EUR"}',
    }),
    kind("protected call (valid token)", 200, {
      method: "POST",
      path: "/api/v2/cashout/payouts",
      headers: {},
      setupRequest: withToken("/api/v2/cashout/payouts"),
    }),
    kind("unknown path", 404, { method: "GET", path: "/nope", headers: {} }),
    kind("refusal: wrong api_secret", 401, { method: "POST", path: "/api/v2/auth/token", headers: json, body: BAD_CREDENTIALS }),
    kind("protected call (valid token)", 200, {
      method: "GET",
      path: "/api/v2/payment/p_2",
      headers: {},
      setupRequest: withToken("/api/v2/payment/p_2"),
    }),
    kind("refusal: tampered token", 401, {
      method: "GET",
      path: "/api/v2/payment/p_3",
      headers: {},
      setupRequest: (req, context) => ({ ...req, headers: { authorization: `Bearer ${tamper(context.token ?? seedToken)}` } }),
    }),
    kind("refusal: JWT on payment/init", 401, {
      method: "POST",
      path: "/api/v2/payment/init",
      headers: json,
      body: "{}",
      setupRequest: withToken("/api/v2/payment/init"),
    }),
    kind("refusal: token in query string", 400, {
      method: "GET",
      path: "/api/v2/payment/p_4",
      headers: {},
      setupRequest: (req, context) => ({ ...req, path: `/api/v2/payment/p_4?access_token=${context.token ?? seedToken}` }),
    }),
  ];
  return { requests, byKind };
}

/** The same token with its signature changed: well-formed, refused as a bad signature. */
function tamper(token) {
  const [h, p, s] = token.split(".");
  return `${h}.${p}.${s.slice(0, -6)}${s.slice(-6) === "AAAAAA" ? "BBBBBB" : "AAAAAA"}`;
}

function runAutocannon(url, opts) {
  return new Promise((resolve, reject) => {
    const instance = autocannon({ url, connections: CONNECTIONS, timeout: 10, ...opts }, (err, result) => (err ? reject(err) : resolve(result)));
    instance.on("error", () => undefined);
  });
}

function sumMix(byKind) {
  let sent = 0;
  let mismatches = 0;
  for (const k of Object.values(byKind)) {
    sent += k.sent;
    mismatches += k.mismatches;
  }
  return { sent, mismatches };
}

function count5xx(byKind) {
  let n = 0;
  for (const k of Object.values(byKind)) for (const [status, c] of Object.entries(k.statuses)) if (Number(status) >= 500) n += c;
  return n;
}

// ---------------------------------------------------------------------------------------------
// Session churn: create a session, exchange its credentials once, delete it.

function sessionChurn(url, stopAt, sessionSecrets) {
  const stats = { created: 0, exchanged: 0, deleted: 0, failures: [], peakCount: 0 };
  const run = async () => {
    while (Date.now() < stopAt) {
      const tickStart = Date.now();
      try {
        const r = await fetch(`${url}/__sandbox/sessions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: '{"scenario":"default"}',
        });
        const info = await r.json();
        if (r.status !== 201) throw new Error(`POST /__sandbox/sessions → ${r.status} ${info.code ?? ""}`);
        stats.created++;
        for (const m of info.merchants) {
          sessionSecrets.add(m.api_secret);
          sessionSecrets.add(m.payment_token);
          sessionSecrets.add(m.login.password);
        }
        const t = await fetch(`${url}/api/v2/auth/token`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ api_key: info.merchant.api_key, api_secret: info.merchant.api_secret }),
        });
        const body = await t.text();
        if (t.status !== 200) throw new Error(`session token exchange → ${t.status}`);
        rememberToken(body);
        stats.exchanged++;
        const d = await fetch(`${url}/__sandbox/sessions/${info.id}`, { method: "DELETE" });
        await d.arrayBuffer();
        if (d.status !== 204) throw new Error(`DELETE session → ${d.status}`);
        stats.deleted++;
      } catch (e) {
        if (stats.failures.length < 20) stats.failures.push(String(e.message ?? e));
        else stats.failures.push("…");
      }
      await new Promise((r) => setTimeout(r, Math.max(0, 100 - (Date.now() - tickStart))));
    }
  };
  return { stats, done: run() };
}

async function sessionCount(url) {
  const r = await fetch(`${url}/__sandbox/sessions`);
  return (await r.json()).sessions.length;
}

// ---------------------------------------------------------------------------------------------
// The secret scan

/**
 * `literalSecrets` are looked for as substrings; `wordSecrets` (the hundreds of session credentials)
 * and `tokenSegments` as whole [A-Za-z0-9_-] words, in one pass over the text.
 */
// ---------------------------------------------------------------------------------------------

const started = Date.now();
const server = await startSandboxCli("soak", ["--journal-size", String(JOURNAL_SIZE), "--max-sessions", String(MAX_SESSIONS)]);
const pid = server.child.pid;
const seed = await fetch(`${server.url}/api/v2/auth/token`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: GOOD_CREDENTIALS,
});
const seedToken = rememberToken(await seed.text());
const rssBeforeKb = rssKb(pid);

// 1. The maximum rate of the mix.
const probeMix = trafficMix(seedToken);
const probe = await runAutocannon(server.url, { duration: PROBE_SECONDS, requests: probeMix.requests });
const maxRate = Math.round(probe.requests.average);
const targetRate = Math.max(1, Math.round(maxRate * LOAD_FRACTION));
process.stdout.write(
  `max rate of the mix: ${maxRate} req/s (${CONNECTIONS} connections, ${PROBE_SECONDS} s); holding ${targetRate} req/s for ${SOAK_SECONDS} s\n`,
);

// 2. The hold, with RSS every second and the session churn beside it.
const holdMix = trafficMix(seedToken);
const rssSamples = [];
const sessionSamples = [];
const holdStart = Date.now();
rssSamples.push({ t: 0, kb: rssKb(pid) });
const sampler = setInterval(() => {
  try {
    rssSamples.push({ t: Math.round((Date.now() - holdStart) / 1000), kb: rssKb(pid) });
  } catch {}
}, 1000);
const sessionSampler = setInterval(() => {
  sessionCount(server.url).then(
    (n) => sessionSamples.push(n),
    () => undefined,
  );
}, 5000);
const sessionSecrets = new Set();
const churn = sessionChurn(server.url, holdStart + SOAK_SECONDS * 1000, sessionSecrets);
const hold = await runAutocannon(server.url, { duration: SOAK_SECONDS, overallRate: targetRate, requests: holdMix.requests });
await churn.done;
clearInterval(sampler);
clearInterval(sessionSampler);
rssSamples.push({ t: Math.round((Date.now() - holdStart) / 1000), kb: rssKb(pid) });
const holdSeconds = (Date.now() - holdStart) / 1000;

// 3. Journal and sessions afterwards.
const journalResponse = await fetch(`${server.url}/__sandbox/requests`);
const journalText = await journalResponse.text();
let journal = { requests: [], capacity: null };
try {
  journal = JSON.parse(journalText);
} catch {}
const sessionsAfter = await sessionCount(server.url).catch(() => null);
const alive = server.child.exitCode === null && server.child.signalCode === null;

// 4. Stop, then scan everything the process printed and the whole journal.
server.child.kill("SIGTERM");
const exit = await Promise.race([server.exited, new Promise((r) => setTimeout(() => r({ code: "timeout" }), 5000))]);
if (exit.code === "timeout") server.child.kill("SIGKILL");
const stdoutText = Buffer.concat(server.out.stdout).toString("utf8");
const stderrText = Buffer.concat(server.out.stderr).toString("utf8");
const literalSecrets = [API_SECRET, PAYMENT_TOKEN, WRONG_SECRET];
const wordSecrets = new Set([...sessionSecrets].filter((x) => /^[A-Za-z0-9_-]{8,}$/.test(x)));
literalSecrets.push(...[...sessionSecrets].filter((x) => !wordSecrets.has(x))); // any of another shape: as substrings
const segments = tokenSegmentSet(issuedTokens);
const secretHits = [
  ...scanForSecrets("stdout", stdoutText, literalSecrets, wordSecrets, segments),
  ...scanForSecrets("stderr", stderrText, literalSecrets, wordSecrets, segments),
  ...scanForSecrets("journal", journalText, literalSecrets, wordSecrets, segments),
];
const secretCount = secretHits.reduce((n, h) => n + h.count, 0);
// The scanner itself, on planted values: a literal secret, an issued JWT, a session's secret.
const planted = `planted ${API_SECRET} Bearer ${[...issuedTokens][0]} secret=${[...wordSecrets][0]}`;
const selfCheckKinds = scanForSecrets("self-check", planted, literalSecrets, wordSecrets, segments).map((h) => h.what);
const selfCheckOk = selfCheckKinds.length === 4;

// ---------------------------------------------------------------------------------------------
// Figures and criteria

const holdTotals = sumMix(holdMix.byKind);
const socketErrors = hold.errors + hold.timeouts;
const fiveXx = count5xx(holdMix.byKind) + count5xx(probeMix.byKind);
const mismatches = holdTotals.mismatches + sumMix(probeMix.byKind).mismatches;
const rssStartKb = rssSamples.find((s) => s.t >= 1)?.kb ?? rssSamples[0].kb; // one second into the hold
const rssEndKb = rssSamples.at(-1).kb;
const rssPeakKb = Math.max(...rssSamples.map((s) => s.kb));
const rssGrowthPct = +(((rssEndKb - rssStartKb) / rssStartKb) * 100).toFixed(1);
const mb = (kb) => +(kb / 1024).toFixed(1);
const stderrLines = stderrText.split("\n").filter(Boolean);
const requestsSent = probe.requests.total + hold.requests.total + churn.stats.created * 3;

const criteria = [
  { name: "no socket errors or timeouts during the hold", value: socketErrors, ok: socketErrors === 0 },
  { name: "no 5xx (probe and hold)", value: fiveXx, ok: fiveXx === 0 },
  { name: "every request got its kind's expected status (probe and hold)", value: mismatches, ok: mismatches === 0 },
  {
    name: `RSS growth over the hold < ${RSS_GROWTH_LIMIT_PCT}%`,
    value: `${rssGrowthPct}% (${mb(rssStartKb)} → ${mb(rssEndKb)} MB)`,
    ok: rssGrowthPct < RSS_GROWTH_LIMIT_PCT,
  },
  {
    name: "journal size ≤ its capacity",
    value: `${journal.requests.length} / ${journal.capacity}`,
    ok: journalResponse.status === 200 && journal.capacity === JOURNAL_SIZE && journal.requests.length <= journal.capacity,
  },
  {
    name: "sessions bounded (none left after create/use/delete churn; never above --max-sessions)",
    value: `after: ${sessionsAfter}, peak sampled: ${Math.max(0, ...sessionSamples)}, churn failures: ${churn.stats.failures.length}`,
    ok: sessionsAfter !== null && sessionsAfter <= 1 && Math.max(0, ...sessionSamples) <= MAX_SESSIONS && churn.stats.failures.length === 0,
  },
  { name: "the process kept running during the soak", value: alive ? "yes" : "no", ok: alive },
  { name: "nothing on stderr", value: stderrLines.length, ok: stderrLines.length === 0 },
  { name: "secrets in clear in the process output and the journal", value: secretCount, ok: secretCount === 0 },
  {
    name: "the secret scanner finds planted secrets (literal, JWT shape, token segment, session secret)",
    value: `${selfCheckKinds.length} / 4`,
    ok: selfCheckOk,
  },
  { name: "exit code 0 on SIGTERM after the soak", value: exit.code, ok: exit.code === 0 },
];
const passed = criteria.every((c) => c.ok);
const machine = machineDescription();

const results = {
  date: new Date().toISOString(),
  machine,
  command: `node ${server.out.args.join(" ")}`,
  settings: {
    soakSeconds: SOAK_SECONDS,
    probeSeconds: PROBE_SECONDS,
    loadFraction: LOAD_FRACTION,
    connections: CONNECTIONS,
    journalSize: JOURNAL_SIZE,
    maxSessions: MAX_SESSIONS,
  },
  probe: {
    maxRateReqPerSec: maxRate,
    total: probe.requests.total,
    p50: probe.latency.p50,
    p99: probe.latency.p99,
    errors: probe.errors + probe.timeouts,
    byKind: probeMix.byKind,
  },
  hold: {
    targetRateReqPerSec: targetRate,
    achievedRateReqPerSec: Math.round(hold.requests.total / holdSeconds),
    seconds: +holdSeconds.toFixed(1),
    total: hold.requests.total,
    p50: hold.latency.p50,
    p99: hold.latency.p99,
    socketErrors: hold.errors,
    timeouts: hold.timeouts,
    byKind: holdMix.byKind,
  },
  sessionChurn: churn.stats,
  sessionSamples,
  requestsSent,
  tokensReceived: issuedTokens.size,
  rss: {
    beforeProbeMb: mb(rssBeforeKb),
    holdStartMb: mb(rssStartKb),
    holdEndMb: mb(rssEndKb),
    peakMb: mb(rssPeakKb),
    growthPct: rssGrowthPct,
    samplesKb: rssSamples,
  },
  journal: { status: journalResponse.status, entries: journal.requests.length, capacity: journal.capacity },
  sessionsAfter,
  output: {
    stdoutBytes: stdoutText.length,
    stdoutLines: stdoutText.split("\n").length - 1,
    stderrLines: stderrLines.length,
    stderrHead: stderrLines.slice(0, 10),
  },
  secretScan: {
    scanned: ["stdout", "stderr", "journal"],
    literals: literalSecrets.length,
    sessionSecrets: wordSecrets.size,
    tokenSegments: segments.size,
    hits: secretHits,
    total: secretCount,
  },
  exit,
  criteria,
  passed,
  soakSeconds: Math.round((Date.now() - started) / 1000),
};

const kindRows = Object.entries(holdMix.byKind).map(
  ([name, k]) =>
    `| ${name} | ${k.expected} | ${k.sent} | ${Object.entries(k.statuses)
      .map(([s, c]) => `${s}×${c}`)
      .join(", ")} | ${k.mismatches} |`,
);
const md = [
  `# Soak: ${passed ? "PASS" : "FAIL"}`,
  "",
  `Run ${results.date} on ${machine}.`,
  `Server: \`node ${server.out.args.join(" ")}\`; load: autocannon, ${CONNECTIONS} connections, a cycle of ${holdMix.requests.length} requests per connection, plus a session lane (create → exchange → delete, ~10/s).`,
  "",
  "| figure | value |",
  "|---|---|",
  `| max rate of the mix (${PROBE_SECONDS} s, unthrottled) | ${maxRate} req/s (p50 ${probe.latency.p50} ms, p99 ${probe.latency.p99} ms) |`,
  `| hold | ${targetRate} req/s target (${Math.round(LOAD_FRACTION * 100)}%), ${results.hold.achievedRateReqPerSec} req/s achieved, ${results.hold.seconds} s, p50 ${hold.latency.p50} ms, p99 ${hold.latency.p99} ms |`,
  `| requests sent (probe + hold + session lane) | ${requestsSent} |`,
  `| access tokens received | ${issuedTokens.size} |`,
  `| socket errors / timeouts (hold) | ${hold.errors} / ${hold.timeouts} |`,
  `| 5xx | ${fiveXx} |`,
  `| unexpected statuses | ${mismatches} |`,
  `| RSS before probe / hold start / hold end / peak | ${mb(rssBeforeKb)} / ${mb(rssStartKb)} / ${mb(rssEndKb)} / ${mb(rssPeakKb)} MB (growth ${rssGrowthPct}%) |`,
  `| journal | ${journal.requests.length} entries, capacity ${journal.capacity} (HTTP ${journalResponse.status}) |`,
  `| sessions | ${churn.stats.created} created, ${churn.stats.deleted} deleted, ${sessionsAfter} left, peak sampled ${Math.max(0, ...sessionSamples)} |`,
  `| process output scanned | ${results.output.stdoutLines} stdout lines (${(stdoutText.length / 2 ** 20).toFixed(1)} MiB), ${stderrLines.length} stderr lines, ${journal.requests.length} journal entries |`,
  `| secrets in clear | ${secretCount} |`,
  "",
  "Hold, by kind of request:",
  "",
  "| kind | expected | sent | statuses | unexpected |",
  "|---|---|---|---|---|",
  ...kindRows,
  "",
  "| criterion | value | pass |",
  "|---|---|---|",
  ...criteria.map((c) => `| ${c.name} | ${c.value} | ${c.ok ? "PASS" : "FAIL"} |`),
  ...(secretHits.length ? ["", "Secret hits:", "", ...secretHits.map((h) => `- ${h.where}: ${h.what} ×${h.count}: \`${h.sample}\``)] : []),
  ...(stderrLines.length ? ["", "stderr (first lines):", "", "```", ...stderrLines.slice(0, 10), "```"] : []),
  ...(churn.stats.failures.length ? ["", "Session lane failures:", "", ...churn.stats.failures.slice(0, 10).map((f) => `- ${f}`)] : []),
  "",
].join("\n");

writeRecordedRun("soak", results, md);
process.stdout.write(md + `\n(soak took ${results.soakSeconds} s; written to bench/results/soak.{json,md})\n`);
process.exit(passed ? 0 : 1);
