import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { browserPerFile, qaPageUrl } from "../support/browser.js";
import {
  cellText,
  credentialField,
  eventually,
  isFocusedOrHighlighted,
  journalRow,
  journalRows,
  outcomeOf,
  region,
  sessionHeading,
  sessionIdOf,
  statusLine,
  textOf,
  timeline,
} from "../support/qa-page.js";
import { createSession, type SessionAnswer, type TestServer } from "../support/server.js";
import { SessionClient } from "../support/session-client.js";

/**
 * The QA flow of issue 14, in headless Chromium against a real sandbox (its clock frozen at T0, so
 * every time the page shows is exact): a QA engineer opens the page, creates a session of
 * `token-expires-after-calls`, gives its credentials to the app under test (here a scripted client
 * in the test process, talking to the session's base_url over HTTP), watches the requests arrive
 * live, sees the scripted 401 and the finding the client earned, moves the clock, breaks the
 * session on purpose, mints a bad token and ends the session. The page is driven only by the roles
 * and names of its contract (test/support/qa-page.ts).
 */

const SCENARIO = "token-expires-after-calls";
const RULE = `${SCENARIO}/expire-on-fourth-call`;

interface Entry {
  id: string;
  status: number;
  code?: string;
  rules?: string[];
  tokenId?: string;
  endpoint: string;
}

/** The session's journal, as the control plane lists it (what the page must show). */
async function journalOf(t: TestServer, id: string): Promise<Entry[]> {
  const r = await t.call(`/__sandbox/requests?session=${id}`);
  expect(r.status, r.text).toBe(200);
  return r.json.requests as Entry[];
}

/** The rows the page shows, waited for until there are `n` of them. */
async function expectRows(page: Page, n: number): Promise<void> {
  await eventually(() => journalRows(page).count(), `the journal should show ${n} rows`).toBe(n);
}

/** One row as the page shows it: the outcome the contract gives it, its status and its code. */
async function rowView(page: Page, requestId: string) {
  const row = journalRow(page, requestId);
  const status = await cellText(page, row, "Status");
  return {
    outcome: await row.getAttribute("data-outcome"),
    // The number first; a refused row may add its text marker after it ("401 refused").
    status: /^\d{3}(?!\d)/.exec(status)?.[0] ?? status,
    code: await cellText(page, row, "Code"),
    rule: await cellText(page, row, "Rule"),
  };
}

