import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";
import { DEFAULT_MAX_ANSWER_BYTES, DEFAULT_PROTECTED_PATH } from "../calibrate/probe.js";

/**
 * `merchant-sandbox calibrate --url URL --api-key K --api-secret S --out FILE`: sends a fixed, safe
 * set of requests to the provider's test environment and writes the response profile that
 * reproduces its answers (src/cli/calibrate/). With `--check FILE` it compares instead: exit 0 the
 * provider still answers as the profile says, 1 it does not (a table of differences), 2 it cannot
 * be reached. Secrets are best given as MERCHANT_SANDBOX_API_SECRET etc., not on the command line;
 * the provider's URL as MERCHANT_SANDBOX_PROVIDER_URL.
 */

interface CalibrateArgs {
  url: string;
  fromHar?: string;
  apiKey: string;
  apiSecret: string;
  paymentToken?: string;
  login?: string;
  expiredToken?: string;
  revokedToken?: string;
  protectedPath: string;
  allowWrites: boolean;
  out?: string;
  check?: string;
  name?: string;
  maxAnswerBytes: number;
}

export const calibrateCommand: CommandModule<object, CalibrateArgs> = {
  command: "calibrate",
  describe: "Learn a response profile from your provider's test environment (or --check one still holds)",
  builder: (y: Argv) =>
    y
      // Its variable is MERCHANT_SANDBOX_PROVIDER_URL (env.ts): MERCHANT_SANDBOX_URL is the sandbox's own.
      .option("url", { type: "string", describe: "The provider's test environment, e.g. https://provider-test.example (required)" })
      .option("from-har", {
        type: "string",
        describe:
          "Learn from a HAR recording of your integration's test run instead of probing (mitmproxy, Charles, devtools, `merchant-sandbox record`)",
      })
      .option("api-key", { type: "string", describe: "A test merchant's api_key at the provider (required with --url)" })
      .option("api-secret", { type: "string", describe: "Its api_secret (better: MERCHANT_SANDBOX_API_SECRET; required with --url)" })
      .option("payment-token", { type: "string", describe: "Its payment token, for payment/init (sent only with --allow-writes)" })
      .option("login", { type: "string", describe: "EMAIL:PASSWORD for the deprecated login (POST /api/login_check)" })
      .option("expired-token", { type: "string", describe: "An expired access token, to observe the expired answer (else it is inferred)" })
      .option("revoked-token", { type: "string", describe: "An access token the provider revoked, to observe that answer (else it is inferred)" })
      .option("protected-path", {
        type: "string",
        default: DEFAULT_PROTECTED_PATH,
        describe: "A GET path under /api/v2/payment/ or /api/v2/cashout/ for the protected probes",
      })
      .option("allow-writes", { type: "boolean", default: false, describe: "Also call payment/init with the payment token (creates a test payment)" })
      .option("out", { type: "string", describe: "Where to write the profile (YAML), e.g. acme.profile.yaml" })
      .option("check", {
        type: "string",
        describe: "Compare the provider with this profile instead of writing one (exit 0 same, 1 different, 2 unreachable)",
      })
      .option("name", { type: "string", describe: "The profile's name ([a-z0-9-]+); default: from --out's file name" })
      .option("max-answer-bytes", {
        type: "number",
        default: DEFAULT_MAX_ANSWER_BYTES,
        describe: "Most bytes of one provider answer read, as received and once decompressed; beyond, calibrate stops (exit 2)",
      })
      .conflicts("out", "check")
      .conflicts("from-har", ["url", "expired-token", "revoked-token"])
      .check((a) => checkCalibrateArgs(a as Partial<CalibrateArgs>))
      .example("$0 calibrate --url https://provider-test.example --api-key K --api-secret S --out acme.profile.yaml", "learn the provider's answers")
      .example(
        "$0 calibrate --check acme.profile.yaml --url https://provider-test.example --api-key K --api-secret S",
        "nightly: does it still hold?",
      )
      .example(
        "$0 calibrate --from-har run.har --out acme.profile.yaml",
        "learn from a recording, sending nothing",
      ) as unknown as Argv<CalibrateArgs>,
  handler: async (args: ArgumentsCamelCase<CalibrateArgs>) => {
    // Imported when calibrate runs: it brings the YAML writer and the profile loader (zod), which
    // every other command, serve above all, starts without.
    const { runCalibrate } = await import("../calibrate/run.js");
    const colon = args.login?.indexOf(":") ?? -1;
    process.exitCode = await runCalibrate(
      {
        url: args.url ?? "",
        fromHar: args.fromHar,
        apiKey: args.apiKey ?? "",
        apiSecret: args.apiSecret ?? "",
        paymentToken: args.paymentToken,
        login: args.login !== undefined ? { email: args.login.slice(0, colon), password: args.login.slice(colon + 1) } : undefined,
        expiredToken: args.expiredToken,
        revokedToken: args.revokedToken,
        protectedPath: args.protectedPath,
        allowWrites: args.allowWrites,
        maxAnswerBytes: args.maxAnswerBytes,
        out: args.out,
        check: args.check,
        name: args.name ?? nameOf(args.out ?? args.check!),
      },
      { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) },
    );
  },
};

/** What yargs cannot say of calibrate's flags: one line each, naming the flag and what it takes. */
function checkCalibrateArgs(a: Partial<CalibrateArgs>): true {
  if (a.out === undefined && a.check === undefined) throw new Error("Give --out FILE to write the profile, or --check FILE to compare with one.");
  if (a.fromHar !== undefined) {
    if (a.allowWrites)
      throw new Error("--allow-writes is for probing: --from-har sends nothing (payment/init is learnt if the recording holds one).");
    return true;
  }
  if (a.url === undefined)
    throw new Error(
      "Give --url, the provider's test environment, e.g. https://provider-test.example (or MERCHANT_SANDBOX_PROVIDER_URL; MERCHANT_SANDBOX_URL is the sandbox's own URL, for report and scan-logs), or --from-har FILE to learn from a recording.",
    );
  if (a.apiKey === undefined || a.apiSecret === undefined)
    throw new Error("Give --api-key and --api-secret, a test merchant's credentials at the provider (or MERCHANT_SANDBOX_API_SECRET).");
  if (a.login !== undefined && !/^[^:]+:.+$/.test(a.login)) throw new Error("--login takes EMAIL:PASSWORD (the e-mail, a colon, the password).");
  // A user:password@ in the URL would be echoed in messages: refused, without repeating it.
  if (/^https?:\/\/[^/]*@/.test(a.url)) throw new Error("--url must not hold credentials (user:password@); give them as --api-key and --api-secret.");
  if (!/^https?:\/\/[^/]/.test(a.url)) throw new Error(`--url must be an http(s) URL, e.g. https://provider-test.example (got '${a.url}').`);
  if (!String(a.protectedPath).startsWith("/")) throw new Error("--protected-path must start with '/', e.g. /api/v2/payment/status.");
  if (!Number.isInteger(a.maxAnswerBytes) || (a.maxAnswerBytes as number) < 1024)
    throw new Error(`--max-answer-bytes must be a whole number of bytes, at least 1024 (got '${String(a.maxAnswerBytes)}').`);
  if (a.name !== undefined && !/^[a-z0-9-]+$/.test(a.name)) throw new Error(`--name must be lower-case letters, digits and '-' (got '${a.name}').`);
  return true;
}

/** `acme.profile.yaml` -> `acme`; anything unusable -> `calibrated`. */
function nameOf(file: string): string {
  const base = file
    .split(/[\\/]/)
    .pop()!
    .split(".")[0]!
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return base || "calibrated";
}
