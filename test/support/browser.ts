import { existsSync } from "node:fs";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import type { SandboxOptions } from "../../src/app/sandbox.js";
import { startTestServer, type TestServer } from "./server.js";
import { needsProgram, type SystemProgram } from "./system-program.js";

/**
 * The browser harness of the QA page's end-to-end tests (test/e2e): Debian's `chromium` package
 * driven by playwright-core through its executable path, because a browser download from the
 * internet does not work on these machines (.ci/run installs the package with apt when it is
 * missing). One browser per test file, a fresh context (cookies, storage, permissions) per test,
 * and every console error, uncaught page error or Content-Security-Policy violation fails the test
 * it happened in, so a page that breaks quietly does not pass.
 */

/**
 * How long a locator waits for the page to show something: a missing control fails with the
 * locator it waited for, well inside the test's time. A guard against hangs, not a figure asserted;
 * generous because the whole suite runs beside the browser on two shared cores.
 */
export const PAGE_GUARD_MS = 15_000;

/** A browser test's time limit: a page and a sandbox beside the rest of the suite (vitest's default is 20 s). */
export const E2E_TEST_MS = 60_000;

/** Where the browser is: CHROMIUM_PATH, or Debian's package. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Debian's chromium, as the suite looks for it. */
export const CHROMIUM: SystemProgram = { name: "Chromium", path: CHROMIUM_PATH, aptPackage: "chromium", envVar: "CHROMIUM_PATH" };

/** What the tests of one file use; `page` and `context` are new for every test. */
export interface BrowserHarness {
  browser(): Browser;
  context(): BrowserContext;
  page(): Page;
  /** How long launching the browser took, in milliseconds (printed once per file). */
  launchMs(): number;
  /**
   * Console errors the current test expects (a 401 the page is meant to get, the event stream's 404
   * after the session ended): an error whose text or URL matches is recorded but does not fail it.
   */
  allowConsoleErrors(pattern: RegExp): void;
  /**
   * A real sandbox on port 0 for this test (startTestServer: its clock frozen at T0, so the times
   * the page shows are exact). It closes after the test's page, never before: a page still talking
   * to a closed sandbox would log connection errors into the next test's verdict.
   */
  sandbox(options?: SandboxOptions): Promise<TestServer>;
  /** The problems seen so far in this test (console errors, page errors, CSP violations), allowed ones left out. */
  problems(): string[];
  /** Returns the problems seen so far and forgets them: for a test that provokes some on purpose. */
  takeProblems(): string[];
}

export interface BrowserOptions {
  viewport?: { width: number; height: number };
  /** Lets the page's copy buttons write the clipboard and the test read it back. */
  clipboard?: boolean;
}

/** Launches Debian's chromium (or the one at `executablePath`) headless, or says how to get it. */
export async function launchChromium(executablePath = CHROMIUM_PATH): Promise<Browser> {
  if (!existsSync(executablePath)) {
    throw new Error(
      `The browser tests need Chromium at ${executablePath}, and there is none: install it: apt-get install chromium, or set CHROMIUM_PATH to a Chromium or Chrome executable. (.ci/run installs it with apt when it is missing.)`,
    );
  }
  // --no-sandbox: CI containers run as root, where Chromium's own sandbox refuses to start.
  return chromium.launch({ executablePath, args: ["--no-sandbox"], headless: true });
}

/**
 * Registers the hooks of one test file: the browser starts before its first test and closes after
 * its last; each test gets a new context and page, and fails on any console error, page error or
 * CSP violation it did not declare with allowConsoleErrors.
 */
export function browserPerFile(options: BrowserOptions = {}): BrowserHarness {
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;
  let page: Page | undefined;
  let launchMs = 0;
  let problems: string[] = [];
  let allowed: RegExp[] = [];
  const sandboxes: TestServer[] = [];
  const present = needsProgram(CHROMIUM);

  beforeAll(async () => {
    if (!present) return;
    const started = performance.now();
    browser = await launchChromium();
    launchMs = Math.round(performance.now() - started);
    console.log(`chromium ${browser.version()} launched in ${launchMs} ms (${CHROMIUM_PATH})`);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  beforeEach(async () => {
    if (!present) return;
    if (!browser) throw new Error("browserPerFile: the browser did not start (see the beforeAll error)");
    problems = [];
    allowed = [];
    context = await browser.newContext({
      viewport: options.viewport ?? { width: 1280, height: 800 },
      // Fixed, so screenshots and session-clock texts do not depend on the machine.
      locale: "en-GB",
      timezoneId: "UTC",
      ...(options.clipboard ? { permissions: ["clipboard-read", "clipboard-write"] } : {}),
    });
    // A CSP violation is also a console error in Chromium; the event says which directive, and
    // catches one the console would not show (a report-only policy).
    await context.addInitScript(() => {
      document.addEventListener("securitypolicyviolation", (e) => {
        console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || "(inline)"} at ${e.sourceFile}:${e.lineNumber}`);
      });
    });
    context.setDefaultTimeout(PAGE_GUARD_MS);
    page = await context.newPage();
    const seen = page;
    seen.on("console", (message) => {
      if (message.type() !== "error") return;
      const where = message.location().url;
      record(`console error: ${message.text()}${where ? ` (${where})` : ""}`);
    });
    seen.on("pageerror", (error) => record(`page error: ${error.stack ?? error.message}`));
  });

  afterEach(async () => {
    if (!present) return;
    const seen = problems;
    await context?.close();
    context = undefined;
    page = undefined;
    await Promise.all(sandboxes.splice(0).map((t) => t.close()));
    if (seen.length > 0) {
      throw new Error(`The page reported ${seen.length} problem(s) during the test:\n${seen.join("\n")}`);
    }
  });

  function record(problem: string): void {
    if (allowed.some((pattern) => pattern.test(problem))) return;
    // Chromium asks for /favicon.ico by itself when a page names no icon, and the sandbox has none
    // (a 404 of the merchant API): the browser's own request, not something the page did.
    if (/status of 404 .*\(http:\/\/[^/]+\/favicon\.ico\)$/.test(problem)) return;
    problems.push(problem);
  }

  return {
    browser: () => required(browser, "browser"),
    context: () => required(context, "context"),
    page: () => required(page, "page"),
    launchMs: () => launchMs,
    allowConsoleErrors: (pattern) => {
      allowed.push(pattern);
    },
    sandbox: async (sandboxOptions = {}) => {
      const t = await startTestServer(sandboxOptions);
      sandboxes.push(t);
      return t;
    },
    problems: () => [...problems],
    takeProblems: () => problems.splice(0),
  };
}

function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`browserPerFile: the ${what} is used outside a test (it is made in beforeEach)`);
  return value;
}

/** The QA page of a sandbox, at a view (`#/sessions/ses_1`); without one, the page's home. */
export function qaPageUrl(sandboxUrl: string, hash = ""): string {
  return `${sandboxUrl}/__sandbox/ui/${hash}`;
}
