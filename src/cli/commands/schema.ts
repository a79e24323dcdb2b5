import type { CommandModule } from "yargs";
import { scenarioJsonSchema } from "../../scenarios/schema.js";

/**
 * `merchant-sandbox schema`: prints the JSON Schema of scenario files, generated from the same
 * zod schema that validates them (scenarios/scenario.schema.json is this output, checked in).
 */
export const schemaCommand: CommandModule = {
  command: "schema",
  describe: "Print the JSON Schema of scenario files (for editors)",
  handler: () => {
    process.stdout.write(JSON.stringify(scenarioJsonSchema(), null, 2) + "\n");
  },
};
