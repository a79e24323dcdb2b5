import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { stringify as toYaml } from "yaml";
import { describe, expect, it } from "vitest";
import { ScenarioLoadError, formatProblem, parseScenarioText, validateScenario } from "../../src/scenarios/load.js";
import { scenarioSchema } from "../../src/scenarios/schema.js";
import { FUZZ_TIMEOUT, PROTO_KEYS, fuzzParams, fuzzSeed } from "./support.js";

/**
 * Property-based fuzzing of the scenario loader, in process (the pure functions parseScenarioText
 * and validateScenario): random YAML/JSON documents, documents shaped like scenarios with values of
 * every type, and mutated copies of the real files in scenarios/*.yaml. For every input the loader
 * either returns a scenario that the schema accepts, or throws its own ScenarioLoadError, and every
 * problem in it names a location (file, a line and column inside the text, a path) and says what
 * is wrong in a sentence. Nothing else may escape (no TypeError, RangeError, ReferenceError).
 */

const SEED = fuzzSeed();
const params = (numRuns: number) => fuzzParams(SEED, numRuns);

const DIR = fileURLToPath(new URL("../../scenarios/", import.meta.url));
const FILES = readdirSync(DIR)
  .filter((f) => f.endsWith(".yaml"))
  .sort()
  .map((f) => ({ name: `scenarios/${f}`, text: readFileSync(DIR + f, "utf8") }));

/** The property: a valid scenario, or a ScenarioLoadError whose every problem is located and explained. */
function checkOutcome(run: () => unknown, file: string, text?: string): void {
  let result: unknown;
  try {
    result = run();
  } catch (e) {
    expectExplainedLoadError(e, file, text);
    return;
  }
  const parsed = scenarioSchema.safeParse(result);
  if (!parsed.success) throw new Error(`the loader returned a scenario the schema refuses: ${JSON.stringify(parsed.error.issues).slice(0, 400)}`);
}

/** The loader refuses the input: it throws a ScenarioLoadError whose every problem is located and explained (loading is a failure). */
function expectLoadError(run: () => unknown, file: string, text?: string): void {
  let loaded: { value: unknown } | undefined;
  checkOutcome(
    () => {
      loaded = { value: run() };
      return loaded.value;
    },
    file,
    text,
  );
  if (loaded) throw new Error(`the loader accepted the input instead of throwing a ScenarioLoadError: ${JSON.stringify(loaded.value).slice(0, 300)}`);
}

/** `e` is a ScenarioLoadError with at least one problem, each naming the file, a line and column inside the text, a path, and what is wrong. */
function expectExplainedLoadError(e: unknown, file: string, text?: string): void {
  if (!(e instanceof ScenarioLoadError)) {
    throw new Error(
      `the loader threw ${(e as Error)?.constructor?.name ?? typeof e} instead of a ScenarioLoadError: ${String((e as Error)?.message ?? e).slice(0, 300)}`,
    );
  }
  expect(e.problems.length, "a ScenarioLoadError with no problem in it").toBeGreaterThan(0);
  const lines = text === undefined ? 1 : text.split(/\r\n|\r|\n/).length;
  for (const p of e.problems) {
    const where = JSON.stringify(p);
    if (p.file !== file) throw new Error(`a problem names file '${p.file}', not '${file}': ${where}`);
    if (!Number.isInteger(p.line) || p.line < 1 || p.line > lines + 1)
      throw new Error(`a problem's line is outside the text (${lines} lines): ${where}`);
    if (!Number.isInteger(p.column) || p.column < 1) throw new Error(`a problem's column is not a column: ${where}`);
    if (typeof p.path !== "string") throw new Error(`a problem's path is not a string: ${where}`);
    if (typeof p.message !== "string" || !/[a-z]{3}/i.test(p.message) || p.message.trim().length < 8)
      throw new Error(`a problem does not say what is wrong: ${where}`);
    if (/^(Invalid input|Invalid|Required)\.?$/.test(p.message.trim())) throw new Error(`a problem says only '${p.message}': ${where}`);
  }
  expect(e.message).toBe(e.problems.map(formatProblem).join("\n"));
}

