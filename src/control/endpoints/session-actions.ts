import { ClockRangeError } from "../../core/clock.js";
import { jsonResponse } from "../../core/context.js";
import { parseSignedDuration } from "../../core/duration.js";
import { InvalidRequest, SessionActionRulesFull } from "../../core/errors.js";
import type { Merchant } from "../../core/merchants.js";
import { echo } from "../../core/echo.js";
import { didYouMean } from "../../core/source/suggest.js";
import { applyActionsNow } from "../../scenarios/actions.js";
import type { CompiledRule } from "../../scenarios/rules.js";
import { controlBody } from "../body.js";
import { clockView } from "../clock-ops.js";
import type { ControlHandler } from "../context.js";
import { echoValue } from "../session-history.js";
import { newApiSecret, type Session } from "../sessions.js";
import { knownSession, unknownSession } from "./sessions.js";

/** How many `next` rules a session may hold at once (memory stays bounded). */
export const MAX_PENDING_ACTION_RULES = 100;
/**
 * How much a session's pending `next` rules may hold together, as JSON (their respond bodies
 * mostly): a shared store keeps every session's, so one client must not fill it.
 */
export const MAX_PENDING_ACTION_BYTES = 256 * 1024;
/** How many problems one refusal lists. */
const MAX_LISTED = 10;

/**
 * POST /__sandbox/sessions/{id}/actions ("break it now"): a scenario rule's actions on one session,
 * from a CI script or the dashboard. `now` applies state changes once, at once; `next` adds a rule
 * that answers the session's next N matching requests. Everything is checked before anything
 * changes, so a refused request changes nothing; only the session's own merchants are touched.
 */
export const applySessionActions: ControlHandler = async (request, ctx, trace, [id]) => {
  const session = knownSession(ctx, id!);
  const where = `/__sandbox/sessions/${id}/actions`;
  const body = controlBody(request, trace.body, `POST ${where}`, '{"now": {"revoke_token": "all"}}');
  // The schema and its explainer pull in zod: loaded on first use, not at start.
  const { validateSessionActions } = await import("../../scenarios/session-actions.js");
  const checked = validateSessionActions(body);
  if (!checked.ok) throw invalid(checked.problems);
  const actions = checked.value;
  const scenario = session.instance;
  const targets = actions.merchant === undefined ? scenario.merchants : [merchantOf(session, actions.merchant)];
  if (actions.now?.advance_clock !== undefined) {
    try {
      scenario.clock.assertCanMoveTo(scenario.clock.now() + parseSignedDuration(actions.now.advance_clock));
    } catch (e) {
      if (!(e instanceof ClockRangeError)) throw e;
      throw new InvalidRequest(
        "clock_out_of_range",
        `now.advance_clock would move the session's clock outside the dates tokens can carry: ${e.message}. Advance it by less; nothing was changed.`,
      );
    }
  }
  if (actions.next) assertRoomForRule(session, actions.next.then);

  // The rule is added in the same tick as the limit check, before anything awaits (a key rotation),
  // so concurrent calls cannot all pass the check and overfill the session.
  const before = scenario.clock.now();
  let added: CompiledRule | undefined;
  if (actions.next) {
    const { endpoint, times, then } = actions.next;
    const merchant = actions.merchant === undefined ? undefined : targets[0]!.id;
    added = scenario.addActionRule({ match: { ...(endpoint !== undefined && { endpoint }), ...(merchant && { merchant }), calls: { times } }, then });
  }
  if (actions.now) await applyActionsNow(actions.now, scenario, ctx, targets, newApiSecret);
  // A DELETE (or reap, or reset) during the rotation's await: the session is gone, and so is the
  // key made for it (ScenarioKeys.rotate); answering 200 would claim a change nobody can see.
  if (ctx.sessions.get(session.id) !== session) throw unknownSession(session.id);
  const view = (rule: CompiledRule) => ruleView(rule, scenario.name);
  const applied = actions.now ? Object.keys(actions.now) : [];
  ctx.sessions.actionsRan(session, applied, added && view(added).name);
  // The secrets' view after the actions: a rotate_secret's new value is one of them.
  const secrets = ctx.merchants.secrets.view();
  ctx.sessions.remember(session, ctx.journal.lastId(), before, {
    kind: "actions",
    merchants: targets.map((m) => m.id),
    ...(actions.now && { now: Object.fromEntries(Object.entries(actions.now).map(([k, v]) => [k, echoValue(v, secrets)])) }),
    ...(added && { next: { rule: view(added).name, endpoint: view(added).endpoint, times: view(added).times, actions: view(added).actions } }),
  });
  return jsonResponse(200, {
    session: session.id,
    merchants: targets.map((m) => m.id),
    applied,
    ...(added && { rule: view(added) }),
    pending: scenario.actionRules.map(view),
    state: scenario.state,
    clock: clockView(scenario.clock),
  });
};

/** Refuses a `next` rule the session has no room for: past the pending rules' count or their total size. */
function assertRoomForRule(session: Session, then: unknown): void {
  const scenario = session.instance;
  const reset = `reset the session (POST /__sandbox/sessions/${session.id}/reset)`;
  if (scenario.actionRuleCount >= MAX_PENDING_ACTION_RULES) {
    throw new SessionActionRulesFull(
      `Session ${session.id} already holds ${MAX_PENDING_ACTION_RULES} pending next rules; nothing was changed. Wait for them to be spent, or ${reset}.`,
    );
  }
  const held = scenario.actionRules.reduce((total, rule) => total + JSON.stringify(rule.rule.then).length, 0);
  const adding = JSON.stringify(then).length;
  if (held + adding > MAX_PENDING_ACTION_BYTES) {
    throw new SessionActionRulesFull(
      `Session ${session.id}'s pending next rules hold ${held} bytes, and this one's ${adding} would pass the ${MAX_PENDING_ACTION_BYTES} a session may hold; nothing was changed. Give it a smaller respond body, wait for the pending rules to be spent, or ${reset}.`,
    );
  }
}

/** A `next` rule as the answer shows it: its name as X-Sandbox-Rule and the journal give it, never a value (a secret) of its actions. */
function ruleView(rule: CompiledRule, scenario: string) {
  const match = rule.rule.match!;
  const times = match.calls!.times!;
  return {
    name: `${scenario}/${rule.name}`,
    endpoint: match.endpoint ?? "any",
    ...(match.merchant !== undefined && { merchant: match.merchant }),
    times,
    remaining: times - rule.callCount,
    actions: Object.keys(rule.rule.then),
  };
}

/** The session's merchant by its id (as the session shows it, `<id>.<session id>`) or the scenario's own id. */
function merchantOf(session: Session, named: string): Merchant {
  const merchants = session.instance.merchants;
  const found = merchants.find((m) => m.id === named || m.id === `${named}.${session.id}`);
  if (found) return found;
  const ids = merchants.map((m) => m.id);
  throw invalid([
    `merchant: '${echo(named, 64)}' is not a merchant of session ${session.id}${didYouMean(named, ids)} (its merchants: ${ids.join(", ")})`,
  ]);
}

function invalid(problems: string[]): InvalidRequest {
  const listed = problems.length <= MAX_LISTED ? problems : [...problems.slice(0, MAX_LISTED), `and ${problems.length - MAX_LISTED} more`];
  return new InvalidRequest(
    "session_action_invalid",
    `The session actions are not valid, so nothing was changed: ${listed.join("; ")}. They take a scenario rule's actions: "now" the state changes, "next" {"times", "endpoint", "then"}.`,
  );
}
