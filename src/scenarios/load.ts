import { readFileSync } from "node:fs";
import { LineCounter, isMap, isNode, isPair, isScalar, parseDocument, visit, type Document, type Node } from "yaml";
import type { z } from "zod";
import { merchantIdentifiers, type MerchantIdentity } from "../core/merchants.js";
import { allowedKeysAt } from "./allowed-keys.js";
import { boundProblems, ScenarioLoadError } from "./problems.js";
import { scenarioSchema, type ScenarioFile } from "./schema.js";
import { didYouMean } from "./suggest.js";
import { placeholderProblem, placeholdersIn } from "./template.js";
import { faker as fakerForChecks } from "@faker-js/faker/locale/en";

/**
 * Reading a scenario file (YAML, or JSON, which YAML 1.2 reads too) into a validated
 * ScenarioFile. Every problem is reported with file, line and column, what is wrong and how to
 * fix it; a file with any problem yields no scenario at all (nothing half-loads).
 */

export { ScenarioLoadError, formatProblem, type ScenarioProblem } from "./problems.js";

/** Where `path` is in a scenario text (1:1 when it cannot be found): for problems found after loading. */
export function positionIn(text: string, path: Path): { line: number; column: number } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter });
  const pos = lineCounter.linePos(offsetOf(doc, path));
  return { line: pos.line, column: pos.col };
}

export function loadScenarioFile(path: string): ScenarioFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : (code ?? "unreadable");
    throw new ScenarioLoadError([{ file: path, line: 1, column: 1, path: "", message: `cannot read the scenario file (${why})` }]);
  }
  return parseScenarioText(text, path);
}

export function parseScenarioText(text: string, file = "<scenario>"): ScenarioFile {
  const lineCounter = new LineCounter();
  // Duplicate keys are found by duplicateKeys below: the parser's own check compares each key with
  // every earlier one of its mapping, quadratic (100,000 keys took minutes).
  const doc = parseDocument(text, { lineCounter, uniqueKeys: false, prettyErrors: false });
  const at = (offset: number) => {
    const pos = lineCounter.linePos(offset);
    return { line: pos.line, column: pos.col };
  };
  const errors = [...doc.errors.map((e) => ({ offset: e.pos[0], code: e.code as string, message: e.message })), ...duplicateKeys(doc)];
  if (errors.length > 0) {
    errors.sort((a, b) => a.offset - b.offset);
    throw new ScenarioLoadError(
      boundProblems(
        errors.map((e) => ({ file, ...at(e.offset), path: "", message: syntaxMessage(e.code, e.message, text.slice(e.offset, e.offset + 200)) })),
      ),
    );
  }
  let data: unknown;
  try {
    data = doc.toJS();
  } catch (e) {
    // An alias to an anchor that is not there, or an alias bomb (the yaml library stops at 100).
    const message = `a YAML alias cannot be used here (${(e as Error).message}); write the value out in full instead of *alias`;
    throw new ScenarioLoadError([{ file, line: 1, column: 1, path: "", message }]);
  }
  const offsets = offsetFinder(doc);
  return validateScenario(data, file, (path, key) => at(offsets(path, key)));
}

/** Every key that repeats an earlier scalar key of its mapping, where it is: one set per mapping. */
function duplicateKeys(doc: Document): Array<{ offset: number; code: string; message: string }> {
  const found: Array<{ offset: number; code: string; message: string }> = [];
  visit(doc, {
    Map(_, map) {
      const seen = new Set<unknown>();
      for (const pair of map.items) {
        if (!isScalar(pair.key)) continue;
        if (seen.has(pair.key.value)) found.push({ offset: pair.key.range?.[0] ?? 0, code: "DUPLICATE_KEY", message: "Map keys must be unique" });
        else seen.add(pair.key.value);
      }
    },
  });
  return found;
}

/** The path of a value that contains itself (through YAML anchors, or objects given as data), if any. */
function cyclePath(data: unknown, ancestors: unknown[] = [], path: Path = []): Path | undefined {
  if (data === null || typeof data !== "object") return undefined;
  if (ancestors.includes(data)) return path;
  ancestors.push(data);
  for (const [key, value] of Object.entries(data)) {
    const found = cyclePath(value, ancestors, [...path, Array.isArray(data) ? Number(key) : key]);
    if (found) return found;
  }
  ancestors.pop();
  return undefined;
}

/**
 * Validates a scenario given as data (a parsed file, or an object passed to createSandbox).
 * `positionOf` maps a path to its line and column in the source text, when there is one.
 */
