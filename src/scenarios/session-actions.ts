import { z } from "zod";
import { allowedKeysIn } from "../core/source/allowed-keys.js";
import { echo } from "../core/echo.js";
import { type Explained, pathText } from "../core/source/data-problems.js";
import { issueExplainer, withoutConsequences } from "../core/source/explain-issues.js";
import { DEPTH_MESSAGE, tooDeepPath } from "../core/source/source-limits.js";
import { templateProblems } from "./cross-checks.js";
import { matchSchema, ROTATED_SECRET_LIMITS, rotatedSecret, thenFields, thenSchema } from "./schema.js";

/**
 * The body of POST /__sandbox/sessions/{id}/actions ("break it now"), checked with the scenario
 * file's own schemas (schema.ts), so an action means and is validated the same in a file and here:
 * `now` runs state-changing actions once, at once; `next` adds a rule that answers the session's
 * next N matching requests, then is spent. Problems are worded as the scenario loader words them:
 * the allowed keys, and the nearest one.
 */

/** The actions that act on one request (its answer, its credentials, the token it gets): only under `next.then`. */
export const PER_REQUEST_ACTIONS = ["respond", "delay", "drop_connection", "reject_credentials", "issue_token"] as const;

/** How many calls a `next` rule may be given. */
export const MAX_NEXT_TIMES = 1000;

const { respond: _r, delay: _d, drop_connection: _dc, reject_credentials: _rc, issue_token: _it, ...stateChanging } = thenFields;

const nowSchema = z
  .strictObject({
    ...stateChanging,
    // No request is at hand: "presented" has no token to act on.
    revoke_token: z.literal("all").optional().describe("Revoke every access token the merchant holds"),
    expire_token: z.literal("all").optional().describe("Expire every access token the merchant holds"),
    rotate_secret: z
      .union([z.literal(true), rotatedSecret("rotate_secret")])
      .optional()
      .describe(
        `true: a new random api_secret (GET /__sandbox/sessions/{id} shows it); or the new api_secret itself (${ROTATED_SECRET_LIMITS.minLength} to ${ROTATED_SECRET_LIMITS.maxLength} characters of ${ROTATED_SECRET_LIMITS.characters})`,
      ),
  })
  .refine((t) => Object.keys(t).length > 0, { message: "now needs at least one action" })
  .describe("State-changing actions of a scenario rule's then, applied once, now");

const nextSchema = z
  .strictObject({
    endpoint: matchSchema.shape.endpoint.describe("Only requests to this endpoint (or these); any when absent"),
    times: z.int().min(1).max(MAX_NEXT_TIMES).describe("How many of the next matching requests the rule answers; then it is spent"),
    then: thenSchema,
  })
  .describe("A rule for the session's next matching requests, before the scenario's own rules");

export const sessionActionsSchema = z
  .strictObject({
    merchant: z
      .string()
      .min(1)
      .optional()
      .describe("A merchant of the session (its id as the session shows it, or the scenario's id); all of its merchants when absent"),
    now: nowSchema.optional(),
    next: nextSchema.optional(),
  })
  .refine((b) => b.now !== undefined || b.next !== undefined, { message: 'needs "now", "next" or both' })
  .describe("Actions on one session, validated like a scenario rule's then");

export type SessionActions = z.infer<typeof sessionActionsSchema>;
export type NowActions = NonNullable<SessionActions["now"]>;

/** The request body as the OpenAPI document shows it (JSON Schema 2020-12, as OpenAPI 3.1 takes it). */
export function sessionActionsJsonSchema(): Record<string, unknown> {
  const { $schema: _s, ...schema } = z.toJSONSchema(sessionActionsSchema, { io: "input" }) as Record<string, unknown>;
  return schema;
}

const VALUE_NOUNS: Record<string, string> = {
  endpoint: "an endpoint",
  revoke_token: "a revoke_token target",
  expire_token: "an expire_token target",
};
// The body is a request's: what it quotes of it is echoed, so the answer redacts it (core/echo.ts).
const baseExplain = issueExplainer({ allowedKeysAt: (path) => allowedKeysIn(sessionActionsSchema, path), valueNouns: VALUE_NOUNS, quote: echo });

function explain(issue: z.core.$ZodIssue, data: unknown): Explained[] {
  const at = issue.path.map(String).join(".");
  if (issue.code === "unrecognized_keys" && at === "now") {
    const perRequest = issue.keys.filter((k) => (PER_REQUEST_ACTIONS as readonly string[]).includes(k));
    const others = issue.keys.filter((k) => !perRequest.includes(k));
    return [
      ...perRequest.map((key) => ({
        path: ["now"],
        key,
        message: `'${key}' acts on a request, and now has none: put it under next.then, e.g. {"next": {"times": 1, "then": {"${key}": …}}}`,
      })),
      ...(others.length ? baseExplain({ ...issue, keys: others }, data) : []),
    ];
  }
  if (issue.code === "invalid_value" && (at === "now.revoke_token" || at === "now.expire_token")) {
    const field = at.slice(4);
    return [
      {
        path: issue.path as PropertyKey[],
        message: `now takes only ${field}: all (there is no presented token without a request); for the token a request presents, use next.then.${field}: presented`,
      },
    ];
  }
  return baseExplain(issue, data);
}

/** The body checked: the actions, or every problem as `path: message`, in the body's order. */
export function validateSessionActions(data: unknown): { ok: true; value: SessionActions } | { ok: false; problems: string[] } {
  // Before the schema and the template check, which recurse into a response body.
  const deep = tooDeepPath(data);
  if (deep) return { ok: false, problems: [`${pathText(deep)}: ${DEPTH_MESSAGE}`] };
  const result = sessionActionsSchema.safeParse(data);
  const explained = result.success ? [] : withoutConsequences(result.error.issues).flatMap((i) => explain(i, data));
  const body = (data as { next?: { then?: { respond?: { body?: unknown } } } }).next?.then?.respond?.body;
  if (body !== undefined) explained.push(...templateProblems(body, ["next", "then", "respond", "body"], (expression) => echo(expression, 80)));
  if (result.success && explained.length === 0) return { ok: true, value: result.data };
  return {
    ok: false,
    problems: explained.map((p) => {
      // The path names the body's own keys (an unknown one, a key inside respond.body): echoed too.
      const path = pathText((p.key === undefined ? p.path : [...p.path, p.key]).map((k) => (typeof k === "string" ? echo(k, 80) : k)));
      return path ? `${path}: ${p.message}` : p.message;
    }),
  };
}
