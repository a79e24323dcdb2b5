import { describe, expect, it } from "vitest";
import { runCliToEnd } from "../support/cli.js";

/**
 * The state URL's password printed (attack round four, class 4): the forms other Redis clients
 * read a password from are refused at start, and neither the line nor anything else the CLI
 * prints quotes it, given as a flag or as the variable.
 */

const PASSWORD = "Rt4-state-url-secret";
const FORM = "redis://[:PASSWORD@]HOST:PORT[/DB] (or rediss:// for TLS)";

describe("the state URL's password printed", () => {
  it.each([
    [
      `redis://127.0.0.1:6390?password=${PASSWORD}`,
      `"redis://127.0.0.1:6390?***" has a query (?…), which is not read: remove it and write the URL as ${FORM}.`,
    ],
    [
      `redis://127.0.0.1:6390/0?password=${PASSWORD}`,
      `"redis://127.0.0.1:6390/0?***" has a query (?…), which is not read: remove it and write the URL as ${FORM}.`,
    ],
    [
      `redis://:${PASSWORD}`,
      `"redis://:***" is not a URL: write it as ${FORM}; in a password, write / ? # @ and other reserved characters %-escaped (%2F %3F %23 %40).`,
    ],
    [
      `redis://${PASSWORD}@127.0.0.1:6390`,
      `"redis://***@127.0.0.1:6390" gives a user name and no password, so it would not authenticate: if that is the password, write redis://:PASSWORD@HOST:PORT; for a user, redis://USER:PASSWORD@HOST:PORT.`,
    ],
  ])("refuses %s at start, exit 2, without printing the password", async (url, said) => {
    for (const run of [
      () => runCliToEnd(["serve", "--port", "0", "--state", url]),
      () => runCliToEnd(["serve", "--port", "0"], { MERCHANT_SANDBOX_STATE: url }),
    ]) {
      const { code, stdout, stderr } = await run();
      expect(code).toBe(2);
      expect(stdout).toBe("");
      expect(stderr).toContain(`The state URL ${said}`);
      expect(stdout + stderr).not.toContain(PASSWORD);
    }
  });
});
