import type { Faker } from "@faker-js/faker";
import type { RequestTrace } from "../core/context.js";
import { ClockRangeError } from "../core/clock.js";
import { parseDuration, parseSignedDuration } from "../core/duration.js";
import { DURATION_LIMITS } from "../core/duration-limits.js";
import { SandboxError, ScenarioFault, SimulatedFailure } from "../core/errors.js";
import type { SandboxRequest, SandboxResponse } from "../core/http-types.js";
import { presentedTokenId } from "../core/attribution.js";
import type { Merchant, MerchantRegistry } from "../core/merchants.js";
import { problemResponse, statusTitle } from "../core/problem.js";
import type { ShownUrl } from "../core/redact.js";
import type { TokenLedger } from "../core/token-ledger.js";
import type { ScenarioInstance } from "./instance.js";
import type { CompiledRule } from "./rules.js";
import type { ThenFile } from "./schema.js";
import type { NowActions } from "./session-actions.js";
import { renderString, renderValue, TemplateError, type TemplateValues } from "./template.js";
import { RenderBudget, RenderedTooLarge } from "../core/render-budget.js";

/** What a rule's actions may use: the merchants and tokens they change, template values, and a way to wait. */
export interface RuleContext {
  readonly merchants: MerchantRegistry;
  readonly ledger: TokenLedger;
  readonly faker: Faker;
  /** Resolves once `faker` has its English definitions, which templates may use (loaded on first need). */
  readonly fakerEnglish: () => Promise<void>;
  /** Waits (scenario delays); injectable so tests need not sleep. */
  readonly sleep: (ms: number) => Promise<void>;
}

/** The trace of a request whose scenario is a running instance, rules and all (the pipeline's). */
export interface ScenarioTrace extends RequestTrace {
  scenario: ScenarioInstance;
}

/**
 * Whether any rule of the request's scenario may fire for it: what runRules tests first, so the
 * pipeline skips the call (and its promise) for the many requests no rule can touch.
 */
export function rulesMayFire(trace: ScenarioTrace, attributed: Merchant | undefined): boolean {
  if (trace.scenario.rules.length === 0 || trace.endpoint === "control") return false;
  // A request no merchant can be read from (a mistyped key, no credentials) is not the scripted
  // merchant's, and must not use up its rules; only the JWKS, which never carries credentials,
  // runs the primary scenario's rules.
  return attributed !== undefined || trace.endpoint === "jwks";
}

/**
 * Running a scenario's rules for one request, before the endpoint. The request is the scenario's
 * when its credentials belong to one of the scenario's merchants. Every rule that matches fires,
 * in file order: all their state changes apply (clock, merchant, tokens, keys, state), their delays
 * add up, and the first `respond` or `drop_connection` among them answers instead of the endpoint.
 * A `set_state` takes effect once all rules were matched, so rules never chain within one request,
 * and before any action is applied.
 *
 * Returns the scripted answer, or undefined to let the endpoint answer (with `trace.effects`).
 */
export async function runRules(
  request: SandboxRequest,
  ctx: RuleContext,
  trace: ScenarioTrace,
  attributed: Merchant | undefined,
): Promise<SandboxResponse | undefined> {
  if (!rulesMayFire(trace, attributed)) return undefined;
  const scenario = trace.scenario;
  // A body may be a template that names any faker generator: the English definitions are in before
  // the rules are matched, so that the first templated answer after a start waits here, not after
  // its match.
  if (scenario.rules.some(hasBody)) await ctx.fakerEnglish();
  const facts = {
    endpoint: trace.endpoint,
    method: request.method,
    path: request.path,
    merchantId: attributed?.id,
    state: scenario.state,
    elapsedMs: scenario.elapsedMs(),
  };
  const fired = scenario.rules.filter((rule) => rule.matches(facts));
  // A session's `next` rules leave once spent (this request still runs the ones that fired).
  if (scenario.actionRuleCount > 0) scenario.dropSpentActionRules();
  if (fired.length === 0) return undefined;
  trace.rules = fired.map((r) => `${scenario.name}/${r.name}`);
  // The state changes in the same turn as the match (the last set_state of the fired rules): a
  // request that comes while this one's actions are awaited (a key being made) sees the new state
  // and cannot match the old one again.
  for (const rule of fired) if (rule.rule.then.set_state !== undefined) scenario.state = rule.rule.then.set_state;

  let answer: SandboxResponse | undefined;
  let delayMs = 0;
  for (const rule of fired) {
    const then = rule.rule.then;
    try {
      await applyStateChanges(then, rule, scenario, ctx, trace, request, attributed);
      if (then.delay !== undefined) delayMs += parseDuration(then.delay);
      if (answer) continue;
      if (then.drop_connection) answer = { status: 0, headers: {}, body: "", dropConnection: true };
      else if (then.respond) answer = respond(then.respond, rule, scenario, facts.state, ctx, request, attributed, trace.shown);
    } catch (e) {
      if (e instanceof SandboxError) throw e;
      // Anything else a rule's actions throw is still this request's failure only, and the
      // answer names the rule, so the scenario's author knows where to look.
      throw new ScenarioFault(
        `Scenario '${scenario.name}', rule '${rule.name}' could not be applied (${e instanceof Error ? e.message : String(e)}). Check the rule in ${scenario.source}.`,
      );
    }
  }
  // Each delay is at most the limit (the schema); several rules' together wait the limit too.
  if (delayMs > 0) await ctx.sleep(Math.min(delayMs, DURATION_LIMITS.delay.ms));
  return answer;
}

