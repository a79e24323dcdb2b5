import type { EndpointName } from "../core/context.js";
import { parseDuration } from "../core/duration.js";
import { compileGlob, type PathGlob } from "./glob.js";
import { ruleName } from "./rule-summary.js";
import type { EndpointMatch, MatchFile, RuleFile } from "./schema.js";

/**
 * Matching requests against a scenario's rules. A rule's conditions are compiled once, when the
 * scenario is created; per request, matching is a few comparisons. The call count of a rule
 * counts the requests that met its other conditions, so `calls: {nth: 3}` is "the third such call".
 */

export interface RequestFacts {
  endpoint: EndpointName;
  method: string;
  path: string;
  merchantId: string | undefined;
  state: string;
  /** Milliseconds since the scenario started, on its clock. */
  elapsedMs: number;
}

export class CompiledRule {
  readonly name: string;
  private calls = 0;
  private readonly endpoints: Set<string> | undefined;
  private readonly methods: Set<string> | undefined;
  private readonly path: PathGlob | undefined;
  private readonly afterMs: number | undefined;
  private readonly beforeMs: number | undefined;

  constructor(
    readonly rule: RuleFile,
    index: number,
  ) {
    this.name = ruleName(rule, index);
    const m: MatchFile = rule.match ?? {};
    const endpoints = toList<EndpointMatch>(m.endpoint);
    this.endpoints = endpoints && !endpoints.includes("any") ? new Set(endpoints) : undefined;
    const methods = toList(m.method);
    this.methods = methods ? new Set(methods) : undefined;
    this.path = m.path === undefined ? undefined : compileGlob(m.path);
    this.afterMs = m.clock?.after === undefined ? undefined : parseDuration(m.clock.after);
    this.beforeMs = m.clock?.before === undefined ? undefined : parseDuration(m.clock.before);
  }

  /** True when the rule fires for this request; counts the call when its other conditions hold. */
  matches(facts: RequestFacts): boolean {
    const m = this.rule.match ?? {};
    if (this.endpoints && !this.endpoints.has(facts.endpoint)) return false;
    if (this.methods && !this.methods.has(facts.method)) return false;
    if (this.path && !this.path.test(facts.path)) return false;
    if (m.merchant !== undefined && m.merchant !== facts.merchantId) return false;
    if (m.state !== undefined && m.state !== facts.state) return false;
    if (this.afterMs !== undefined && facts.elapsedMs < this.afterMs) return false;
    if (this.beforeMs !== undefined && facts.elapsedMs >= this.beforeMs) return false;
    const n = ++this.calls;
    const c = m.calls;
    if (!c) return true;
    if (c.nth !== undefined) return n === c.nth;
    const from = c.from ?? 1;
    return n >= from && (c.times === undefined || n < from + c.times);
  }

  /** True once the rule can fire no more: its `calls` (nth, or from + times) are used up. */
  get spent(): boolean {
    const c = this.rule.match?.calls;
    if (c?.nth !== undefined) return this.calls >= c.nth;
    return c?.times !== undefined && this.calls >= (c.from ?? 1) + c.times - 1;
  }

  get callCount(): number {
    return this.calls;
  }

  resetCount(): void {
    this.calls = 0;
  }

  /** Takes the count another replica's copy of this rule reached (its state, shared). */
  restoreCount(calls: number): void {
    if (!Number.isSafeInteger(calls) || calls < 0)
      throw new RangeError(`rule '${this.name}': a call count is a whole number of 0 or more, got ${calls}`);
    this.calls = calls;
  }
}

function toList<T extends string>(value: T | T[] | undefined): T[] | undefined {
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value : [value];
}
