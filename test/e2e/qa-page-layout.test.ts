import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { browserPerFile, E2E_TEST_MS, qaPageUrl } from "../support/browser.js";
import {
  eventually,
  isFocusedOrHighlighted,
  journalRow,
  journalRows,
  journalTable,
  region,
  sessionHeading,
  sessionIdOf,
  timeline,
} from "../support/qa-page.js";
import { createSession, postJson, type TestServer } from "../support/server.js";
import { SessionClient } from "../support/session-client.js";

/**
 * The QA page's layout at a laptop's and a phone's width, its accessible names and its keyboard
 * use. The screenshots are written to test/e2e/screenshots/ to be looked at (gitignored); the
 * README's docs/qa-page.png is rewritten only with UPDATE_SCREENSHOTS=1, so a test run never
 * changes a tracked file.
 */

const SCENARIO = "token-expires-after-calls";
const SCREENSHOTS = fileURLToPath(new URL("./screenshots/", import.meta.url));
const README_SCREENSHOT = fileURLToPath(new URL("../../docs/qa-page.png", import.meta.url));

/**
 * A session with a story in its journal, opened on its page: a token, three calls, the scripted 401
 * and a naive retry with the refused token (a finding), then an hour later a new token and a call
 * (a second bar on the timeline). Seeds the README's picture as well as the layout checks.
 */
async function sessionPageWithRequests(t: TestServer, page: Page): Promise<string> {
  const session = await createSession(t, SCENARIO);
  const client = new SessionClient(session.base_url, session.merchant.api_key, session.merchant.api_secret);
  const token = await client.token();
  for (let i = 0; i < 5; i++) await client.paymentStatus(token);
  const moved = await t.call(`/__sandbox/sessions/${session.id}/clock`, postJson({ advance: "61m" }));
  expect(moved.status, moved.text).toBe(200);
  expect((await client.paymentStatus(await client.token())).status).toBe(200);
  await page.goto(qaPageUrl(t.url, `#/sessions/${session.id}`));
  await sessionHeading(page, session.id).waitFor();
  await eventually(() => journalRows(page).count()).toBe(8);
  return session.id;
}

/** Interactive roles: every element with one of these must have an accessible name. */
const CONTROL_ROLES = new Set([
  "button",
  "checkbox",
  "combobox",
  "link",
  "listbox",
  "menuitem",
  "radio",
  "searchbox",
  "slider",
  "spinbutton",
  "switch",
  "tab",
  "textbox",
]);

interface AxNode {
  ignored: boolean;
  role?: { value: string };
  name?: { value: string };
  backendDOMNodeId?: number;
}

/**
 * The controls of the page without an accessible name, as Chromium's accessibility tree (what a
 * screen reader gets) computes them; and how many controls it saw, so an empty page cannot pass.
 */
async function unnamedControls(page: Page): Promise<{ seen: number; unnamed: string[] }> {
  const cdp = await page.context().newCDPSession(page);
  try {
    const { nodes } = (await cdp.send("Accessibility.getFullAXTree")) as { nodes: AxNode[] };
    const controls = nodes.filter((n) => !n.ignored && CONTROL_ROLES.has(n.role?.value ?? ""));
    const unnamed: string[] = [];
    for (const n of controls) {
      if ((n.name?.value ?? "").trim() !== "") continue;
      const { outerHTML } = (await cdp.send("DOM.getOuterHTML", { backendNodeId: n.backendDOMNodeId! })) as { outerHTML: string };
      unnamed.push(`${n.role!.value}: ${outerHTML.slice(0, 200)}`);
    }
    return { seen: controls.length, unnamed };
  } finally {
    await cdp.detach();
  }
}

/** Native controls the accessibility tree might not class as controls: each needs a name too. */
async function unnamedNativeControls(page: Page): Promise<string[]> {
  const cdp = await page.context().newCDPSession(page);
  try {
    const { root } = (await cdp.send("DOM.getDocument", { depth: -1 })) as { root: { nodeId: number } };
    const { nodeIds } = (await cdp.send("DOM.querySelectorAll", { nodeId: root.nodeId, selector: "button, input, select, textarea" })) as {
      nodeIds: number[];
    };
    const unnamed: string[] = [];
    for (const nodeId of nodeIds) {
      const { nodes } = (await cdp.send("Accessibility.getPartialAXTree", { nodeId, fetchRelatives: false })) as { nodes: AxNode[] };
      const own = nodes[0];
      // Hidden ones (display: none, a closed details) are not reachable, so not judged.
      if (!own || own.ignored) continue;
      if ((own.name?.value ?? "").trim() !== "") continue;
      const { outerHTML } = (await cdp.send("DOM.getOuterHTML", { nodeId })) as { outerHTML: string };
      unnamed.push(outerHTML.slice(0, 200));
    }
    return unnamed;
  } finally {
    await cdp.detach();
  }
}

// One browser for the file; each test's page gets its own viewport.
const ui = browserPerFile();
const LAPTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