/** A rule that answers with a body, which may be a template. */
function hasBody(rule: CompiledRule): boolean {
  return rule.rule.then.respond?.body !== undefined;
}

async function applyStateChanges(
  then: ThenFile,
  rule: CompiledRule,
  scenario: ScenarioInstance,
  ctx: RuleContext,
  trace: RequestTrace,
  request: SandboxRequest,
  attributed: Merchant | undefined,
): Promise<void> {
  if (then.advance_clock !== undefined) {
    try {
      scenario.clock.advance(parseSignedDuration(then.advance_clock));
    } catch (e) {
      if (!(e instanceof ClockRangeError)) throw e;
      throw new ScenarioFault(
        `Scenario '${scenario.name}', rule '${rule.name}': advance_clock ${then.advance_clock}: ${e.message}. Use a smaller advance_clock in ${scenario.source}.`,
      );
    }
  }
  const now = scenario.clock.nowSeconds();
  const secret = then.rotate_secret;
  changeMerchants(then, targetMerchants(rule, scenario, attributed), ctx, now, secret === undefined ? undefined : () => secret);
  if (then.revoke_token === "presented" || then.expire_token === "presented") {
    const jti = presentedTokenOf(request, ctx, scenario);
    if (jti && then.revoke_token === "presented") ctx.ledger.revoke(jti);
    if (jti && then.expire_token === "presented") ctx.ledger.expire(jti, now);
  }
  if (then.reject_credentials) trace.effects.rejectCredentials = true;
  if (then.issue_token) {
    trace.effects.issue = {
      ...(then.issue_token.expired && { expired: true }),
      ...(then.issue_token.not_before !== undefined && { notBeforeSeconds: Math.round(parseDuration(then.issue_token.not_before) / 1000) }),
    };
  }
  await changeScenario(then, scenario);
}

type MerchantChanges = Pick<
  ThenFile,
  "disable_merchant" | "enable_merchant" | "expire_payment_token" | "revoke_payment_token" | "revoke_token" | "expire_token"
>;

/** The actions on merchants, in the order a rule applies them; `newSecret` gives each its rotated api_secret. */
function changeMerchants(
  then: MerchantChanges,
  targets: readonly Merchant[],
  ctx: Pick<RuleContext, "merchants" | "ledger">,
  now: number,
  newSecret: (() => string) | undefined,
): void {
  for (const merchant of targets) {
    if (then.disable_merchant) merchant.disabled = true;
    if (then.enable_merchant) merchant.disabled = false;
    if (newSecret) ctx.merchants.setApiSecret(merchant, newSecret());
    if (then.expire_payment_token) merchant.paymentTokenState = "expired";
    if (then.revoke_payment_token) merchant.paymentTokenState = "revoked";
    if (then.revoke_token === "all") ctx.ledger.revokeAllOf(merchant.id, now);
    if (then.expire_token === "all") ctx.ledger.expireAllOf(merchant.id, now);
  }
}

/** The actions on the scenario itself: its signing key and its login. */
async function changeScenario(then: Pick<ThenFile, "rotate_signing_key" | "login_gone">, scenario: ScenarioInstance): Promise<void> {
  if (then.rotate_signing_key !== undefined) {
    await scenario.keys.rotate(then.rotate_signing_key !== true && then.rotate_signing_key.keep_old);
  }
  if (then.login_gone) scenario.settings.loginMode = "gone";
}