export function validateScenario(
  data: unknown,
  file: string,
  positionOf: (path: Path, key?: string) => { line: number; column: number } = () => ({ line: 1, column: 1 }),
): ScenarioFile {
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new ScenarioLoadError([
      { file, line: 1, column: 1, path: "", message: "a scenario holds one mapping with name, description, merchants and rules" },
    ]);
  }
  const cycle = cyclePath(data);
  if (cycle) {
    const message = "this value includes itself (a YAML alias inside its own anchor), so it never ends; write the value out in full";
    throw new ScenarioLoadError([{ file, ...positionOf(cycle), path: pathText(cycle), message }]);
  }
  const result = scenarioSchema.safeParse(data);
  // Cross-field checks run on the raw data too, so every problem is reported at once.
  const explained = [
    ...(result.success ? [] : withoutConsequences(result.error.issues).flatMap((issue) => explain(issue, data))),
    ...semanticProblems(data as Record<string, unknown>),
  ];
  if (result.success && explained.length === 0) return result.data;
  const problems = explained.map((p) => ({
    file,
    ...positionOf(p.path, p.key),
    path: pathText(p.key === undefined ? p.path : [...p.path, p.key]),
    message: p.message,
  }));
  problems.sort((a, b) => a.line - b.line || a.column - b.column);
  throw new ScenarioLoadError(boundProblems(problems));
}

/**
 * Drops issues that only follow from another: a `then` whose one action is misspelt is reported as
 * the unknown key, not also as "needs at least one action".
 */
function withoutConsequences(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  const unknownAt = new Set(issues.filter((i) => i.code === "unrecognized_keys").map((i) => i.path.map(String).join(".")));
  return issues.filter((i) => !(i.code === "custom" && unknownAt.has(i.path.map(String).join("."))));
}

export type Path = PropertyKey[];
interface Explained {
  path: Path;
  /** For an unknown key: the key itself, so the position is the key's, not its parent's. */
  key?: string;
  message: string;
}

/** What each enum field is called in messages: "'tokn' is not an endpoint". */
const VALUE_NOUNS: Record<string, string> = {
  endpoint: "an endpoint",
  method: "an HTTP method",
  algorithm: "a supported algorithm",
  credential_precedence: "a credential precedence",
  login_mode: "a login mode",
  scopes: "a scope",
  revoke_token: "a revoke_token target",
  expire_token: "an expire_token target",
};

function explain(issue: z.core.$ZodIssue, data: unknown): Explained[] {
  const path = issue.path as Path;
  const value = valueAt(data, path);
  switch (issue.code) {
    case "unrecognized_keys": {
      const allowed = allowedKeysAt(path);
      return issue.keys.map((key) => ({
        path,
        key,
        message: `unknown key '${clip(key)}'${didYouMean(key, allowed)}${allowed.length ? ` (allowed here: ${allowed.join(", ")})` : ""}`,
      }));
    }
    case "invalid_value": {
      const field = String([...path].reverse().find((p) => typeof p === "string") ?? "value");
      const options = issue.values.map(String);
      const noun = VALUE_NOUNS[field] ?? `one of ${options.join(", ")}`;
      const text = typeof value === "string" ? value : "";
      return [
        {
          path,
          message: `${show(value)} is not ${noun}${didYouMean(text, options)}${VALUE_NOUNS[field] ? ` (use one of: ${options.join(", ")})` : ""}`,
        },
      ];
    }
    case "invalid_type": {
      if (value === undefined) return [{ path, message: `is required: ${expectedText(issue.expected)}` }];
      return [{ path, message: `must be ${expectedText(issue.expected)}, not ${kindOf(value)}` }];
    }
    case "invalid_union": {
      // A union of a duration string and a number, or of `true` and an object: report the branch
      // that fits the value's kind, else say which kinds are accepted.
      const branches = (issue as z.core.$ZodIssueInvalidUnion).errors;
      // A branch "fits" when the value is of the kind it takes (a string for an enum of strings,
      // a mapping for an object) and only the content is wrong.
      const kindMismatch = (i: z.core.$ZodIssue) =>
        i.path.length === 0 && (i.code === "invalid_type" || (i.code === "invalid_value" && !i.values.some((v) => typeof v === typeof value)));
      const fitting = branches.find((branch) => branch.length > 0 && !branch.some(kindMismatch));
      if (fitting) return fitting.flatMap((i) => explain({ ...i, path: [...path, ...i.path] } as z.core.$ZodIssue, data));
      // A union with a message of its own (durations) says what it takes in words.
      if (!/^Invalid input/.test(issue.message)) return [{ path, message: issue.message }];
      const kinds = [
        ...new Set(
          branches.flatMap((b) => b.filter((i) => i.code === "invalid_type").map((i) => expectedText((i as z.core.$ZodIssueInvalidType).expected))),
        ),
      ];
      return [{ path, message: `must be ${kinds.join(" or ")}, not ${kindOf(value)}` }];
    }
    case "too_small":
    case "too_big":
      return [{ path, message: rangeMessage(issue, path) }];
    default:
      return [{ path, message: cleanZodMessage(issue.message) }];
  }
}

