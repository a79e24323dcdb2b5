import type { Argv, CommandModule } from "yargs";

/**
 * `merchant-sandbox schema [scenario|profile]`: prints the JSON Schema of scenario files or of
 * response profiles, generated from the same zod schema that validates them
 * (scenarios/scenario.schema.json and profiles/profile.schema.json are this output, checked in).
 */
export const schemaCommand: CommandModule<object, { kind: string }> = {
  command: "schema [kind]",
  describe: "Print the JSON Schema of scenario files, or of response profiles (for editors)",
  builder: (y: Argv) =>
    y.positional("kind", {
      type: "string",
      choices: ["scenario", "profile"],
      default: "scenario",
      describe: "Which file format",
    }) as unknown as Argv<{
      kind: string;
    }>,
  handler: async (args) => {
    const schema =
      args.kind === "profile"
        ? (await import("../../profiles/schema.js")).profileJsonSchema()
        : (await import("../../scenarios/schema.js")).scenarioJsonSchema();
    process.stdout.write(JSON.stringify(schema, null, 2) + "\n");
  },
};
