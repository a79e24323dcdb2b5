import type { CommandModule } from "yargs";

/**
 * `merchant-sandbox errors`: prints the reference of every refusal code as Markdown, rendered from
 * the error catalogue (docs/errors.md is this output, checked in: `npm run docs:errors`).
 */
export const errorsCommand: CommandModule = {
  command: "errors",
  describe: "Print the reference of every refusal code (Markdown)",
  handler: async () => {
    const { errorReference } = await import("../error-reference.js");
    process.stdout.write(errorReference());
  },
};
