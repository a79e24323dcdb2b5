import type { Path } from "./data-problems.js";

/**
 * How large a source file (a scenario, a profile) may be. Parsing, validating and placing each
 * problem cost time and memory in proportion to the file, and a file nested thousands of levels
 * deep overflowed the stack ("Maximum call stack size exceeded"). The figures and what a file
 * past them costs are in docs/configuration.md (Limits).
 */
export const SOURCE_LIMITS = {
  /** Bytes of one file. */
  maxBytes: 1024 * 1024,
  /** Levels of mappings and lists inside one another, the document itself being the first. */
  maxDepth: 64,
  /** Merchants of one scenario. */
  maxMerchants: 1000,
} as const;

const count = (n: number) => n.toLocaleString("en-US");

/** A file over maxBytes: its size, the limit and what to do. */
export function sizeMessage(what: string, bytes: number): string {
  return `${what} is ${count(bytes)} bytes, more than the ${count(SOURCE_LIMITS.maxBytes)} bytes (1 MiB) a file may hold: split it into several files, or keep only what the tests use`;
}

/** A value nested deeper than maxDepth (or deeper than the parser could follow). */
export const DEPTH_MESSAGE = `this value nests mappings and lists more than ${SOURCE_LIMITS.maxDepth} levels deep, the most a scenario, a profile or a session action may: flatten it`;

/** A scenario with more than maxMerchants merchants. */
export function merchantsMessage(merchants: number): string {
  return `the scenario has ${count(merchants)} merchants, more than the ${count(SOURCE_LIMITS.maxMerchants)} one scenario may hold: split them into several scenario files, or make a session per test (POST /__sandbox/sessions), each with merchants of its own`;
}

/**
 * The path of the first value nested deeper than `maxDepth` (a mapping or list inside `maxDepth`
 * others), or undefined. Iterative, and never deeper than the limit: the value may be nested past
 * what a recursive walk survives. A value inside itself is left to the cycle check (cyclePath).
 */
export function tooDeepPath(data: unknown, maxDepth: number = SOURCE_LIMITS.maxDepth): Path | undefined {
  if (data === null || typeof data !== "object") return undefined;
  // Depth-first: each frame is a container with its path; `open` holds the containers on the current path.
  const stack: Array<{ value: object; path: Path }> = [{ value: data, path: [] }];
  const open: object[] = [];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    open.length = path.length;
    if (path.length >= maxDepth) return path;
    open.push(value);
    const isList = Array.isArray(value);
    for (const key of Object.keys(value)) {
      const child = (value as Record<string, unknown>)[key];
      if (child === null || typeof child !== "object" || open.includes(child)) continue;
      stack.push({ value: child, path: [...path, isList ? Number(key) : key] });
    }
  }
  return undefined;
}
