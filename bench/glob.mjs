// npm run bench:glob: the path-glob matcher (src/scenarios/glob.ts, from dist) on the worst patterns
// found for it, against 8 KB and 16 KB paths, in µs per match (median of 7 timed batches), also
// with no DFA state remembered (the slowest case). The
// former backtracking regular expression is measured only on short paths, growing them while one
// match takes under 20 ms: its exponent shows, and it never runs unbounded (at 8 KB it would not
// come back). Writes bench/results/glob.{json,md}; about 10 s.
import { loadavg } from "node:os";
import { ROOT, machineDescription, writeRecordedRun } from "./support.mjs";

const { compileGlob, GLOB_LIMITS } = await import(`${ROOT}dist/scenarios/glob.js`);

const KB = 1024;
/** A path of exactly `size` characters: `head`, then `unit` repeated, then `tail`. */
const pathOf = (head, unit, tail, size) => {
  const fill = Math.max(0, size - head.length - tail.length);
  return head + unit.repeat(Math.ceil(fill / unit.length)).slice(0, fill) + tail;
};

// Each case: the pattern, and the path that makes a backtracking matcher try every split (a near
// miss), built at any size. `matches` is the expected answer, checked before timing.
const CASES = [
  {
    pattern: "/api/v2/payment/*-*-*-*-*",
    note: "issue 10: 23.7 s at 217 chars",
    path: (n) => pathOf("/api/v2/payment/", "-", "/", n),
    matches: false,
  },
  { pattern: "/*a*a*a*a*a*a*a*a*b", note: "issue 10: 64 s at 60 chars", path: (n) => pathOf("/", "a", "", n), matches: false },
  { pattern: "/**/*-*-*/**x", note: "/** around a dashed segment", path: (n) => pathOf("/", "-", "/y", n), matches: false },
  { pattern: "/**/*-*-*/**", note: "as above, matching", path: (n) => pathOf("/", "-", "/y", n), matches: true },
  { pattern: "/**a**a**a**a**b", note: "** across segments", path: (n) => pathOf("/", "a/", "", n), matches: false },
  {
    pattern: `/${"*-".repeat(GLOB_LIMITS.maxWildcards)}x`,
    note: `the limit: ${GLOB_LIMITS.maxWildcards} wildcards live at once`,
    path: (n) => pathOf("/", "-", "", n),
    matches: false,
  },
  {
    pattern: `${"/**".repeat(GLOB_LIMITS.maxWildcards - 1)}/b`,
    note: `the limit: ${GLOB_LIMITS.maxWildcards - 1} × /**`,
    path: (n) => pathOf("/", "a/", "c", n),
    matches: false,
  },
  { pattern: "/api/v2/payment/*", note: "an ordinary rule, for scale", path: (n) => pathOf("/api/v2/payment/", "p", "", n), matches: true },
];

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1];
}

/** Median µs per call of `fn` over 7 batches of about 100 ms each. */
function usPerCall(fn) {
  for (let i = 0; i < 20; i++) fn(); // warm-up: let V8 optimise
  const t0 = performance.now();
  fn();
  const once = Math.max(performance.now() - t0, 0.001);
  const perBatch = Math.max(1, Math.min(10_000, Math.round(100 / once)));
  const batches = [];
  for (let b = 0; b < 7; b++) {
    const start = performance.now();
    for (let i = 0; i < perBatch; i++) fn();
    batches.push(((performance.now() - start) * 1000) / perBatch);
  }
  return median(batches);
}

/** The former matcher, as src/scenarios/rules.ts had it. Only ever run on short paths here. */
function formerRegExp(glob) {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i];
    if (ch === "/" && glob[i + 1] === "*" && glob[i + 2] === "*") {
      re += "(?:/.*)?";
      i += 2;
    } else if (ch === "*" && glob[i + 1] === "*") {
      re += ".*";
      i++;
    } else if (ch === "*") re += "[^/]*";
    else re += ch.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

