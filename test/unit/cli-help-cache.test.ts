import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import yargs from "yargs";
import { skipHelpCache, usageInstanceOf } from "../../src/cli/program.js";

/**
 * program.ts skips yargs' help-message cache through yargs internals (65-95 ms of every start). The
 * hook is guarded, so a yargs update that renames what it uses would not crash anything: starts would
 * only get slower, silently. These tests fail instead, on the installed yargs.
 */

const yargsVersion: string = JSON.parse(readFileSync(createRequire(import.meta.url).resolve("yargs/package.json"), "utf8")).version;
const WHAT_TO_DO =
  `yargs ${yargsVersion} no longer has getInternalMethods().getUsageInstance().cacheHelpMessage, or no longer ` +
  "calls it after a command's handler: find where its command runner now lays out and caches the help text " +
  "(node_modules/yargs/build/lib/command.js) and update skipHelpCache/usageInstanceOf in src/cli/program.ts, " +
  "or remove them if that layout is gone (check `merchant-sandbox serve` start time either way)";

function parserWithCommand(ran: string[]) {
  return yargs(["go"])
    .exitProcess(false)
    .command("go", "a command", {}, () => {
      ran.push("go");
    });
}

describe("skipHelpCache (src/cli/program.ts)", () => {
  it("finds yargs' help cache on the installed yargs", () => {
    expect(skipHelpCache(parserWithCommand([])), WHAT_TO_DO).toBe(true);
  });

  it("yargs caches the help through that hook when a command's handler has run", async () => {
    const ran: string[] = [];
    const parser = parserWithCommand(ran);
    const usage = usageInstanceOf(parser);
    let cached = 0;
    if (usage) usage.cacheHelpMessage = () => void cached++;
    await parser.parseAsync();
    expect(ran).toEqual(["go"]);
    expect(cached, WHAT_TO_DO).toBe(1);
  });

  it("a hooked parser still runs the command", async () => {
    const ran: string[] = [];
    const parser = parserWithCommand(ran);
    skipHelpCache(parser);
    await parser.parseAsync();
    expect(ran).toEqual(["go"]);
  });
});
