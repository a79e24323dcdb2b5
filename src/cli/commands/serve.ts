import type { ArgumentsCamelCase, CommandModule } from "yargs";
import type { EarlyKey } from "../early-key.js";
import { SERVE_COMMAND, type ServeArgs } from "../serve/flags.js";
import { serve } from "../serve/start.js";

/**
 * `merchant-sandbox serve`: the standalone server, with the built-in default merchant. Its flags are
 * in serve/flags.ts, their mapping and checks in serve/options.ts, the start-up in serve/start.ts.
 */

/** `serve`, handed the start key main.ts began generating (early-key.ts), if it did. */
export function serveCommand(earlyKey: EarlyKey | undefined): CommandModule<object, ServeArgs> {
  return { ...SERVE_COMMAND, handler: (args: ArgumentsCamelCase<ServeArgs>) => serve(args, earlyKey) };
}