/** Cross-field checks the schema cannot express; on raw data, so they skip what is malformed. */
function semanticProblems(data: Record<string, unknown>): Explained[] {
  const problems: Explained[] = [];
  const merchants = Array.isArray(data.merchants) ? (data.merchants as unknown[]) : [];
  const seen = new Map<string, number>();
  const ids: string[] = [];
  const idSet = new Set<string>();
  merchants.forEach((m, i) => {
    if (!m || typeof m !== "object") return;
    const merchant = m as Record<string, unknown>;
    if (typeof merchant.id === "string") {
      ids.push(merchant.id);
      idSet.add(merchant.id);
    }
    for (const identifier of merchantIdentifiers(identityOf(merchant))) {
      const key = `${identifier.name}:${identifier.value}`;
      const field = identifier.field.join(".");
      if (seen.has(key)) {
        problems.push({
          path: ["merchants", i, ...identifier.field],
          message: `merchants[${seen.get(key)}] has the same ${field}; each merchant needs its own`,
        });
      } else seen.set(key, i);
    }
  });
  const rules = Array.isArray(data.rules) ? (data.rules as unknown[]) : [];
  rules.forEach((r, i) => {
    if (!r || typeof r !== "object") return;
    const rule = r as { match?: { merchant?: unknown; calls?: unknown }; then?: { respond?: { body?: unknown } } };
    const merchant = rule.match?.merchant;
    if (typeof merchant === "string" && !idSet.has(merchant)) {
      const listed = ids.length <= 10 ? ids.join(", ") : `${ids.slice(0, 10).join(", ")} and ${ids.length - 10} more`;
      problems.push({
        path: ["rules", i, "match", "merchant"],
        message: `'${clip(merchant)}' is not a merchant of this scenario${didYouMean(merchant, ids)} (merchants: ${listed})`,
      });
    }
    const body = rule.then?.respond?.body;
    if (body !== undefined) problems.push(...templateProblems(body, ["rules", i, "then", "respond", "body"]));
    const calls = rule.match?.calls;
    if (calls && typeof calls === "object" && Object.keys(calls).length === 0) {
      problems.push({ path: ["rules", i, "match", "calls"], message: "calls needs nth, from or times" });
    }
  });
  return problems;
}

/** What identifies a merchant of the raw data, as far as it is given (a malformed field is left out). */
function identityOf(merchant: Record<string, unknown>): MerchantIdentity {
  const text = (v: unknown) => (typeof v === "string" ? v : undefined);
  const login = merchant.login && typeof merchant.login === "object" ? (merchant.login as Record<string, unknown>) : undefined;
  return { id: text(merchant.id), apiKey: text(merchant.api_key), paymentToken: text(merchant.payment_token), login: { email: text(login?.email) } };
}

/** Every `{{…}}` placeholder in a response body must resolve; checked here so a bad one never reaches a request. */
function templateProblems(value: unknown, path: Path): Explained[] {
  if (typeof value === "string") {
    return placeholdersIn(value).flatMap((expr) => {
      const problem = placeholderProblem(expr, fakerForChecks);
      return problem ? [{ path, message: problem }] : [];
    });
  }
  if (Array.isArray(value)) return value.flatMap((v, i) => templateProblems(v, [...path, i]));
  if (value && typeof value === "object") return Object.entries(value).flatMap(([k, v]) => templateProblems(v, [...path, k]));
  return [];
}

/**
 * offsetOf, remembering what it found: a file with thousands of problems under one mapping would
 * otherwise search that mapping's keys (and walk down to it) once per problem, quadratic in its size.
 */