// ---------------------------------------------------------------------------------------------
// generators

const scalar: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.constantFrom(
    "",
    "token",
    "payment-init",
    "GET",
    "1h",
    "-2h",
    "90s",
    "RS256",
    "must_match",
    "gone",
    "header:X-Pay",
    "body:pt",
    "{{faker.string.uuid}}",
    "{{nope}}",
    "{{faker.helpers.arrayElement}}",
    "{{faker.constructor.name}}",
    "{{request.path}}",
    "presented",
    "all",
    "started",
    ...PROTO_KEYS,
  ),
  fc.integer({ min: -5, max: 700 }),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
);
const value: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { maxDepth: 3, depthSize: "small" },
    scalar,
    fc.array(tie("v"), { maxLength: 3 }),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom(...PROTO_KEYS)), tie("v"), { maxKeys: 3 }),
  ),
})).v;

/** A field that is usually right, sometimes of any type, sometimes missing. */
const field = <T>(good: fc.Arbitrary<T>) => fc.oneof({ weight: 4, arbitrary: good as fc.Arbitrary<unknown> }, { weight: 1, arbitrary: value });

const merchant = fc.record(
  {
    id: field(fc.stringMatching(/^[a-z_]{1,10}$/)),
    name: field(fc.string({ maxLength: 10 })),
    api_key: field(fc.stringMatching(/^[a-z-]{1,12}$/)),
    api_secret: field(fc.oneof(fc.stringMatching(/^[a-z-]{1,12}$/), fc.constantFrom("with space", "tab\there", ""))),
    payment_token: field(fc.stringMatching(/^[a-z-]{1,12}$/)),
    login: field(fc.record({ email: field(fc.constantFrom("a@b.c", "x", "")), password: field(fc.constantFrom("pw", "")) }, { requiredKeys: [] })),
    scopes: field(fc.array(fc.constantFrom("payment", "cashout", "refund"), { maxLength: 3 })),
    disabled: field(fc.boolean()),
  },
  { requiredKeys: [] },
);

const durationText = fc.oneof(
  fc.constantFrom("90s", "59m", "1h", "1h30m", "-2h", "500ms", "1d", "2x", "", "1e400", "-0"),
  fc.integer({ min: -100, max: 100_000 }),
  fc.double(),
);

const rule = fc.record(
  {
    name: field(fc.oneof(fc.stringMatching(/^[a-z ]{1,20}$/), fc.constant("x".repeat(101)), fc.constant("tab\t"))),
    match: field(
      fc.record(
        {
          endpoint: field(
            fc.oneof(
              fc.constantFrom("token", "login", "payment", "cashout", "payment-init", "jwks", "any", "tokn"),
              fc.array(fc.constantFrom("token", "payment", "x"), { maxLength: 3 }),
            ),
          ),
          method: field(fc.constantFrom("GET", "POST", "get", "BREW")),
          path: field(fc.constantFrom("/api/v2/payment/*", "/**", "no-slash", "")),
          merchant: field(fc.stringMatching(/^[a-z_]{1,10}$/)),
          calls: field(
            fc.record(
              {
                nth: field(fc.integer({ min: -1, max: 5 })),
                from: field(fc.integer({ min: 0, max: 5 })),
                times: field(fc.integer({ min: 0, max: 5 })),
              },
              { requiredKeys: [] },
            ),
          ),
          state: field(fc.string({ maxLength: 10 })),
          clock: field(fc.record({ after: field(durationText), before: field(durationText) }, { requiredKeys: [] })),
        },
        { requiredKeys: [] },
      ),
    ),
    then: field(
      fc.record(
        {
          respond: field(
            fc.record(
              {
                status: field(fc.integer({ min: 100, max: 700 })),
                headers: field(fc.dictionary(fc.constantFrom("X-A", "bad header", "Retry-After"), fc.constantFrom("1", "a\nb", "ok"))),
                body: field(value),
                retry_after: field(durationText),
              },
              { requiredKeys: [] },
            ),
          ),
          delay: field(durationText),
          drop_connection: field(fc.constant(true)),
          revoke_token: field(fc.constantFrom("presented", "all", "some")),
          issue_token: field(fc.record({ expired: field(fc.constant(true)), not_before: field(durationText) }, { requiredKeys: [] })),
          rotate_signing_key: field(fc.oneof(fc.constant(true), fc.record({ keep_old: field(fc.boolean()) }))),
          advance_clock: field(durationText),
          set_state: field(fc.string({ maxLength: 8 })),
        },
        { requiredKeys: [] },
      ),
    ),
  },
  { requiredKeys: [] },
);