/**
 * A session's `now` actions (POST /__sandbox/sessions/{id}/actions): a rule's state changes, once,
 * on `targets`, in the order a rule applies them, then `set_state` at once (no other rule is
 * waiting to match). The caller has validated everything, the clock's range included, so nothing
 * here refuses halfway. `newSecret` makes a random api_secret for `rotate_secret: true`.
 */
export async function applyActionsNow(
  now: NowActions,
  scenario: ScenarioInstance,
  ctx: Pick<RuleContext, "merchants" | "ledger">,
  targets: readonly Merchant[],
  newSecret: () => string,
): Promise<void> {
  if (now.advance_clock !== undefined) scenario.clock.advance(parseSignedDuration(now.advance_clock));
  const secret = now.rotate_secret;
  const secretOf = secret === undefined ? undefined : secret === true ? newSecret : () => secret;
  changeMerchants(now, targets, ctx, scenario.clock.nowSeconds(), secretOf);
  await changeScenario(now, scenario);
  if (now.set_state !== undefined) scenario.state = now.set_state;
}

/** The merchant the request came from; else the rule's merchant; else every merchant of the scenario. */
function targetMerchants(rule: CompiledRule, scenario: ScenarioInstance, attributed: Merchant | undefined): Merchant[] {
  if (attributed) return [attributed];
  const named = rule.rule.match?.merchant;
  if (named) return scenario.merchants.filter((m) => m.id === named);
  return scenario.merchants;
}

/** The jti of the bearer token on this request, if the sandbox issued it to this scenario's merchants. */
function presentedTokenOf(request: SandboxRequest, ctx: RuleContext, scenario: ScenarioInstance): string | undefined {
  const jti = presentedTokenId(request);
  const record = jti === undefined ? undefined : ctx.ledger.get(jti);
  return record && scenario.findMerchant(record.merchantId) ? jti : undefined;
}

function respond(
  spec: NonNullable<ThenFile["respond"]>,
  rule: CompiledRule,
  scenario: ScenarioInstance,
  /** The state the rules matched in (`{{scenario.state}}`), whatever set_state made it since. */
  matchedState: string,
  ctx: RuleContext,
  request: SandboxRequest,
  merchant: Merchant | undefined,
  shown: ShownUrl,
): SandboxResponse {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(spec.headers ?? {})) headers[name.toLowerCase()] = value;
  const retryAfter = spec.retry_after === undefined ? undefined : Math.ceil(parseDuration(spec.retry_after) / 1000);
  if (retryAfter !== undefined) headers["retry-after"] = String(retryAfter);

  if (spec.body === undefined && spec.status >= 400) {
    const retry = retryAfter === undefined ? "" : ` Retry after ${retryAfter} seconds, as the Retry-After header says.`;
    const description = `${statusTitle(spec.status)}: simulated by scenario '${scenario.name}', rule '${rule.name}'.${retry}`;
    return problemResponse(new SimulatedFailure(spec.status, description, headers), shown.path, ctx.merchants.secrets.view());
  }
  const values: TemplateValues = {
    // The redacted URL: a template echoes only what the log may show.
    request: { method: request.method, path: shown.path, query: shown.query },
    merchant: merchant && { id: merchant.id, api_key: merchant.apiKey },
    scenario: { name: scenario.name, state: matchedState },
    rule: { name: rule.name },
    now: new Date(scenario.clock.now()).toISOString(),
  };
  const budget = new RenderBudget();
  try {
    if (typeof spec.body === "string") {
      return {
        status: spec.status,
        headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store", ...headers },
        body: renderString(spec.body, values, ctx.faker, budget),
      };
    }
    return {
      status: spec.status,
      headers: { "content-type": "application/json", "cache-control": "no-store", ...headers },
      body: JSON.stringify(spec.body === undefined ? {} : renderValue(spec.body, values, ctx.faker, budget)),
    };
  } catch (e) {
    if (!(e instanceof TemplateError || e instanceof RenderedTooLarge)) throw e;
    throw new ScenarioFault(`Scenario '${scenario.name}', rule '${rule.name}': ${e.message}. Fix the response body in ${scenario.source}.`);
  }
}
