import type { z } from "zod";
import { clip, type Explained, type Path } from "./data-problems.js";
import { didYouMean } from "./suggest.js";

/**
 * The schema's complaints (zod issues) in the loader's words: what is wrong and how to fix it,
 * with the value quoted, the allowed keys or values listed and the nearest one suggested. Shared
 * by the scenario and the profile loaders; each says which keys are allowed where and what its
 * enum fields are called.
 */

export interface ExplainerOptions {
  /** The keys allowed at a path of the file (read from its schema). */
  allowedKeysAt(path: readonly PropertyKey[]): string[];
  /** What each enum field is called in messages: "'tokn' is not an endpoint". */
  valueNouns: Readonly<Record<string, string>>;
  /**
   * How a key or value of the data is quoted, at most `max` characters (between the quotes). A
   * file's own text as it is, shortened; a request's body (the control plane) through `echo`
   * (core/echo.ts), so it is redacted before it is shortened.
   */
  quote?: Quote;
}

/** A key or value quoted for a message, at most `max` characters. */
export type Quote = (text: string, max: number) => string;

/** Keys are shortened to clip's length (with an ellipsis); values to VALUE_MAX. */
const KEY_MAX = 80;
const VALUE_MAX = 60;
/** A file's text as it is: a pasted blob must not fill the screen. */
const shortened: Quote = (text, max) => (max === KEY_MAX ? clip(text) : text.slice(0, max));

/**
 * Drops issues that only follow from another: a `then` whose one action is misspelt is reported as
 * the unknown key, not also as "needs at least one action".
 */
export function withoutConsequences(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  const unknownAt = new Set(issues.filter((i) => i.code === "unrecognized_keys").map((i) => i.path.map(String).join(".")));
  return issues.filter((i) => !(i.code === "custom" && unknownAt.has(i.path.map(String).join("."))));
}

export function issueExplainer(options: ExplainerOptions): (issue: z.core.$ZodIssue, data: unknown) => Explained[] {
  const { allowedKeysAt, valueNouns: VALUE_NOUNS, quote = shortened } = options;
  return function explain(issue: z.core.$ZodIssue, data: unknown): Explained[] {
    const path = issue.path as Path;
    const value = valueAt(data, path);
    switch (issue.code) {
      case "unrecognized_keys": {
        const allowed = allowedKeysAt(path);
        return issue.keys.map((key) => ({
          path,
          key,
          message: `unknown key '${quote(key, KEY_MAX)}'${didYouMean(key, allowed)}${allowed.length ? ` (allowed here: ${allowed.join(", ")})` : ""}`,
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
            message: `${show(value, quote)} is not ${noun}${didYouMean(text, options)}${VALUE_NOUNS[field] ? ` (use one of: ${options.join(", ")})` : ""}`,
          },
        ];
      }
      case "invalid_type": {
        if (value === undefined) return [{ path, message: `is required: ${expectedText(issue.expected)}` }];
        return [{ path, message: `must be ${expectedText(issue.expected)}, not ${kindOf(value, quote)}` }];
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
        return [{ path, message: `must be ${kinds.join(" or ")}, not ${kindOf(value, quote)}` }];
      }
      case "too_small":
      case "too_big":
        return [{ path, message: rangeMessage(issue, path) }];
      // A key of a mapping its schema refuses (a header name): what is wrong with the key, at the key.
      case "invalid_key":
        return issue.issues.map((i) => ({ path: path.slice(0, -1), key: String(path.at(-1)), message: cleanZodMessage(i.message) }));
      default:
        return [{ path, message: cleanZodMessage(issue.message) }];
    }
  };
}

/** The value at a path of parsed data, or undefined where the path leaves it. */
export function valueAt(data: unknown, path: Path): unknown {
  let v: unknown = data;
  for (const p of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}

function kindOf(value: unknown, quote: Quote): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  if (typeof value === "string") return `the text ${show(value, quote)}`;
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

/** A value quoted for a message. Never throws: data given to createSandbox may be anything. */
function show(value: unknown, quote: Quote): string {
  let text: string;
  try {
    text = typeof value === "string" ? value : (JSON.stringify(value) ?? typeof value);
  } catch {
    text = Array.isArray(value) ? "a list" : typeof value;
  }
  return `'${quote(text, VALUE_MAX)}'`;
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
