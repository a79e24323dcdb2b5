import { describe, expect, it } from "vitest";
import { browserPerFile, E2E_TEST_MS, launchChromium, qaPageUrl } from "../support/browser.js";
import { eventually } from "../support/qa-page.js";

/**
 * The browser harness itself (test/support/browser.ts): Debian's chromium starts from its
 * executable path, the QA page's files load under the page's Content-Security-Policy, and what the
 * harness must catch (a CSP violation, a console error, an uncaught error) it does catch.
 */
describe("the browser harness (headless Chromium)", { timeout: E2E_TEST_MS }, () => {
  const ui = browserPerFile();

  it("GET / lands on the QA page, whose script runs under its CSP without a console error", async () => {
    const t = await ui.sandbox();
    const page = ui.page();
    const answer = await page.goto(`${t.url}/`);
    expect(page.url()).toMatch(new RegExp(`^${t.url}/__sandbox/ui/(#/?)?$`));
    expect(answer?.status()).toBe(200);
    expect(answer?.headers()["content-security-policy"]).toContain("script-src 'self'");
    // The bundle ran: the page's <main> is rendered into index.html's #app.
    await page.locator("#app main").first().waitFor();
    expect(ui.problems()).toEqual([]);
  });

  it("catches a CSP violation, a console error and an uncaught page error", async () => {
    const t = await ui.sandbox();
    const page = ui.page();
    await page.goto(qaPageUrl(t.url));
    await page.evaluate(() => {
      const inline = document.createElement("script");
      inline.textContent = "window.inlineRan = true";
      document.body.append(inline);
      console.error("a console error");
      setTimeout(() => {
        throw new Error("an uncaught error");
      });
    });
    await eventually(() => ui.problems().length).toBeGreaterThanOrEqual(3);
    const seen = ui.takeProblems().join("\n");
    expect(seen).toContain("CSP violation: script-src");
    expect(seen).toContain("console error: a console error");
    expect(seen).toContain("page error: Error: an uncaught error");
    expect(await page.evaluate(() => "inlineRan" in window)).toBe(false);
  });

  it("an allowed console error does not count", async () => {
    const t = await ui.sandbox();
    const page = ui.page();
    await page.goto(qaPageUrl(t.url));
    ui.allowConsoleErrors(/expected by the test/);
    await page.evaluate(() => console.error("expected by the test"));
    // The page's own fetch of a missing file: a console error the test has not allowed.
    await page.evaluate(() => fetch("/__sandbox/ui/missing.js"));
    await eventually(() => ui.problems().length).toBe(1);
    expect(ui.takeProblems()).toEqual([expect.stringMatching(/^console error: Failed to load resource: .*status of 404 .*missing\.js\)$/)]);
  });

  it("a missing browser says how to get one", async () => {
    await expect(launchChromium("/nonexistent/chromium")).rejects.toThrow(
      "The browser tests need Chromium at /nonexistent/chromium, and there is none: install it: apt-get install chromium, or set CHROMIUM_PATH",
    );
  });
});