function offsetFinder(doc: Document): (path: Path, key?: string) => number {
  const keysByParent = new Map<string, Map<unknown, number> | undefined>();
  const byPath = new Map<string, number>();
  return (path, key) => {
    // JSON, not pathText: a key may hold a dot, and ["a.b"] is not ["a", "b"].
    const at = JSON.stringify(path.map((p) => (typeof p === "number" ? p : String(p))));
    if (key !== undefined) {
      if (!keysByParent.has(at)) {
        const parent = doc.getIn(path as unknown[], true);
        let keys: Map<unknown, number> | undefined;
        if (isMap(parent)) {
          keys = new Map();
          // The first pair with the key, as offsetOf's find takes it.
          for (const p of parent.items)
            if (isPair(p) && isScalar(p.key) && p.key.range && !keys.has(p.key.value)) keys.set(p.key.value, p.key.range[0]);
        }
        keysByParent.set(at, keys);
      }
      const found = keysByParent.get(at)?.get(key);
      if (found !== undefined) return found;
    }
    let offset = byPath.get(at);
    if (offset === undefined) {
      offset = offsetOf(doc, path);
      byPath.set(at, offset);
    }
    return offset;
  };
}

/** The offset of the node at `path` (or of the key `key` inside it); the nearest existing ancestor otherwise. */
function offsetOf(doc: Document, path: Path, key?: string): number {
  if (key !== undefined) {
    const parent = doc.getIn(path as unknown[], true);
    if (isMap(parent)) {
      const pair = parent.items.find((p) => isPair(p) && isScalar(p.key) && p.key.value === key);
      if (pair && isNode(pair.key) && pair.key.range) return pair.key.range[0];
    }
  }
  for (let n = path.length; n >= 0; n--) {
    const node = doc.getIn(path.slice(0, n) as unknown[], true) as Node | undefined;
    if (isNode(node) && node.range) {
      // For a missing key, point at its parent mapping; for an existing value, at the value.
      return node.range[0];
    }
  }
  return 0;
}

export function pathText(path: Path): string {
  return path.reduce<string>((acc, p) => (typeof p === "number" ? `${acc}[${p}]` : acc ? `${acc}.${String(p)}` : String(p)), "");
}

function valueAt(data: unknown, path: Path): unknown {
  let v: unknown = data;
  for (const p of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  if (typeof value === "string") return `the text ${show(value)}`;
  return `${typeof value === "number" ? "the number" : typeof value} ${String(value)}`;
}

function expectedText(expected: string): string {
  const map: Record<string, string> = {
    string: "a text",
    number: "a number",
    int: "a whole number",
    boolean: "true or false",
    object: "a mapping (key: value lines)",
    array: "a list (lines starting with '- ')",
  };
  return map[expected] ?? expected;
}

/** A key or name from the file, shortened for a message: a pasted blob as a key must not fill the screen. */
function clip(text: string): string {
  return text.length <= 80 ? text : `${text.slice(0, 80)}…`;
}

/** A value quoted for a message. Never throws: data given to createSandbox may be anything. */
function show(value: unknown): string {
  let text: string;
  try {
    text = typeof value === "string" ? value : (JSON.stringify(value) ?? typeof value);
  } catch {
    text = Array.isArray(value) ? "a list" : typeof value;
  }
  return `'${text.slice(0, 60)}'`;
}

/** Range problems in the loader's words: an HTTP status, a count, a non-empty text or list. */
function rangeMessage(issue: z.core.$ZodIssueTooSmall | z.core.$ZodIssueTooBig, path: Path): string {
  // A message written in the schema says it best.
  if (!/^Too (small|big)/.test(issue.message)) return issue.message;
  const field = String(path.at(-1));
  if (field === "status") return "must be an HTTP status from 200 to 599";
  const limit = Number(issue.code === "too_small" ? issue.minimum : issue.maximum);
  switch (issue.origin) {
    case "string":
      return issue.code === "too_small" && limit === 1
        ? "must not be empty"
        : `must be ${issue.code === "too_small" ? "at least" : "at most"} ${limit} characters long`;
    case "array":
      return issue.code === "too_small" ? `needs at least ${limit} item${limit === 1 ? "" : "s"}` : `may have at most ${limit} items`;
    default:
      if (issue.code === "too_small" && limit === 0) return "must not be negative";
      return `must be ${issue.code === "too_small" ? "at least" : "at most"} ${limit}`;
  }
}

function cleanZodMessage(message: string): string {
  return message.replace(/^Invalid input: /, "").replace(/^Too small: expected (\w+) to have >=(\d+) items?$/, "needs at least $2 item(s)");
}

function syntaxMessage(code: string, message: string, at: string): string {
  if (code === "DUPLICATE_KEY") {
    // The parser marks the key's first character; read the whole key (quoted, as in JSON, or plain).
    const key = (/^"([^"]+)"/.exec(at) ?? /^'([^']+)'/.exec(at) ?? /^([^\s:,{}[\]]+)/.exec(at))?.[1];
    return `${key ? `the key '${key}'` : "a key"} appears twice in the same mapping; keep one`;
  }
  const first = message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
  return `not valid YAML or JSON: ${first}`;
}