/** A sandbox, a page at 1280×800 (not opened yet) and a session of SCENARIO with a client of its merchant. */
async function laptopWithSession() {
  const t = await ui.sandbox();
  const page = ui.page();
  await page.setViewportSize(LAPTOP);
  const session = await createSession(t, SCENARIO);
  const client = new SessionClient(session.base_url, session.merchant.api_key, session.merchant.api_secret);
  return { t, page, session, client };
}

/** The journal table fits its box: no column is scrolled out of view. */
async function expectJournalFits(page: Page): Promise<void> {
  const box = await journalTable(page).evaluate((el) => ({ scroll: el.parentElement!.scrollWidth, width: el.parentElement!.clientWidth }));
  expect(box.scroll, `the journal is ${box.scroll}px wide in a ${box.width}px box`).toBeLessThanOrEqual(box.width);
}

describe("the QA page's layout at 1280×800 (headless Chromium)", { timeout: E2E_TEST_MS }, () => {
  it("session page after a few requests: screenshot; every control has an accessible name", async () => {
    const t = await ui.sandbox();
    const page = ui.page();
    await page.setViewportSize(LAPTOP);
    await sessionPageWithRequests(t, page);
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: `${SCREENSHOTS}session-1280x800.png`, fullPage: true });
    if (process.env.UPDATE_SCREENSHOTS === "1") await page.screenshot({ path: README_SCREENSHOT });

    const { seen, unnamed } = await unnamedControls(page);
    expect(unnamed, "controls without an accessible name").toEqual([]);
    expect(await unnamedNativeControls(page), "buttons, inputs, selects without an accessible name").toEqual([]);
    // The session page has at least its clock, break-it, mint and credentials controls.
    expect(seen).toBeGreaterThanOrEqual(20);
    // Every journal column on screen, the fired rule's row included: the table fits its box.
    await expectJournalFits(page);
  });

  it("timeline: its marks are buttons in a named group with one tab stop; the arrow keys move between them and Enter shows the row", async () => {
    const t = await ui.sandbox();
    const page = ui.page();
    await page.setViewportSize(LAPTOP);
    await sessionPageWithRequests(t, page);
    const marks = timeline(page).getByRole("button");
    await eventually(() => marks.count()).toBe(8);
    // One tab stop: the newest request's mark.
    const stops = await timeline(page)
      .locator('[data-request][tabindex="0"]')
      .evaluateAll((els) => els.map((e) => e.getAttribute("data-request")));
    expect(stops).toEqual(["req_8"]);
    await timeline(page).locator('[data-request="req_8"]').focus();
    await page.keyboard.press("ArrowLeft");
    await page.keyboard.press("ArrowLeft");
    expect(await page.evaluate(() => document.activeElement?.getAttribute("data-request"))).toBe("req_6");
    await page.keyboard.press("Home");
    expect(await page.evaluate(() => document.activeElement?.getAttribute("data-request"))).toBe("req_1");
    await page.keyboard.press("ArrowRight");
    await page.keyboard.press("Enter");
    await eventually(() => isFocusedOrHighlighted(journalRow(page, "req_2")), "row req_2 is focused or highlighted").toBe(true);
  });

  it("home page: every control has an accessible name; Tab reaches 'Create session from …' and Enter creates one", async () => {
    const t = await ui.sandbox();
    const page = ui.page();
    await page.setViewportSize(LAPTOP);
    await page.goto(qaPageUrl(t.url));
    const create = region(page, "Scenarios").getByRole("button", { name: /^Create session from / });
    await create.first().waitFor();
    // index.html's "Loading…" line is replaced by the page, not left above it.
    expect(await page.locator("#app").innerText()).not.toContain("Loading the merchant-sandbox QA page");
    expect(await unnamedNativeControls(page), "buttons, inputs, selects without an accessible name").toEqual([]);
    expect((await unnamedControls(page)).unnamed, "controls without an accessible name").toEqual([]);

    // Only the keyboard from here: Tab until a "Create session from …" button has the focus.
    const isCreateFocused = () => create.evaluateAll((buttons) => buttons.some((b) => b === document.activeElement));
    let presses = 0;
    while (!(await isCreateFocused())) {
      expect(presses++, "Tab presses before a 'Create session from …' button has the focus").toBeLessThan(100);
      await page.keyboard.press("Tab");
    }
    // The focused button's accessible name, as Chromium computes it: `- button "Create session from x"`.
    const focused = await page.locator(":focus").ariaSnapshot();
    const scenario = /^- button "Create session from (.+)"/.exec(focused.trim())?.[1];
    expect(scenario, `the focused element is ${focused}`).toBeDefined();
    await page.keyboard.press("Enter");
    const id = await sessionIdOf(page);
    await sessionHeading(page, id).waitFor();
    const created = await t.call(`/__sandbox/sessions/${id}`);
    expect(created.status, created.text).toBe(200);
    expect(created.json.scenario).toBe(scenario);
  });
});

