import { type ClockState, clockStateProblem } from "../core/clock.js";
import { LOGIN_MODES, type LoginMode } from "../core/config.js";
import { merchantState, merchantStateProblem, type MerchantRegistry, type MerchantState } from "../core/merchants.js";
import type { ScenarioKeysState } from "../core/scenario-keys.js";
import type { ScenarioInstance } from "./instance.js";
import { CompiledRule } from "./rules.js";
import type { RuleFile } from "./schema.js";

/**
 * The state of a running scenario as replicas share it: everything its rules, a session's actions
 * and its clock change, as JSON (it holds its merchants' secrets: never log it). What the scenario
 * file says is not in it: each replica has the file, and compiles it itself. Written in one order,
 * so the same state is always the same text (a replica compares texts to find what changed).
 */
export interface InstanceState {
  /** The state machine's state. */
  readonly state: string;
  readonly startedAtMs: number;
  readonly loginMode: LoginMode;
  readonly clock: ClockState;
  readonly keys: ScenarioKeysState;
  /** In the order of the scenario's merchants. */
  readonly merchants: readonly MerchantState[];
  /** The call count of each of the file's rules, in file order. */
  readonly counts: readonly number[];
  /** A session's `next` rules still to fire, oldest first, with their counts. */
  readonly next: readonly ActionRuleState[];
  /** How many `next` rules were ever added (they are named `action-<n>`). */
  readonly nextAdded: number;
}

export interface ActionRuleState {
  readonly rule: RuleFile;
  readonly calls: number;
}

export function instanceState(instance: ScenarioInstance): InstanceState {
  const pending = instance.actionRuleCount;
  const rules = instance.rules;
  const counts: number[] = [];
  for (let i = pending; i < rules.length; i++) counts.push(rules[i]!.callCount);
  const next: ActionRuleState[] = [];
  for (let i = 0; i < pending; i++) next.push({ rule: rules[i]!.rule, calls: rules[i]!.callCount });
  return {
    state: instance.state,
    startedAtMs: instance.startedAtMs,
    loginMode: instance.settings.loginMode,
    clock: instance.clock.toState(),
    keys: instance.keys.toState(),
    merchants: instance.merchants.map(merchantState),
    counts,
    next,
    nextAdded: instance.actionRulesEverAdded,
  };
}

/** `instanceState` as the JSON text replicas store and compare. */
export function instanceJson(instance: ScenarioInstance): string {
  return JSON.stringify(instanceState(instance));
}

/**
 * Makes `instance` (a copy of the same scenario file, on another replica) what `state` says:
 * afterwards it answers as the one the state was taken from. `registry`: the one holding the
 * instance's merchants, kept in step (redaction, lookups). The keys the state names must be in the
 * instance's key ring already (KeyRing.absorbKeys). A state of another scenario, one that is not
 * such a state, or one naming a key the ring lacks is refused with an Error saying what does not
 * fit, before anything changed.
 */
export function restoreInstance(instance: ScenarioInstance, state: InstanceState, registry: MerchantRegistry): void {
  const problem = stateProblem(instance, state);
  if (problem) throw new TypeError(`scenario '${instance.name}': the shared state ${problem}; give what instanceState() returned for this scenario`);
  const next = state.next.map((entry) => actionRule(instance, entry));
  instance.keys.restore(state.keys);
  instance.clock.restore(state.clock);
  for (const [i, merchant] of instance.merchants.entries()) registry.restoreMerchant(merchant, state.merchants[i]!);
  instance.replaceActionRules(next, state.nextAdded);
  const rules = instance.rules;
  for (const [i, entry] of state.next.entries()) rules[i]!.restoreCount(entry.calls);
  for (const [i, calls] of state.counts.entries()) rules[next.length + i]!.restoreCount(calls);
  instance.state = state.state;
  instance.startedAtMs = state.startedAtMs;
  instance.settings.loginMode = state.loginMode;
}

/** The `next` rule of the state, compiled, or the instance's own when it already holds that rule. */
function actionRule(instance: ScenarioInstance, entry: ActionRuleState): CompiledRule {
  const json = JSON.stringify(entry.rule);
  const held = instance.actionRules.find((r) => r.name === entry.rule.name && JSON.stringify(r.rule) === json);
  return held ?? new CompiledRule(entry.rule, 0);
}

/** What does not fit this instance in the state, or undefined. */
function stateProblem(instance: ScenarioInstance, s: InstanceState): string | undefined {
  if (typeof s !== "object" || s === null) return "is not an object";
  if (typeof s.state !== "string") return "has no state machine state";
  if (!Number.isFinite(s.startedAtMs)) return "has no startedAtMs";
  if (!(LOGIN_MODES as readonly unknown[]).includes(s.loginMode)) return `has a loginMode other than ${LOGIN_MODES.join(" or ")}`;
  const clock = clockStateProblem(s.clock);
  if (clock) return `has a clock state that ${clock}`;
  if (typeof s.keys !== "object" || s.keys === null) return "needs keys";
  if (!Array.isArray(s.merchants) || s.merchants.length !== instance.merchants.length)
    return `needs ${instance.merchants.length} merchant(s), as the scenario has`;
  for (const [i, merchant] of instance.merchants.entries()) {
    const problem = merchantStateProblem(merchant.id, s.merchants[i]!);
    if (problem) return `gives merchant ${i}: a state that ${problem}`;
  }
  const fileRules = instance.rules.length - instance.actionRuleCount;
  if (!Array.isArray(s.counts) || s.counts.length !== fileRules) return `needs the counts of the ${fileRules} rule(s) of the file`;
  if (!Array.isArray(s.next) || !s.next.every(isActionRuleState)) return "needs next: a list of {rule, calls}, each rule named";
  return undefined;
}

function isActionRuleState(e: unknown): e is ActionRuleState {
  const entry = e as ActionRuleState | null;
  return (
    typeof entry === "object" &&
    entry !== null &&
    typeof entry.rule?.name === "string" &&
    typeof entry.rule.then === "object" &&
    Number.isSafeInteger(entry.calls) &&
    entry.calls >= 0
  );
}