/** Documents shaped like scenarios, right and wrong in every field. */
const scenarioLike = fc.record(
  {
    $schema: field(fc.constant("./scenario.schema.json")),
    name: field(fc.oneof(fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,15}$/), fc.constantFrom("Bad Name", "-x", ""))),
    description: field(fc.string({ maxLength: 30 })),
    merchants: field(fc.array(merchant, { maxLength: 3 })),
    settings: field(
      fc.record(
        {
          token_ttl: field(durationText),
          leeway: field(durationText),
          algorithm: field(fc.constantFrom("RS256", "ES256", "HS256", "none", "rs256")),
          credential_precedence: field(fc.constantFrom("must_match", "header", "body", "reject_both", "either")),
          login_mode: field(fc.constantFrom("deprecated", "gone", "off")),
          payment_token_transport: field(fc.constantFrom("authorization", "header:X-Pay", "body:pt", "header:bad name", "query:x")),
          disabled_merchant_status: field(fc.constantFrom(401, 403, 404)),
          clock_offset: field(durationText),
        },
        { requiredKeys: [] },
      ),
    ),
    rules: field(fc.array(rule, { maxLength: 3 })),
    extra: fc.oneof(fc.constant(undefined), value),
  },
  { requiredKeys: [] },
);

/** The same document written as YAML (block or flow) or JSON, sometimes with shared nodes (anchors and aliases). */
const asText = (doc: unknown) =>
  fc.constantFrom("yaml", "yaml-flow", "json", "json-pretty", "yaml-aliases").map((kind) => {
    if (kind === "json") return JSON.stringify(doc) ?? "null";
    if (kind === "json-pretty") return JSON.stringify(doc, null, 2) ?? "null";
    if (kind === "yaml-flow") return toYaml(doc, { collectionStyle: "flow" });
    if (kind === "yaml-aliases" && doc && typeof doc === "object" && !Array.isArray(doc)) {
      // The same node twice: the YAML writer emits an anchor and an alias.
      const d = doc as Record<string, unknown>;
      const shared = d.merchants ?? d.settings ?? {};
      return toYaml({ ...d, merchants: shared, settings: shared });
    }
    return toYaml(doc);
  });

/** YAML-level mutations: tokens with meaning in YAML, dropped into the text. */
const YAML_TOKENS = [
  "&a ",
  "*a",
  "*b",
  "<<: *a\n",
  "!!binary ",
  "!!set ",
  "!!map ",
  "!!str ",
  "!!int ",
  "!!timestamp ",
  "!custom ",
  "{",
  "}",
  "[",
  "]",
  "- ",
  "? ",
  "|",
  ">",
  "---\n",
  "...\n",
  "%YAML 1.2\n---\n",
  "%TAG ! tag:x,2000:\n---\n",
  "\t",
  "\u0000",
  "\ufeff",
  "\r",
  "\n",
  ": ",
  "#",
  "'",
  '"',
  "@",
  "`",
  "\\u",
  "0x1F",
  "1e309",
  ".nan",
  "~",
  "null",
  "<<",
  "\u2028",
  "\ud800",
];

