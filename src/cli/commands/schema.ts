import type { CommandModule } from "yargs";

/**
 * `merchant-sandbox schema`: prints the JSON Schema of scenario files, generated from the same
 * zod schema that validates them (scenarios/scenario.schema.json is this output, checked in).
 */
export const schemaCommand: CommandModule = {
  command: "schema",
  describe: "Print the JSON Schema of scenario files (for editors)",
  handler: async () => {
    const { scenarioJsonSchema } = await import("../../scenarios/schema.js");
    process.stdout.write(JSON.stringify(scenarioJsonSchema(), null, 2) + "\n");
  },
};
