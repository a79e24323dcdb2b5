import type { Locator, Page } from "playwright-core";
import { expect } from "vitest";
import { PAGE_GUARD_MS } from "./browser.js";

/**
 * The QA page as its browser tests see it: every role and accessible name here is part of the
 * page's contract with its tests (issue 14), written once so that a renamed control breaks one place. Queries that poll (`eventually`) never sleep: they re-read the
 * page until it agrees or the guard runs out, and then say what they last saw.
 */

/** expect.poll with the page's guard: `await eventually(() => count(rows)).toBe(5)`. */
export function eventually<T>(read: () => T | Promise<T>, what?: string): ReturnType<typeof expect.poll<T>> {
  return expect.poll(read, { timeout: PAGE_GUARD_MS, interval: 50, message: what });
}

/** A `<section>` with a heading, by the heading's text. */
export function region(page: Page, name: string): Locator {
  return page.getByRole("region", { name, exact: true });
}

/** The visible text of everything the locator matches, now (no waiting). */
export async function textOf(locator: Locator): Promise<string> {
  return (await locator.allInnerTexts()).join("\n");
}

/** The page's status line(s): where each result and refusal is said. */
export function statusLine(page: Page): Locator {
  return page.getByRole("status");
}

/** The session page's id, from its location `#/sessions/<id>`, once the page is there. */
export async function sessionIdOf(page: Page): Promise<string> {
  await page.waitForURL(/#\/sessions\/[^/?#]+$/, { timeout: PAGE_GUARD_MS });
  return decodeURIComponent(/#\/sessions\/([^/?#]+)$/.exec(page.url())![1]!);
}

/** The session page's h1 ("Session <id>", the scenario name may sit beside it). */
export function sessionHeading(page: Page, id: string): Locator {
  return page.getByRole("heading", { level: 1, name: `Session ${id}` });
}

/** A read-only credentials field of the session page ("base_url", "api_key", …). */
export function credentialField(page: Page, label: string): Locator {
  return region(page, "Credentials").getByLabel(label, { exact: true });
}

export function journalTable(page: Page): Locator {
  return page.getByRole("table", { name: "Request journal", exact: true });
}

/** Every request row of the journal (each has id="row-<req id>"). */
export function journalRows(page: Page): Locator {
  return journalTable(page).locator('tr[id^="row-"]');
}

/** The journal row of one request. */
export function journalRow(page: Page, requestId: string): Locator {
  return journalTable(page).locator(`tr[id="row-${requestId}"]`);
}

/** The journal's columns, as its header names them. */
export type JournalColumn = "Session time" | "Method" | "Path" | "Status" | "Code" | "Rule" | "Token";

/** The text of a row's cell in a column, found by the column's header (no waiting). */
export async function cellText(page: Page, row: Locator, column: JournalColumn): Promise<string> {
  const headers = (await journalTable(page).locator("thead th").allInnerTexts()).map((h) => h.trim());
  const index = headers.indexOf(column);
  if (index < 0) return `(the journal has no column "${column}"; its headers are ${JSON.stringify(headers)})`;
  const cells = await row.locator(":scope > th, :scope > td").allInnerTexts();
  return (cells[index] ?? "").trim();
}

/** The session page's timeline picture. */
export function timeline(page: Page): Locator {
  return region(page, "Timeline").getByRole("group", { name: /^Timeline/ });
}

/** Whether the element holds the focus or is marked as the chosen one (aria-current, a highlight class). */
export function isFocusedOrHighlighted(locator: Locator): Promise<boolean> {
  return locator.evaluate(
    (el) => el.contains(document.activeElement) || el.hasAttribute("aria-current") || /highlight/i.test(el.getAttribute("class") ?? ""),
  );
}

/** How the contract classes a journal entry's status: refused 4xx, error 5xx (or dropped: 0), ok the rest. */
export function outcomeOf(status: number): "ok" | "refused" | "error" {
  if (status >= 500 || status === 0) return "error";
  if (status >= 400) return "refused";
  return "ok";
}