type Mutation = (text: string) => string;
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.tuple(fc.nat(), fc.constantFrom(...YAML_TOKENS)).map(
    ([at, tok]): Mutation =>
      (t) => {
        const i = at % (t.length + 1);
        return t.slice(0, i) + tok + t.slice(i);
      },
  ),
  fc.tuple(fc.nat(), fc.string({ unit: "binary", maxLength: 6 })).map(
    ([at, s]): Mutation =>
      (t) => {
        const i = at % (t.length + 1);
        return t.slice(0, i) + s + t.slice(i);
      },
  ),
  fc.tuple(fc.nat(), fc.nat({ max: 30 })).map(
    ([at, n]): Mutation =>
      (t) => {
        const i = at % (t.length + 1);
        return t.slice(0, i) + t.slice(i + n);
      },
  ),
  fc.nat().map(
    (at): Mutation =>
      (t) =>
        t.slice(0, at % (t.length + 1)),
  ),
  // line operations: drop, duplicate, swap, re-indent
  fc.tuple(fc.nat(), fc.constantFrom("drop", "dup", "swap", "indent", "dedent", "tab")).map(
    ([at, op]): Mutation =>
      (t) => {
        const lines = t.split("\n");
        const i = at % lines.length;
        const j = (at >> 3) % lines.length;
        if (op === "drop") lines.splice(i, 1);
        else if (op === "dup") lines.splice(i, 0, lines[i]!);
        else if (op === "swap") [lines[i], lines[j]] = [lines[j]!, lines[i]!];
        else if (op === "indent") lines[i] = "  " + lines[i];
        else if (op === "dedent") lines[i] = lines[i]!.replace(/^ {1,2}/, "");
        else lines[i] = lines[i]!.replace(/^ +/, "\t");
        return lines.join("\n");
      },
  ),
  // a value replaced by another scalar, a key by another key
  fc
    .tuple(
      fc.nat(),
      fc.constantFrom(
        "''",
        "[]",
        "{}",
        "-1",
        "0",
        "99999999999999999999",
        "1e309",
        "true",
        "null",
        "~",
        "*a",
        "&a x",
        "!!binary aGk=",
        "'{{nope}}'",
        "'{{faker.helpers.multiple}}'",
        '"\\ud800"',
        "-2h",
        "1h30m",
        "x".repeat(300),
      ),
    )
    .map(
      ([at, v]): Mutation =>
        (t) => {
          const lines = t.split("\n");
          const candidates = lines.map((l, i) => (/:\s+\S/.test(l) ? i : -1)).filter((i) => i >= 0);
          if (!candidates.length) return t;
          const i = candidates[at % candidates.length]!;
          lines[i] = lines[i]!.replace(/(:\s+).*$/, `$1${v}`);
          return lines.join("\n");
        },
    ),
  fc.tuple(fc.nat(), fc.constantFrom(...PROTO_KEYS, "nmae", "merchant", "then", "match", "rules", "<<", "? x")).map(
    ([at, k]): Mutation =>
      (t) => {
        const lines = t.split("\n");
        const candidates = lines.map((l, i) => (/^\s*-?\s*[A-Za-z_$]+:/.test(l) ? i : -1)).filter((i) => i >= 0);
        if (!candidates.length) return t;
        const i = candidates[at % candidates.length]!;
        lines[i] = lines[i]!.replace(/^(\s*-?\s*)[A-Za-z_$]+:/, `$1${k}:`);
        return lines.join("\n");
      },
  ),
);

const mutatedFile = fc
  .tuple(fc.constantFrom(...FILES), fc.array(mutation, { minLength: 1, maxLength: 4 }))
  .map(([f, ms]) => ({ name: f.name, text: ms.reduce((t, m) => m(t), f.text) }));

// ---------------------------------------------------------------------------------------------