describe("the QA page's flow (headless Chromium)", () => {
  const ui = browserPerFile({ clipboard: true });

  it("session of token-expires-after-calls: live journal, the 401 and its rule, the finding, clock, break it, mint, end", async () => {
    const began = performance.now();
    const t = await ui.sandbox();
    const page = ui.page();

    // Open the sandbox's address: GET / sends the browser to the page.
    await page.goto(`${t.url}/`);
    expect(page.url()).toMatch(new RegExp(`^${t.url}/__sandbox/ui/(#/?)?$`));

    // Scenarios: search, then create a session in one click.
    const scenarios = region(page, "Scenarios");
    await scenarios.getByRole("searchbox", { name: "Search scenarios", exact: true }).fill(SCENARIO);
    await scenarios.getByRole("button", { name: "Create session from default", exact: true }).waitFor({ state: "hidden" });
    await scenarios.getByRole("button", { name: `Create session from ${SCENARIO}`, exact: true }).click();
    const id = await sessionIdOf(page);
    await sessionHeading(page, id).waitFor();
    await eventually(() => textOf(statusLine(page))).toContain(`Session ${id} created`);
    // Marks this document: it must still be the same one at the end (every update came live, no reload).
    await page.evaluate(() => Object.assign(window, { qaFlowDocument: true }));

    // The control plane's view of the session: what the page must show.
    const detail = await t.call(`/__sandbox/sessions/${id}`);
    expect(detail.status, detail.text).toBe(200);
    const session = detail.json as SessionAnswer & { clock: { now: string; frozen: boolean } };

    // Credentials: read-only fields; the secret masked until "Show secrets", copied real all the same.
    for (const label of ["base_url", "api_key", "api_secret", "payment_token", "login email", "login password"]) {
      expect(await credentialField(page, label).evaluate((e) => (e as HTMLInputElement).readOnly), `${label} is read-only`).toBe(true);
    }
    const envBlock = region(page, "Credentials").getByLabel(".env block", { exact: true });
    expect(await textOf(envBlock)).not.toContain(session.merchant.api_secret);
    await region(page, "Credentials").getByRole("button", { name: "Copy api_secret", exact: true }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(session.merchant.api_secret);
    const show = region(page, "Credentials").getByRole("button", { name: "Show secrets", exact: true });
    await show.click();
    await eventually(() => show.getAttribute("aria-pressed")).toBe("true");
    const baseUrl = await credentialField(page, "base_url").inputValue();
    const apiKey = await credentialField(page, "api_key").inputValue();
    const apiSecret = await credentialField(page, "api_secret").inputValue();
    expect({ baseUrl, apiKey, apiSecret }).toEqual({
      baseUrl: `${t.url}/s/${id}`,
      apiKey: session.merchant.api_key,
      apiSecret: session.merchant.api_secret,
    });
    const env = await textOf(envBlock);
    for (const line of [
      `MERCHANT_API_BASE_URL=${baseUrl}`,
      `MERCHANT_API_KEY=${apiKey}`,
      `MERCHANT_API_SECRET=${apiSecret}`,
      `MERCHANT_PAYMENT_TOKEN=${session.merchant.payment_token}`,
      `MERCHANT_LOGIN_EMAIL=${session.merchant.login.email}`,
      `MERCHANT_LOGIN_PASSWORD=${session.merchant.login.password}`,
    ]) {
      expect(env.split("\n").map((l) => l.trim())).toContain(line);
    }

    // The page follows the session's event stream before the app under test starts.
    await page.getByText("Live", { exact: true }).waitFor();
    const findings = region(page, "Findings");
    await eventually(() => textOf(findings)).toContain("No findings yet");

    // The app under test: one token, four payment calls; the scenario expires the token on the 4th.
    const client = new SessionClient(baseUrl, apiKey, apiSecret);
    const token = await client.token();
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await client.paymentStatus(token));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 401]);
    expect(answers[3]!.json.code).toBe("token_expired");

    let entries = await journalOf(t, id);
    expect(entries.map((e) => [e.endpoint, e.status])).toEqual([
      ["token", 200],
      ["payment", 200],
      ["payment", 200],
      ["payment", 200],
      ["payment", 401],
    ]);
    const fourth = entries[4]!;
    expect(fourth.rules).toEqual([RULE]);
    await expectRows(page, 5);
    for (const e of entries.slice(0, 4)) expect(await rowView(page, e.id), e.id).toMatchObject({ outcome: "ok", status: "200" });
    const refused = await rowView(page, fourth.id);
    expect(refused).toMatchObject({ outcome: "refused", status: "401", code: "token_expired" });
    expect(refused.rule).toContain("expire-on-fourth-call");
    // Renewing on the scripted 401 is right: the report finds nothing yet, and the page agrees.
    let report = await t.call(`/__sandbox/sessions/${id}/report`);
    expect(report.json.findings).toEqual([]);
    expect(await textOf(findings)).toContain("No findings yet");

    // A naive client retries the refused call with the same token: the report has a finding now.
    const retried = await client.paymentStatus(token);
    expect([retried.status, retried.json.code]).toEqual([401, "token_expired"]);
    report = await t.call(`/__sandbox/sessions/${id}/report`);
    expect(report.status, report.text).toBe(200);
    const finding = report.json.findings[0] as { code: string; severity: string; evidence: string[] };
    expect(report.json.findings).toHaveLength(1);
    expect(finding.code).toBe("expired_token_reused");
    await expectRows(page, 6);
    await eventually(() => textOf(findings)).toContain(finding.code);
    // Exactly the report's findings: one wrongly raised while "No findings yet" was shown would be here too.
    expect(await findings.locator("li.finding").count()).toBe(report.json.findings.length);
    expect(await textOf(findings)).toContain(finding.severity);
    for (const evidence of finding.evidence) {
      expect(await findings.getByRole("link", { name: evidence, exact: true }).getAttribute("href")).toBe(`#row-${evidence}`);
    }
    // Its evidence link brings the journal row forward, on the same page.
    const evidence = finding.evidence.at(-1)!;
    await findings.getByRole("link", { name: evidence, exact: true }).click();
    await eventually(() => isFocusedOrHighlighted(journalRow(page, evidence)), `row ${evidence} is focused or highlighted`).toBe(true);
    await sessionHeading(page, id).waitFor();

    // The clock: +61 m moves the session's time, and the first token is past its hour.
    const clock = region(page, "Clock");
    const sessionClock = clock.getByTestId("session-clock");
    const before = Date.parse(session.clock.now);
    expect(Date.parse(await textOf(sessionClock))).toBe(before);
    expect(await textOf(clock)).toContain(session.clock.frozen ? "frozen" : "running");
    await clock.getByRole("button", { name: "+61 m", exact: true }).click();
    await eventually(async () => Date.parse(await textOf(sessionClock))).toBe(before + 61 * 60_000);
    const moved = await t.call(`/__sandbox/sessions/${id}/clock`);
    expect(Date.parse(moved.json.now)).toBe(before + 61 * 60_000);
    await eventually(() => textOf(statusLine(page))).toMatch(/advanced by \+?61 ?m/i);

    // The client renews; its new token works.
    const renewed = await client.token();
    expect((await client.paymentStatus(renewed)).status).toBe(200);
    await expectRows(page, 8);

    // Break it now: revoke the current tokens; the client's next call is refused, and the page shows it.
    const breakIt = region(page, "Break it now");
    await breakIt.getByLabel("Action", { exact: true }).selectOption({ label: "Revoke current tokens" });
    const ran = page.waitForResponse((r) => r.url() === `${t.url}/__sandbox/sessions/${id}/actions` && r.request().method() === "POST");
    await breakIt.getByRole("button", { name: "Run now", exact: true }).click();
    expect((await ran).status()).toBe(200);
    await eventually(() => textOf(statusLine(page))).toMatch(/revoke/i);
    const afterRevoke = await client.paymentStatus(renewed);
    expect([afterRevoke.status, afterRevoke.json.code]).toEqual([401, "token_revoked"]);
    await expectRows(page, 9);
    entries = await journalOf(t, id);
    expect(entries).toHaveLength(9);
    const revokedRow = await rowView(page, entries[8]!.id);
    expect(revokedRow).toMatchObject({ outcome: "refused", status: "401", code: "token_revoked" });

    // The timeline: a bar per token the client got, a mark per request coloured by its outcome, and
    // markers for the clock move and the action.
    const picture = timeline(page);
    const issued = entries.filter((e) => e.endpoint === "token" && e.tokenId !== undefined).map((e) => e.tokenId!);
    expect(issued).toHaveLength(2);
    await eventually(() => picture.locator("g.token-bar").count()).toBe(issued.length);
    for (const jti of issued) expect(await picture.locator(`g.token-bar[data-token="${jti}"]`).count(), `bar of ${jti}`).toBe(1);
    await eventually(() => picture.locator("g.request-mark").count()).toBe(entries.length);
    for (const outcome of ["ok", "refused", "error"] as const) {
      const expected = entries.filter((e) => outcomeOf(e.status) === outcome).length;
      expect(await picture.locator(`g.request-mark[data-outcome="${outcome}"]`).count(), `${outcome} marks`).toBe(expected);
    }
    expect(entries.filter((e) => outcomeOf(e.status) === "refused")).toHaveLength(3);
    for (const e of entries) expect(await picture.locator(`g.request-mark[data-request="${e.id}"]`).count(), `mark of ${e.id}`).toBe(1);
    await eventually(() => picture.locator(".marker").count()).toBeGreaterThanOrEqual(2);

    // Mint an expired token: the page says what the sandbox will answer, and the sandbox does.
    const mint = region(page, "Mint a token");
    await mint.getByLabel("Variant", { exact: true }).selectOption("expired");
    await mint.getByRole("button", { name: "Mint token", exact: true }).click();
    const mintedField = mint.getByLabel("Minted token", { exact: true });
    await eventually(() => mintedField.inputValue()).toMatch(/^[\w-]+\.[\w-]+\.[\w-]*$/);
    expect(await mintedField.evaluate((e) => (e as HTMLTextAreaElement).readOnly)).toBe(true);
    await eventually(() => textOf(mint)).toContain("The sandbox will answer: token_expired");
    const minted = await client.paymentStatus(await mintedField.inputValue());
    expect([minted.status, minted.json.code]).toEqual([401, "token_expired"]);
    await expectRows(page, 10);

    // End the session: the page says so, and the control plane no longer has it. The page's event
    // stream may ask once more and get the ended session's 404 (a console error the test expects).
    ui.allowConsoleErrors(/status of 404/);
    await page.getByRole("button", { name: "End session", exact: true }).click();
    await page.getByText(`Session ${id} has ended`).waitFor();
    await page.getByRole("link", { name: "Back to sessions", exact: true }).waitFor();
    expect((await t.call(`/__sandbox/sessions/${id}`)).status).toBe(404);
    expect(await page.evaluate(() => "qaFlowDocument" in window)).toBe(true);

    console.log(`QA flow (headless Chromium): ${Math.round(performance.now() - began)} ms, browser launch ${ui.launchMs()} ms`);
  }, 120_000);

  it("a session ended elsewhere (a script) while its page follows it: the page shows it ended and says so in its status line", async () => {
    const t = await ui.sandbox();
    const page = ui.page();
    const { id } = await createSession(t, SCENARIO);
    await page.goto(qaPageUrl(t.url, `#/sessions/${id}`));
    await sessionHeading(page, id).waitFor();
    // Followed live first, so the end comes as the stream's event, not as its 404 on a reconnect.
    await page.locator(".live-live").waitFor();
    ui.allowConsoleErrors(/status of 404/);

    expect((await t.call(`/__sandbox/sessions/${id}`, { method: "DELETE" })).status).toBe(204);
    await eventually(() => textOf(statusLine(page))).toContain(`Session ${id} has ended`);
    await page.getByRole("link", { name: "Back to sessions", exact: true }).waitFor();
    await page.getByRole("button", { name: "End session", exact: true }).waitFor({ state: "detached" });
  });
});
