import { describe, expect, it } from "vitest";
import { browserPerFile, E2E_TEST_MS, qaPageUrl } from "../support/browser.js";
import { eventually, region, statusLine, textOf } from "../support/qa-page.js";
import { postJson } from "../support/server.js";

/**
 * A sandbox started with an admin token: the QA page asks for it, says the control plane's refusal
 * of a wrong one, and with the right one works; the token stays in this tab's sessionStorage, never
 * in localStorage (it would outlive the tab) and never in a URL (it would land in logs and history).
 */

const ADMIN_TOKEN = "qa-page-admin-token-5f1c";
const WRONG = "The admin token is wrong. Send the token the sandbox was started with (--admin-token / MERCHANT_SANDBOX_ADMIN_TOKEN).";

describe("the QA page with --admin-token (headless Chromium)", { timeout: E2E_TEST_MS }, () => {
  const ui = browserPerFile();

  it("asks for the token, shows the refusal of a wrong one, lists sessions with the right one, keeps it for the tab only", async () => {
    const t = await ui.sandbox({ adminToken: ADMIN_TOKEN });
    const created = await t.call("/__sandbox/sessions", postJson({ scenario: "default" }, { "x-admin-token": ADMIN_TOKEN }));
    expect(created.status, created.text).toBe(201);
    const sessionId = created.json.id as string;

    const page = ui.page();
    // Every call before the token and with the wrong one is a 401 the page is meant to get.
    ui.allowConsoleErrors(/status of 401/);
    const urls: string[] = [];
    page.on("request", (r) => urls.push(r.url()));
    await page.goto(qaPageUrl(t.url));

    const form = page.getByRole("form", { name: "Admin token", exact: true });
    const input = form.getByLabel("Admin token", { exact: true });
    await input.waitFor();
    expect(await input.getAttribute("type")).toBe("password");

    // A wrong token: the control plane's refusal is said, and the form stays.
    await input.fill("not-the-admin-token");
    await form.getByRole("button", { name: "Use token", exact: true }).click();
    await eventually(() => textOf(statusLine(page))).toContain(WRONG);
    await input.waitFor();

    // The right one: the sessions are listed.
    await input.fill(ADMIN_TOKEN);
    await form.getByRole("button", { name: "Use token", exact: true }).click();
    const sessions = region(page, "Sessions").getByRole("table", { name: "Sessions", exact: true });
    await sessions.getByRole("link", { name: sessionId, exact: true }).waitFor();
    await form.waitFor({ state: "detached" });
    await page.getByRole("button", { name: "Forget admin token", exact: true }).waitFor();

    // Kept for this tab: in sessionStorage, in no localStorage, in no URL the page asked for.
    const storage = await page.evaluate(() => ({
      session: Object.values(sessionStorage),
      local: Object.entries(localStorage).flat(),
    }));
    expect(storage.session).toContain(ADMIN_TOKEN);
    expect(storage.local.filter((v) => v.includes(ADMIN_TOKEN))).toEqual([]);
    expect(page.url()).not.toContain(ADMIN_TOKEN);
    expect(urls.filter((u) => u.includes(ADMIN_TOKEN))).toEqual([]);
    expect(urls.some((u) => u.includes("/__sandbox/sessions"))).toBe(true);

    // A reload of the tab keeps it; a new tab asks again.
    await page.reload();
    await sessions.getByRole("link", { name: sessionId, exact: true }).waitFor();
    const other = await ui.context().newPage();
    const otherErrors: string[] = [];
    other.on("console", (m) => (m.type() === "error" && !/status of 401/.test(m.text()) ? otherErrors.push(m.text()) : undefined));
    other.on("pageerror", (e) => otherErrors.push(e.message));
    await other.goto(qaPageUrl(t.url));
    await other.getByRole("form", { name: "Admin token", exact: true }).getByLabel("Admin token", { exact: true }).waitFor();
    await other.close();
    expect(otherErrors, "console and page errors in the new tab").toEqual([]);

    // Forgetting it empties the tab's storage.
    await page.getByRole("button", { name: "Forget admin token", exact: true }).click();
    await eventually(() => page.evaluate(() => Object.values(sessionStorage))).not.toContain(ADMIN_TOKEN);
    await page.getByRole("button", { name: "Forget admin token", exact: true }).waitFor({ state: "detached" });
  });
});