describe("fuzz: scenario loader (in process)", { timeout: FUZZ_TIMEOUT }, () => {
  it("the real files load (the mutation baseline)", () => {
    for (const f of FILES) checkOutcome(() => parseScenarioText(f.text, f.name), f.name, f.text);
  });

  it("mutated copies of scenarios/*.yaml: a valid scenario or a located, explained ScenarioLoadError", () => {
    fc.assert(
      fc.property(mutatedFile, ({ name, text }) => checkOutcome(() => parseScenarioText(text, name), name, text)),
      params(1500),
    );
  });

  it("documents shaped like scenarios, as YAML or JSON text", () => {
    fc.assert(
      fc.property(
        scenarioLike.chain((d) => asText(d).map((text) => ({ text }))),
        ({ text }) => checkOutcome(() => parseScenarioText(text, "fuzz.yaml"), "fuzz.yaml", text),
      ),
      params(800),
    );
  });

  it("random YAML/JSON documents and random text", () => {
    const text = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }).chain(asText),
      fc.string({ unit: "binary", maxLength: 200 }),
      fc.array(fc.constantFrom(...YAML_TOKENS, "name", "rules", "x", "1", " "), { maxLength: 40 }).map((ts) => ts.join("")),
    );
    fc.assert(
      fc.property(text, (t) => checkOutcome(() => parseScenarioText(t, "random.yaml"), "random.yaml", t)),
      params(800),
    );
  });

  it("validateScenario on data (the library path: objects passed to createSandbox)", () => {
    fc.assert(
      fc.property(fc.oneof(scenarioLike, fc.anything({ maxDepth: 3, withNullPrototype: true, withObjectString: true })), (data) =>
        checkOutcome(() => validateScenario(data, "createSandbox scenarios[0]"), "createSandbox scenarios[0]"),
      ),
      params(800),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// What the fuzzer found, shrunk.

describe("fuzz findings, minimal reproducers", () => {
  const problemsOf = (text: string) => {
    try {
      parseScenarioText(text, "f.yaml");
    } catch (e) {
      return (e as ScenarioLoadError).problems;
    }
    throw new Error("loaded");
  };

  it("an alias to an anchor that does not exist is a ScenarioLoadError, not a ReferenceError", () => {
    expectLoadError(() => parseScenarioText("name: *a\n", "f.yaml"), "f.yaml", "name: *a\n");
    expect(problemsOf("name: *a\n")).toEqual([
      {
        file: "f.yaml",
        line: 1,
        column: 1,
        path: "",
        message:
          "a YAML alias cannot be used here (Unresolved alias (the anchor must be set before the alias): a); write the value out in full instead of *alias",
      },
    ]);
  });

  it("an alias bomb is a ScenarioLoadError, not a ReferenceError", () => {
    const text = "a: &a [1,2,3,4,5,6,7,8,9,10]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n";
    expectLoadError(() => parseScenarioText(text, "f.yaml"), "f.yaml", text);
  });

  it("a response body that contains itself (an alias inside its own anchor) is a ScenarioLoadError, not a stack overflow", () => {
    const text =
      "name: x\ndescription: y\nmerchants: [{id: m, api_key: k, api_secret: s, payment_token: p}]\nrules:\n  - then:\n      respond:\n        status: 200\n        body: &b [*b]\n";
    expectLoadError(() => parseScenarioText(text, "f.yaml"), "f.yaml", text);
    expect(problemsOf(text)).toEqual([
      {
        file: "f.yaml",
        line: 8,
        column: 19,
        path: "rules[0].then.respond.body[0]",
        message: "this value includes itself (a YAML alias inside its own anchor), so it never ends; write the value out in full",
      },
    ]);
  });

  it("a mapping with a 'toString' key where a name is expected is a ScenarioLoadError, not a TypeError", () => {
    const text = "rules:\n  - match:\n      endpoint:\n        - toString: x\n";
    expectLoadError(() => parseScenarioText(text, "f.yaml"), "f.yaml", text);
  });

  it("a null-prototype object where a literal is expected (library path) is a ScenarioLoadError, not a TypeError", () => {
    expectLoadError(() => validateScenario({ rules: [{ then: { drop_connection: Object.create(null) } }] }, "lib"), "lib");
  });
});
