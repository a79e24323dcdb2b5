/**
 * The "break it now" catalogue: each choice of the form, the body it sends to
 * POST /__sandbox/sessions/{id}/actions, and what the status line says once it ran. `now` actions
 * change the session's state at once; `next` ones add a rule for the session's next N calls
 * (src/scenarios/session-actions.ts checks both, as it checks a scenario rule's `then`).
 */

/** The extra inputs a choice needs; the form shows only those. */
export interface BreakInputs {
  times: string;
  retryAfter: string;
  delay: string;
  endpoint: string;
  keepOldKey: boolean;
}

export type BreakField = "times" | "retryAfter" | "delay" | "endpoint" | "keepOldKey";

export interface BreakAction {
  /** The option's value (tests select it by this or by its label). */
  value: string;
  label: string;
  fields: readonly BreakField[];
  body: (inputs: BreakInputs) => { now?: Record<string, unknown>; next?: Record<string, unknown> };
  /** What ran, after the session's id: "Ran revoke_tokens on ses_…: …". */
  says: (inputs: BreakInputs) => string;
}

/** The endpoints a delay may be limited to ("any" sends none: every call). */
export const DELAY_ENDPOINTS = ["any", "token", "payment", "cashout", "payment-init", "login"] as const;

const times = (i: BreakInputs) => Number(i.times);
const calls = (n: number, what: string) => (n === 1 ? `The next ${what}` : `The next ${n} ${what}s`);
/** A bare number is seconds, as the control plane reads it. */
const duration = (text: string) => (/^\d+(\.\d+)?$/.test(text.trim()) ? Number(text) : text.trim());

export const BREAK_ACTIONS: readonly BreakAction[] = [
  {
    value: "expire_tokens",
    label: "Expire current tokens",
    fields: [],
    body: () => ({ now: { expire_token: "all" } }),
    says: () => "the access tokens it holds now are refused as expired",
  },
  {
    value: "revoke_tokens",
    label: "Revoke current tokens",
    fields: [],
    body: () => ({ now: { revoke_token: "all" } }),
    says: () => "the access tokens it holds now are refused as revoked",
  },
  {
    value: "rotate_signing_key",
    label: "Rotate signing key",
    fields: ["keepOldKey"],
    body: (i) => ({ now: { rotate_signing_key: i.keepOldKey ? { keep_old: true } : true } }),
    says: (i) =>
      i.keepOldKey
        ? "a new signing key; tokens signed with the old one still verify"
        : "a new signing key; tokens signed with the old one are refused (unknown kid)",
  },
  {
    value: "disable_merchant",
    label: "Disable merchant",
    fields: [],
    body: () => ({ now: { disable_merchant: true } }),
    says: () => "the merchant is disabled until enabled again",
  },
  {
    value: "enable_merchant",
    label: "Enable merchant",
    fields: [],
    body: () => ({ now: { enable_merchant: true } }),
    says: () => "the merchant is enabled",
  },
  {
    value: "rotate_secret",
    label: "Rotate secret",
    fields: [],
    body: () => ({ now: { rotate_secret: true } }),
    // The answer never echoes the new secret; the session's own answer (GET /__sandbox/sessions/{id}) has it.
    says: () => "a new api_secret, the old one is refused from now on (reload the page to see the new one in Credentials)",
  },
  {
    value: "expire_payment_token",
    label: "Expire payment token",
    fields: [],
    body: () => ({ now: { expire_payment_token: true } }),
    says: () => "the merchant's payment token is refused as expired",
  },
  {
    value: "revoke_payment_token",
    label: "Revoke payment token",
    fields: [],
    body: () => ({ now: { revoke_payment_token: true } }),
    says: () => "the merchant's payment token is refused as revoked",
  },
  {
    value: "login_gone",
    label: "Retire the login (410)",
    fields: [],
    body: () => ({ now: { login_gone: true } }),
    says: () => "/api/login_check answers 410 Gone from now on",
  },
  {
    value: "token_503",
    label: "503 on next token exchanges",
    fields: ["times", "retryAfter"],
    body: (i) => ({
      next: {
        endpoint: "token",
        times: times(i),
        then: { respond: { status: 503, ...(i.retryAfter.trim() && { retry_after: duration(i.retryAfter) }) } },
      },
    }),
    says: (i) =>
      `${calls(times(i), "token exchange")} answer${times(i) === 1 ? "s" : ""} 503${i.retryAfter.trim() ? ` with Retry-After ${i.retryAfter.trim()} s` : ""}`,
  },
  {
    value: "delay_calls",
    label: "Delay next calls",
    fields: ["times", "delay", "endpoint"],
    body: (i) => ({
      next: { ...(i.endpoint !== "any" && { endpoint: i.endpoint }), times: times(i), then: { delay: duration(i.delay) } },
    }),
    says: (i) =>
      `${calls(times(i), i.endpoint === "any" ? "call" : `${i.endpoint} call`)} wait${times(i) === 1 ? "s" : ""} ${i.delay.trim()} before answering`,
  },
];

export const DEFAULT_INPUTS: BreakInputs = { times: "3", retryAfter: "30", delay: "5s", endpoint: "any", keepOldKey: false };

/** The status line after a run: `now` actions say what changed, `next` ones what the next calls will get. */
export function ranMessage(action: BreakAction, inputs: BreakInputs, session: string, merchant?: string): string {
  const where = merchant ? `${session} (merchant ${merchant})` : session;
  const what = action.says(inputs);
  return action.fields.includes("times") ? `${what}, on ${where}` : `Ran ${action.value} on ${where}: ${what}`;
}
