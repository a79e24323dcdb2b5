import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";

/**
 * `merchant-sandbox record --upstream URL --out FILE.har`: a recording proxy for teams whose provider
 * may not be probed. The integration's test run points at the proxy once instead of the provider's
 * test environment; `calibrate --from-har FILE.har` then learns the profile from what it recorded.
 */

interface RecordArgs {
  upstream: string;
  port: number;
  host: string;
  out: string;
  keepSecrets: boolean;
  maxEntries: number;
}

export const recordCommand: CommandModule<object, RecordArgs> = {
  command: "record",
  describe: "Record your integration's exchanges with the provider as a HAR file, for calibrate --from-har",
  builder: (y: Argv) =>
    y
      .option("upstream", { type: "string", demandOption: true, describe: "The provider's test environment, e.g. https://provider-test.example" })
      .option("port", { type: "number", default: 4020, describe: "The port the proxy listens on (plain HTTP; 0 picks a free one)" })
      .option("host", { type: "string", default: "127.0.0.1", describe: "The address the proxy listens on" })
      .option("out", { type: "string", demandOption: true, describe: "The HAR file to write, rewritten after each exchange" })
      .option("keep-secrets", {
        type: "boolean",
        default: false,
        describe: "Write secrets, tokens and cookies as they were (default: stable pseudonyms; JWTs without their signature)",
      })
      .option("max-entries", { type: "number", default: 10_000, describe: "Exchanges recorded at most (forwarding goes on past it)" })
      .check((a) => {
        if (!/^https?:\/\/[^/@]+(\/.*)?$/.test(a.upstream))
          throw new Error(`--upstream must be an http(s) URL without credentials, e.g. https://provider-test.example (got '${a.upstream}').`);
        if (!Number.isInteger(a.port) || a.port < 0 || a.port > 65535)
          throw new Error(`--port must be a TCP port, 0 to 65535 (got '${String(a.port)}').`);
        if (!Number.isInteger(a.maxEntries) || (a.maxEntries as number) < 1)
          throw new Error(`--max-entries must be a whole number, at least 1 (got '${String(a.maxEntries)}').`);
        return true;
      })
      .example(
        "$0 record --upstream https://provider-test.example --port 4020 --out run.har",
        "then run your tests against http://127.0.0.1:4020",
      ) as unknown as Argv<RecordArgs>,
  handler: async (args: ArgumentsCamelCase<RecordArgs>) => {
    const { startRecorder } = await import("../record/recording-proxy.js");
    // The bound calibrate --from-har reads an answer within by default: what is recorded can be learnt from.
    const { DEFAULT_MAX_ANSWER_BYTES } = await import("../calibrate/probe.js");
    const recorder = await startRecorder({
      upstream: args.upstream,
      host: args.host,
      port: args.port,
      out: args.out,
      keepSecrets: args.keepSecrets,
      maxEntries: args.maxEntries,
      maxBodyBytes: DEFAULT_MAX_ANSWER_BYTES,
      log: (line) => process.stderr.write(`${line}\n`),
    });
    process.stdout.write(
      `merchant-sandbox record: listening on ${recorder.url} and forwarding to ${args.upstream.replace(/\/+$/, "")}, writing ${args.out}${args.keepSecrets ? " (secrets kept as they are)" : " (secrets as pseudonyms)"}. Point your integration at ${recorder.url}; stop with Ctrl-C.\n`,
    );
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
    await recorder.close();
    process.stdout.write(
      `merchant-sandbox record: ${recorder.entries()} exchanges written to ${args.out}. Learn from them: merchant-sandbox calibrate --from-har ${args.out} --out PROFILE.yaml\n`,
    );
  },
};
