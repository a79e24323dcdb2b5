/**
 * Pure helpers for what the page shows: session-clock times, row outcomes, the .env block, clock
 * move labels. No DOM here, so the unit tests (test/unit/ui-*.test.ts) import this file directly.
 * Imports carry `.js` so both the page's bundler settings and the root tsconfig (NodeNext) resolve them.
 */
import type { JournalEntry, SessionMerchant } from "./types.js";

/** `HH:MM:SS` of an ISO instant, in UTC: the session clock is what tokens are judged by, not the viewer's zone. */
export function sessionTime(iso: string): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return "—";
  return new Date(ms).toISOString().slice(11, 19);
}

export type Outcome = "ok" | "refused" | "error";

/** refused: the sandbox said no (4xx); error: it failed or dropped the connection (5xx, status 0). */
export function outcomeOf(entry: Pick<JournalEntry, "status">): Outcome {
  if (entry.status === 0 || entry.status >= 500) return "error";
  if (entry.status >= 400) return "refused";
  return "ok";
}

/** What the Status cell says: the number, or "dropped" when the sandbox closed the connection unanswered. */
export function statusText(entry: Pick<JournalEntry, "status">): string {
  return entry.status === 0 ? "dropped" : String(entry.status);
}

/** The ready-to-paste `.env` block for one merchant of a session (the names the README's client examples read). */
export function envBlock(baseUrl: string, m: SessionMerchant): string {
  return [
    `MERCHANT_API_BASE_URL=${baseUrl}`,
    `MERCHANT_API_KEY=${m.api_key}`,
    `MERCHANT_API_SECRET=${m.api_secret}`,
    `MERCHANT_PAYMENT_TOKEN=${m.payment_token}`,
    `MERCHANT_LOGIN_EMAIL=${m.login.email}`,
    `MERCHANT_LOGIN_PASSWORD=${m.login.password}`,
  ].join("\n");
}

/** Shown instead of a secret until "Show secrets" is pressed; a fixed length, so it gives away no length. */
export const MASK = "••••••••";

/** The .env block with its secret values masked (key and addresses stay readable: they are not secrets). */
export function maskedEnvBlock(baseUrl: string, m: SessionMerchant): string {
  return envBlock(baseUrl, { ...m, api_secret: MASK, payment_token: MASK, login: { email: m.login.email, password: MASK } });
}

/** A signed clock move as the timeline labels it: "+61m", "+90s", "+2h", "-5m", "+1d". */
export function moveLabel(ms: number): string {
  const sign = ms < 0 ? "-" : "+";
  const abs = Math.abs(ms);
  const s = Math.round(abs / 1000);
  if (s % 60 !== 0 || s < 60) return `${sign}${s}s`;
  const m = s / 60;
  if (m % 1440 === 0) return `${sign}${m / 1440}d`;
  if (m % 60 === 0 && m >= 120) return `${sign}${m / 60}h`;
  return `${sign}${m}m`;
}