/**
 * The former regex on growing paths: 2 characters more each step, stopping after the first size
 * where one match takes 20 ms or more, or at 512. Small steps bound the last one: with 16
 * wildcards, 2 characters more cost the backtracking about 7 times more, not hundreds.
 */
function formerGrowth(c) {
  const re = formerRegExp(c.pattern);
  re.test(c.path(0)); // compiles it, so the first step does not time V8 compiling it
  const steps = [];
  for (let n = c.path(0).length + 2; n <= 512; n += 2) {
    const path = c.path(n);
    const t0 = performance.now();
    re.test(path);
    const ms = performance.now() - t0;
    steps.push({ chars: n, ms: +ms.toFixed(3) });
    if (ms >= 20) break;
  }
  return steps;
}

const started = Date.now();
const rows = CASES.map((c) => {
  const glob = compileGlob(c.pattern);
  const sizes = {};
  for (const size of [8 * KB, 16 * KB]) {
    const path = c.path(size);
    if (path.length !== size) throw new Error(`${c.pattern}: path of ${path.length} chars, wanted ${size}`);
    if (glob.test(path) !== c.matches) throw new Error(`${c.pattern}: expected ${c.matches ? "a match" : "no match"} at ${size} chars`);
    sizes[size] = +usPerCall(() => glob.test(path)).toFixed(1);
  }
  // With no DFA state kept: every character recomputes its set, as when a pattern's bound of
  // remembered states is reached. The slowest a match can get.
  const uncached = compileGlob(c.pattern, { maxCachedStates: 0 });
  const path8 = c.path(8 * KB);
  const usPer8KBUncached = +usPerCall(() => uncached.test(path8)).toFixed(1);
  const former = formerGrowth(c);
  return {
    pattern: c.pattern,
    note: c.note,
    matches: c.matches,
    wildcards: glob.wildcards,
    usPer8KB: sizes[8 * KB],
    usPer16KB: sizes[16 * KB],
    usPer8KBUncached,
    former,
  };
});

// The load average says whether other work shared the cores: figures are per match, CPU-bound.
const results = {
  date: new Date().toISOString(),
  machine: machineDescription(),
  loadAverage1m: +loadavg()[0].toFixed(1),
  limits: GLOB_LIMITS,
  rows,
  benchSeconds: Math.round((Date.now() - started) / 1000),
};
const formerText = (steps) => {
  const last = steps.at(-1);
  const first = steps.find((s) => s.ms >= 1) ?? steps[0];
  return last.ms >= 20 ? `${first.ms} ms at ${first.chars} → ${last.ms} ms at ${last.chars} chars (stopped)` : `${last.ms} ms at ${last.chars} chars`;
};
const md = [
  `# Path glob matching`,
  "",
  `Run ${results.date} on ${results.machine} (load average ${results.loadAverage1m} at the end), ${results.benchSeconds} s. Limits at load: ${GLOB_LIMITS.maxLength} characters, ${GLOB_LIMITS.maxWildcards} wildcards.`,
  "",
  "µs per match (median of 7 batches), on a path built to make a backtracking matcher try every split.",
  '"No DFA state kept" recomputes the set of live positions at every character, as a pattern does once it has met as many',
  "sets as it may remember (256): the slowest a match can get. The former regex column is that matcher on short paths only,",
  "grown 2 characters at a time until one match took 20 ms.",
  "",
  "| pattern | case | wildcards | match? | µs / 8 KB path | µs / 16 KB path | µs / 8 KB, no DFA state kept | former regex |",
  "|---|---|---|---|---|---|---|---|",
  ...rows.map(
    (r) =>
      `| \`${r.pattern}\` | ${r.note} | ${r.wildcards} | ${r.matches ? "yes" : "no"} | ${r.usPer8KB} | ${r.usPer16KB} | ${r.usPer8KBUncached} | ${formerText(r.former)} |`,
  ),
  "",
].join("\n");

writeRecordedRun("glob", results, md);
process.stdout.write(md + "\n(written to bench/results/glob.{json,md})\n");