describe("the QA page at 1280×800: what happened before it opened, and nothing off screen (headless Chromium)", { timeout: E2E_TEST_MS }, () => {
  it("the timeline marks the clock jump, the actions and the reset made before the page was opened, each with what it was", async () => {
    const { t, page, session, client } = await laptopWithSession();
    expect((await client.paymentStatus(await client.token())).status).toBe(200);
    const base = `/__sandbox/sessions/${session.id}`;
    expect((await t.call(`${base}/clock`, postJson({ advance: "61m" }))).status).toBe(200);
    expect((await t.call(`${base}/actions`, postJson({ now: { expire_token: "all" } }))).status).toBe(200);
    expect((await t.call(`${base}/reset`, postJson({}))).status).toBe(200);
    expect((await client.paymentStatus(await client.token())).status).toBe(200);
    // Opened only now: no event of those three reaches it live.
    await page.goto(qaPageUrl(t.url, `#/sessions/${session.id}`));
    await sessionHeading(page, session.id).waitFor();
    await eventually(() => journalRows(page).count()).toBe(4);
    const titles = () => timeline(page).locator(".marker > title").allTextContents();
    // Left to right on the session clock: the reset took it back to 00:00.
    await eventually(titles).toEqual([
      "Clock moved at 00:00:00: reset",
      "Clock moved at 01:01:00: +61m",
      "Actions ran at 01:01:00: expire_token: all",
    ]);
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: `${SCREENSHOTS}session-history-1280x800.png` });
  });

  it("every column of the sessions table is on screen, with no horizontal scroll", async () => {
    const t = await ui.sandbox();
    const page = ui.page();
    await page.setViewportSize(LAPTOP);
    for (const scenario of [SCENARIO, "token-endpoint-outage", "default"]) await createSession(t, scenario);
    await page.goto(qaPageUrl(t.url));
    const table = region(page, "Sessions").getByRole("table", { name: "Sessions" });
    await eventually(() => table.locator("tbody tr").count()).toBe(3);
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: `${SCREENSHOTS}home-1280x800.png` });
    const fits = await table.evaluate((el) => {
      const box = el.parentElement!;
      const cells = [...el.querySelectorAll("th, td")].map((c) => c.getBoundingClientRect().right);
      return { boxScroll: box.scrollWidth, boxWidth: box.clientWidth, right: Math.max(...cells), page: document.documentElement.scrollWidth };
    });
    expect(fits.boxScroll, `the table is ${fits.boxScroll}px wide in a ${fits.boxWidth}px box`).toBeLessThanOrEqual(fits.boxWidth);
    expect(fits.right).toBeLessThanOrEqual(1280);
    expect(fits.page).toBeLessThanOrEqual(1280);
  });

  it("a long path in the journal stays on one line, cut with an ellipsis, the whole path in its title", async () => {
    const { t, page, session, client } = await laptopWithSession();
    const token = await client.token();
    const long = "/api/v2/payment/orders/ord_2026_000123/items/item_000456/refunds/ref_000789/attachments/receipt-final-v2";
    const r = await fetch(`${session.base_url}${long}`, { headers: { authorization: `Bearer ${token}` } });
    // Under the payment group's prefix: an answer of the protected endpoint, as any path there.
    expect(r.status).toBe(200);
    await page.goto(qaPageUrl(t.url, `#/sessions/${session.id}`));
    await sessionHeading(page, session.id).waitFor();
    await eventually(() => journalRows(page).count()).toBe(2);
    const cell = journalRow(page, "req_2").locator("td.path");
    const shown = await cell.evaluate((el) => {
      const range = document.createRange();
      range.selectNodeContents(el);
      const tops = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top)));
      return { lines: tops.size, title: el.getAttribute("title"), cut: el.scrollWidth > el.clientWidth };
    });
    expect(shown).toEqual({ lines: 1, title: long, cut: true });
    // And the journal still fits its box: no column scrolled out of view.
    await expectJournalFits(page);
  });
});

describe("the QA page's layout at 390×844, a phone (headless Chromium)", { timeout: E2E_TEST_MS }, () => {
  it("session page after a few requests: screenshot; no horizontal page scroll; every control has an accessible name", async () => {
    const t = await ui.sandbox();
    const page = ui.page();
    await page.setViewportSize(PHONE);
    await sessionPageWithRequests(t, page);
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: `${SCREENSHOTS}session-390x844.png`, fullPage: true });

    // The page is one column; wide tables scroll inside their own box, not the page.
    const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, body: document.body.scrollWidth }));
    expect(widths.scroll, `the page is ${widths.scroll}px wide at 390px`).toBeLessThanOrEqual(390);
    expect(widths.body).toBeLessThanOrEqual(390);
    expect((await unnamedControls(page)).unnamed, "controls without an accessible name").toEqual([]);
    expect(await unnamedNativeControls(page), "buttons, inputs, selects without an accessible name").toEqual([]);
  });

  it("home page: no horizontal page scroll", async () => {
    const t = await ui.sandbox();
    const page = ui.page();
    await page.setViewportSize(PHONE);
    await page.goto(qaPageUrl(t.url));
    await region(page, "Scenarios")
      .getByRole("button", { name: /^Create session from / })
      .first()
      .waitFor();
    await page.screenshot({ path: `${SCREENSHOTS}home-390x844.png`, fullPage: true });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  });
});
