// npm run bench:quick -- <row> ...: a few rows of the bench, the sandbox (built, with its defaults)
// against the bare reference in the same run, in well under a minute. For working on a hot path:
// the figures to quote come from `npm run bench`, never from here.
//
// Rows: token, protected, init, unknown, rotation (default: all five), and `logoff`, the protected
// call on a second sandbox with `--log-format off`. BENCH_DURATION (default 3 here) sets the seconds
// per row; BENCH_ALG the algorithm; BENCH_SANDBOX_ARGS extra `serve` flags for the sandbox;
// BENCH_REFERENCE_SIGN=sync the single-threaded reference (issue 15's RS256 exchange target).
import { endpoints, load, ROTATION_TOKENS, startServer, stopServer, tokenFrom, tokensFrom } from "./harness.mjs";

const ROWS = ["token", "protected", "init", "unknown", "rotation"];
const asked = process.argv.slice(2);
const unknownRow = asked.find((r) => r !== "logoff" && !ROWS.includes(r));
if (unknownRow) {
  process.stderr.write(`quick: no row '${unknownRow}'; rows are ${[...ROWS, "logoff"].join(", ")}\n`);
  process.exit(2);
}
// logoff is measured against the protected call, so asking for it measures that too.
const rows = asked.length ? [...new Set(asked.map((r) => (r === "logoff" ? "protected" : r)))] : ROWS;
const duration = Number(process.env.BENCH_DURATION ?? 3);
const alg = process.env.BENCH_ALG ?? "RS256";
const extra = (process.env.BENCH_SANDBOX_ARGS ?? "").split(" ").filter(Boolean);
const referenceSign = process.env.BENCH_REFERENCE_SIGN;
const sandboxArgs = (more = []) => ["--max-semi-space-size=2", "dist/bin/main.js", "serve", "--port", "0", "--alg", alg, ...extra, ...more];

async function measure(name, args, env, keys) {
  const server = await startServer(name, args, env);
  try {
    const token = await tokenFrom(server.url);
    const tokens = keys.includes("rotation") ? await tokensFrom(server.url, ROTATION_TOKENS) : [];
    const list = endpoints(token, tokens).filter((e) => keys.includes(e.key));
    await load(server, endpoints(token)[1], 10, 1); // warm-up
    const out = {};
    for (const e of list) out[e.key] = { label: e.label, ...(await load(server, e, 10, duration)) };
    return out;
  } finally {
    await stopServer(server);
  }
}

const sandbox = await measure("sandbox", sandboxArgs(), {}, rows);
const reference = await measure(
  "reference",
  ["bench/reference-server.mjs"],
  { BENCH_ALG: alg, ...(referenceSign && { BENCH_SIGN: referenceSign }) },
  rows,
);
const quiet = asked.includes("logoff") ? await measure("sandbox, logging off", sandboxArgs(["--log-format", "off"]), {}, ["protected"]) : undefined;

const line = (label, s, r) =>
  `| ${label} | ${s.reqPerSec} | ${r.reqPerSec} | ${(s.reqPerSec / r.reqPerSec).toFixed(2)}× | ${s.cpuUsPerReq} / ${r.cpuUsPerReq} | ${s.errors} |`;
const out = [
  `quick: ${alg}, ${duration} s per row, 10 connections${referenceSign ? `, reference BENCH_SIGN=${referenceSign}` : ""}${extra.length ? `, sandbox ${extra.join(" ")}` : ""} (not a recorded run)`,
  "| row | sandbox req/s | reference req/s | ratio | CPU µs/req sandbox / reference | errors |",
  "|---|---|---|---|---|---|",
  ...rows.map((k) => line(sandbox[k].label, sandbox[k], reference[k])),
];
if (quiet) {
  const cost = Math.round((1 - sandbox.protected.reqPerSec / quiet.protected.reqPerSec) * 100);
  out.push(line("protected call, logging off", quiet.protected, reference.protected), `log cost: ${cost} % of protected-call req/s`);
}
process.stdout.write(out.join("\n") + "\n");
