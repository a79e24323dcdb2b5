import { readFileSync } from "node:fs";
import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";
import { constants as osConstants } from "node:os";
import { SERVER_LIMIT_DEFAULTS, startServer, type RunningServer, type ServerOptions } from "../../adapters/node-http.js";
import { parseDuration } from "../../core/duration.js";
import { DURATION_LIMITS } from "../../core/duration-limits.js";
import { keyInTheMaking, type EarlyKey } from "../early-key.js";
import { listenErrorLine } from "../listen-error.js";
import { hostName, isLoopbackAddress } from "../../control/access.js";
import { ALGORITHMS, ConfigError, LOGIN_MODES, LOGIN_TOKEN_MODES, PRECEDENCES, type Algorithm } from "../../core/config.js";
import { internalsOf } from "../../app/internals.js";
import type { SandboxOptions } from "../../app/sandbox.js";
import { formatEvent, formatRequestLog, LOG_FORMATS, type LogFormat } from "../../log/request-log.js";
import { stdoutLogWriter } from "../../log/log-writer.js";
import type { LoadedScenario } from "../../scenarios/library.js";
import { ScenarioLoadError } from "../../scenarios/problems.js";
import { EVENT_LIMIT_DEFAULTS } from "../../control/events.js";
import { hideBin } from "yargs/helpers";
import { optionAliases } from "../env.js";
import { inGivenTerms } from "../given-values.js";
import { helpLine } from "../help-line.js";
import { inContainer, openControlPlaneWarning } from "../open-control-plane.js";

/** `merchant-sandbox serve`: the standalone server, with the built-in default merchant. */

interface ServeArgs {
  port: number;
  host: string;
  tokenTtl: string;
  leeway: string;
  alg: string;
  issuer: string;
  audience: string;
  seed: number;
  loginMode: string;
  loginToken: string;
  credentialPrecedence: string;
  paymentTokenTransport: string;
  disabledMerchantStatus: number;
  signingKey?: string;
  logFormat: LogFormat;
  scenario?: string[];
  scenariosDir?: string;
  profile?: string;
  controlPlane: boolean;
  adminToken?: string;
  allowedHosts?: string;
  journalSize: number;
  maxSessions: number;
  maxEventSubscribers: number;
  eventBufferSize: number;
  sessionIdleTtl: string;
  maxBodyBytes: number;
  maxHeaderBytes: number;
  maxHeaders: number;
  headersTimeout: string;
  requestTimeout: string;
  writeTimeout: string;
  shutdownGrace: string;
}

const SETTINGS = "Token and auth settings:";
const LIMITS = "Limits (a request over one gets a problem+json refusal, never a crash):";

/** A flag given twice means its last value, as in most CLIs (yargs would make it an array). */
const last = <T>(value: T | T[]): T => (Array.isArray(value) ? (value.at(-1) as T) : value);

/** `serve`, handed the start key main.ts began generating (early-key.ts), if it did. */
export function serveCommand(earlyKey: EarlyKey | undefined): CommandModule<object, ServeArgs> {
  return { ...SERVE_COMMAND, handler: (args: ArgumentsCamelCase<ServeArgs>) => serve(args, earlyKey) };
}

const SERVE_COMMAND = {
  command: "serve",
  describe: "Start the sandbox HTTP server (default http://127.0.0.1:4010)",
  builder: (y: Argv) =>
    y
      .option("port", { coerce: last, alias: "p", type: "number", default: 4010, describe: "Port to listen on (0 picks a free one)" })
      .option("host", { coerce: last, type: "string", default: "127.0.0.1", describe: "Address to bind (0.0.0.0 to accept outside connections)" })
      .option("token-ttl", {
        coerce: last,
        type: "string",
        default: "1h",
        group: SETTINGS,
        describe: "Access token lifetime: 3600, 90s, 59m, 1h; at most 3650d",
      })
      .option("leeway", {
        coerce: last,
        type: "string",
        default: "0s",
        group: SETTINGS,
        describe: "Clock skew tolerated when checking exp/nbf/iat; at most 1d (a profile's jwt.leeway sets it for the scenarios answering in it)",
      })
      .option("alg", { coerce: last, type: "string", choices: [...ALGORITHMS], default: "RS256", group: SETTINGS, describe: "JWT signing algorithm" })
      .option("issuer", {
        coerce: last,
        type: "string",
        default: "https://merchant-sandbox.test",
        group: SETTINGS,
        describe: "The tokens' iss claim",
      })
      .option("audience", { coerce: last, type: "string", default: "merchant-api", group: SETTINGS, describe: "The tokens' aud claim" })
      .option("signing-key", {
        coerce: last,
        type: "string",
        group: SETTINGS,
        describe:
          "Signing key, or @path to a file: PKCS#8 PEM or private JWK (RS256/ES256), secret >= 32 bytes (HS256). Share it so replicas accept each other's tokens. Default: generated at start",
      })
      .option("credential-precedence", {
        coerce: last,
        type: "string",
        choices: [...PRECEDENCES],
        default: "must_match",
        group: SETTINGS,
        describe: "A credential sent in both body and header",
      })
      .option("payment-token-transport", {
        coerce: last,
        type: "string",
        default: "authorization",
        group: SETTINGS,
        describe: "Where payment/init reads the payment token: authorization, header:<Name>, body:<field>",
      })
      .option("disabled-merchant-status", {
        coerce: last,
        type: "number",
        choices: [401, 403],
        default: 401,
        group: SETTINGS,
        describe: "Status for a disabled merchant's token request",
      })
      .option("login-mode", {
        coerce: last,
        type: "string",
        choices: [...LOGIN_MODES],
        default: "deprecated",
        group: SETTINGS,
        describe: "Deprecated /api/login_check: works with Deprecation headers, or 410",
      })
      .option("login-token", {
        coerce: last,
        type: "string",
        choices: [...LOGIN_TOKEN_MODES],
        default: "accepted",
        group: SETTINGS,
        describe: "The deprecated login's token on payment and cashout: accepted (with Deprecation headers), or refused as not an access token",
      })
      .option("profile", {
        coerce: last,
        type: "string",
        group: "Scenarios:",
        describe:
          "Answer in your provider's shapes: a response profile, oauth (default), lexik, spring, laravel, camel, envelope, or a profile file (YAML/JSON). Its jwt section sets --alg, --token-ttl, --issuer and --audience unless you give them",
      })
      .option("scenario", {
        alias: "s",
        type: "string",
        array: true,
        group: "Scenarios:",
        describe: "Load a scenario: a library name (see `merchant-sandbox scenarios`) or a YAML/JSON file. Repeatable; the first is the primary one",
      })
      .option("scenarios-dir", { coerce: last, type: "string", group: "Scenarios:", describe: "Load every scenario file of this folder" })
      .option("control-plane", {
        coerce: last,
        type: "boolean",
        default: true,
        group: "Control plane:",
        describe: "Serve /__sandbox/ (sessions, clock, journal, report); --no-control-plane leaves only health",
      })
      .option("admin-token", {
        coerce: last,
        type: "string",
        group: "Control plane:",
        describe: "Require this token (Authorization: Bearer or X-Admin-Token) on the control plane, health excepted; at least 16 characters",
      })
      .option("allowed-hosts", {
        coerce: last,
        type: "string",
        group: "Control plane:",
        describe:
          "Comma-separated Host names the control plane answers to, beyond localhost, IP addresses, single-label names (docker/CI service names) and --host: 'sandbox.ci.example', '.example.test' for a domain and its subdomains, '*' for any (unsafe: web pages get in through DNS rebinding)",
      })
      .option("journal-size", {
        coerce: last,
        type: "number",
        default: 1000,
        group: LIMITS,
        describe: "Requests the journal keeps (oldest dropped first)",
      })
      .option("max-sessions", {
        coerce: last,
        type: "number",
        default: 1000,
        group: LIMITS,
        describe: "Sessions at once (creating one more gets 429)",
      })
      .option("max-event-subscribers", {
        coerce: last,
        type: "number",
        default: EVENT_LIMIT_DEFAULTS.maxSubscribers,
        group: LIMITS,
        describe: "Open event streams (GET /__sandbox/events) at once (one more gets 429)",
      })
      .option("event-buffer-size", {
        coerce: last,
        type: "number",
        default: EVENT_LIMIT_DEFAULTS.bufferSize,
        group: LIMITS,
        describe: "Events a slow stream client may fall behind before its stream ends with 'overflow'",
      })
      .option("max-body-bytes", {
        coerce: last,
        type: "number",
        default: 64 * 1024,
        group: LIMITS,
        describe: "Largest request body (larger gets 413)",
      })
      .option("max-header-bytes", {
        coerce: last,
        type: "number",
        default: SERVER_LIMIT_DEFAULTS.maxHeaderBytes,
        group: LIMITS,
        describe: "Largest header section (larger gets 431)",
      })
      .option("max-headers", {
        coerce: last,
        type: "number",
        default: SERVER_LIMIT_DEFAULTS.maxHeaders,
        group: LIMITS,
        describe: "Most header fields in a request (more gets 431)",
      })
      .option("headers-timeout", {
        coerce: last,
        type: "string",
        default: "10s",
        group: LIMITS,
        describe: "Time a client has to send its headers (then 408); 1s to 1h",
      })
      .option("request-timeout", {
        coerce: last,
        type: "string",
        default: "30s",
        group: LIMITS,
        describe: "Time a client has to send its whole request (then 408); 1s to 1h",
      })
      .option("write-timeout", {
        coerce: last,
        type: "string",
        default: "5s",
        group: LIMITS,
        describe: "Time a client has to read what waits for it once a buffer's worth waits (then the connection is closed)",
      })
      .option("shutdown-grace", {
        coerce: last,
        type: "string",
        default: "10s",
        group: LIMITS,
        describe: "On SIGTERM/SIGINT, time the requests in flight have to be answered before they are cut (a second signal stops at once)",
      })
      .option("session-idle-ttl", {
        coerce: last,
        type: "string",
        default: "30m",
        group: "Control plane:",
        describe: "Sessions unused this long are reaped; 1s to 30d",
      })
      .option("seed", { coerce: last, type: "number", default: 1, describe: "Seed for generated ids (same seed, same sequence)" })
      .option("log-format", {
        coerce: last,
        type: "string",
        choices: [...LOG_FORMATS],
        default: "text",
        describe: "Request log on stdout: one line per request",
      })
      .example("$0 serve", "the default merchant on :4010 (api_key sandbox-api-key)")
      .example("$0 serve --token-ttl 60s --alg ES256", "short-lived ES256 tokens")
      .example("$0 serve --scenario token-endpoint-outage", "a library scenario, beside the default merchant")
      .example("$0 serve --profile lexik", "tokens and refusals in the shapes of Symfony's LexikJWTAuthenticationBundle")
      .example("$0 serve --scenarios-dir ./scenarios", "every scenario of a folder: one server for a whole suite")
      .example("MERCHANT_SANDBOX_PORT=8080 $0 serve", "every flag is also an environment variable") as unknown as Argv<ServeArgs>,
};

async function serve(args: ArgumentsCamelCase<ServeArgs>, earlyKey: EarlyKey | undefined): Promise<void> {
  const format = args.logFormat;
  // A log reader that went away (a closed pipe) must not take the sandbox down with it.
  process.stdout.removeAllListeners("error").on("error", () => undefined);
  const log = stdoutLogWriter();
  // Every way out (process.exit below, a fatal error) writes the lines still waiting first.
  process.on("exit", () => log.flushSync());
  const out = log.lineNow;
  const options: SandboxOptions = {
    ...jwtFlags(args),
    leeway: args.leeway,
    credentialPrecedence: args.credentialPrecedence,
    paymentTokenTransport: args.paymentTokenTransport,
    disabledMerchantStatus: args.disabledMerchantStatus,
    loginMode: args.loginMode,
    loginToken: args.loginToken,
    seed: args.seed,
    // The start key is made while the server starts and answers: what signs or verifies waits for
    // it, health and the rest do not (createSandbox does not wait for a pregenerated key).
    ...(args.signingKey ? {} : { pregeneratedKey: earlyKey ?? keyInTheMaking(args.alg as Algorithm) }),
    scenarios: await loadScenarios(args.scenario ?? [], args.scenariosDir),
    controlPlane: args.controlPlane,
    // Given but empty is an error (createSandbox says so), never a silent "no token".
    ...(args.adminToken !== undefined ? { adminToken: args.adminToken } : {}),
    allowedHosts: allowedHosts(args),
    journalSize: args.journalSize,
    maxSessions: args.maxSessions,
    maxEventSubscribers: args.maxEventSubscribers,
    eventBufferSize: args.eventBufferSize,
    sessionIdleTtl: args.sessionIdleTtl,
    maxBodyBytes: args.maxBodyBytes,
    ...(args.signingKey ? { signingKey: readKey(args.signingKey) } : {}),
    ...(format === "off" ? {} : { onRequest: (entry) => log.line(formatRequestLog(entry, format)) }),
    onInternalError: (error, entry) =>
      process.stderr.write(`internal error on ${entry.method} ${entry.path}: ${(error as Error)?.stack ?? String(error)}\n`),
  };
  if (!Number.isInteger(args.port) || args.port < 0 || args.port > 65535)
    usage(`--port must be a TCP port number, a whole number from 0 to 65535 (0 picks a free one), got '${String(args.port)}'`);
  const graceMs = shutdownGraceMs(args.shutdownGrace);
  // Imported when serve runs, not when the program loads: the sandbox is most of the CLI's code,
  // and the other commands need none of it.
  const { createSandbox } = await import("../../app/sandbox.js");
  const sandbox = await createSandbox(options).catch((e: unknown) => {
    if (e instanceof ConfigError) usage(asFlagMessage(e));
    if (e instanceof ScenarioLoadError) scenarioProblems(e);
    if (e instanceof Error && e.name === "ProfileLoadError") profileProblems(e);
    throw e;
  });
  // A start key that cannot be made stops the server at once, saying why: a CI job then fails on
  // this line instead of on every test that needs a token (which would otherwise get 500s).
  sandbox.ready.catch((e: unknown) => {
    const reason = e instanceof Error ? e.message : String(e);
    process.stderr.write(`merchant-sandbox: stopping: ${reason}\n`);
    process.exit(1);
  });
  const running = await startServer(sandbox, { port: args.port, host: args.host, ...serverLimits(args) }).catch((e: NodeJS.ErrnoException) => {
    process.stderr.write(`merchant-sandbox: ${listenErrorLine(e, args.host, args.port)}\n`);
    process.exit(1);
  });
  if (args.controlPlane && args.adminToken === undefined && !isLoopbackAddress(args.host)) {
    process.stderr.write(`merchant-sandbox: warning: ${openControlPlaneWarning(args.host, running.port, inContainer(process.env))}\n`);
  }
  const apiKeys = internalsOf(sandbox)
    .merchants.all()
    .map((m) => m.apiKey);
  const eventFormat = format === "off" ? "text" : format;
  // Before the line that says it listens: a supervisor may signal as soon as it reads that line,
  // and a signal that comes before the handlers kills the process without a drain.
  stopOnSignals(running, graceMs, (msg, fields) => out(formatEvent(eventFormat, msg, fields)));
  const bound = running.url.endsWith(`${running.host}:${running.port}`) ? {} : { bound: `${running.host}:${running.port}` };
  out(
    formatEvent(eventFormat, `merchant-sandbox ${sandbox.version} listening on ${running.url}`, {
      ...bound,
      scenarios: sandbox.scenarios.map((s) => s.name),
      // The primary scenario's response profile: the one requests no merchant can be told from are answered in.
      profile: sandbox.scenarios[0]?.profile ?? "oauth",
      merchants: apiKeys,
      alg: sandbox.settings.algorithm,
      token_ttl: `${sandbox.settings.tokenTtlSeconds}s`,
    }),
  );
}

/**
 * SIGTERM or SIGINT: stop accepting at once, answer the requests in flight for up to the grace,
 * then exit: 0 when all were answered, 1 when the grace ran out and some were cut. A second signal
 * stops at once with 128 + its number (143 for SIGTERM, 130 for SIGINT), as a shell reports a
 * process killed by it. One log line when the drain starts, one when it ends.
 */
function stopOnSignals(running: RunningServer, graceMs: number, log: (msg: string, fields: Record<string, unknown>) => void): void {
  let stopping = false;
  const requests = (n: number) => `${n} request${n === 1 ? "" : "s"}`;
  const stop = (signal: "SIGTERM" | "SIGINT") => {
    if (stopping) {
      log(`received ${signal} again, stopping at once`, { cut: running.inFlight });
      process.exit(128 + osConstants.signals[signal]);
    }
    stopping = true;
    const startedAt = performance.now();
    const inFlight = running.inFlight;
    // Closed before the line is written: whoever reads it finds new connections refused.
    const closed = running.close(graceMs);
    log(`received ${signal}, stopping: answering ${requests(inFlight)} in flight`, { in_flight: inFlight, grace: `${graceMs / 1000}s` });
    void closed.then(({ answered, cut }) => {
      const ms = Math.round(performance.now() - startedAt);
      if (cut === 0) log(`stopped: ${requests(answered)} answered while draining`, { answered, cut, drain_ms: ms });
      else log(`stopped: the ${graceMs / 1000}s shutdown grace ran out, ${requests(cut)} cut`, { answered, cut, drain_ms: ms });
      process.exit(cut === 0 ? 0 : 1);
    });
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

/** --shutdown-grace: 0s (cut at once) to 1h; setTimeout cannot wait much longer anyway (~24.8 days). */
function shutdownGraceMs(value: string): number {
  let ms: number;
  try {
    ms = parseDuration(value, "--shutdown-grace");
  } catch (e) {
    return usage((e as Error).message);
  }
  if (ms > 3_600_000) usage(`--shutdown-grace must be at most 1h, got '${value}'`);
  return ms;
}

/** The server's own limits (the sandbox's are createSandbox options); a bad value is a usage error. */
function serverLimits(args: ServeArgs): ServerOptions {
  const bytes = (value: number, flag: string) => {
    if (!Number.isInteger(value) || value < 1024) usage(`${flag} must be a whole number of bytes, at least 1024, got '${String(value)}'`);
    return value;
  };
  const duration = (value: string, flag: string) => {
    try {
      const ms = parseDuration(value, flag);
      if (ms < 1000) usage(`${flag} must be at least 1s, got '${value}'`);
      // node:http takes whole milliseconds up to 2^53 and threw a stack trace past them.
      if (ms > DURATION_LIMITS.serverTimeout.ms) usage(`${flag} must be at most ${DURATION_LIMITS.serverTimeout.text}, got '${value}'`);
      return Math.round(ms);
    } catch (e) {
      return usage(`${flag}: ${(e as Error).message}`);
    }
  };
  const headersTimeoutMs = duration(args.headersTimeout, "--headers-timeout");
  const requestTimeoutMs = duration(args.requestTimeout, "--request-timeout");
  if (headersTimeoutMs > requestTimeoutMs) {
    usage(
      `--headers-timeout (${args.headersTimeout}) cannot be longer than --request-timeout (${args.requestTimeout}): the headers are part of the request`,
    );
  }
  // At least 32: a browser behind a proxy or two sends about 20, and a lower limit refuses them.
  if (!Number.isInteger(args.maxHeaders) || args.maxHeaders < 32)
    usage(`--max-headers must be a whole number of header fields, at least 32, got '${String(args.maxHeaders)}'`);
  return {
    maxHeaderBytes: bytes(args.maxHeaderBytes, "--max-header-bytes"),
    maxHeaders: args.maxHeaders,
    headersTimeoutMs,
    requestTimeoutMs,
    writeTimeoutMs: duration(args.writeTimeout, "--write-timeout"),
  };
}

/** --allowed-hosts as a list, plus the address bound when it is a name (the sandbox answers to it). */
function allowedHosts(args: ServeArgs): string[] {
  const given = (args.allowedHosts ?? "")
    .split(",")
    .map((h) => h.trim())
    .filter((h) => h !== "");
  const bound = hostName(args.host);
  return bound === undefined ? given : [...given, bound];
}

/** createSandbox() option names, as the flags a CLI user typed. */
const FLAG_OF_SETTING: Record<string, string> = {
  tokenTtl: "--token-ttl",
  leeway: "--leeway",
  algorithm: "--alg",
  issuer: "--issuer",
  audience: "--audience",
  credentialPrecedence: "--credential-precedence",
  paymentTokenTransport: "--payment-token-transport",
  disabledMerchantStatus: "--disabled-merchant-status",
  loginMode: "--login-mode",
  loginToken: "--login-token",
  seed: "--seed",
  journalSize: "--journal-size",
  maxSessions: "--max-sessions",
  maxEventSubscribers: "--max-event-subscribers",
  eventBufferSize: "--event-buffer-size",
  maxBodyBytes: "--max-body-bytes",
  sessionIdleTtl: "--session-idle-ttl",
  adminToken: "--admin-token",
  allowedHosts: "--allowed-hosts",
};

function asFlagMessage(e: ConfigError): string {
  const flag = e.setting && FLAG_OF_SETTING[e.setting];
  return flag && e.message.startsWith(e.setting!) ? flag + e.message.slice(e.setting!.length) : e.message;
}

/** --scenario and --scenarios-dir, loaded and validated before anything starts. */
async function loadScenarios(names: string[], dir: string | undefined): Promise<LoadedScenario[]> {
  if (names.length === 0 && dir === undefined) return [];
  // Imported only when there are files to read: the YAML parser and zod slow a start (docs/performance.md#start).
  const { loadScenarioDir, resolveScenario } = await import("../../scenarios/library.js");
  try {
    return [...names.map((n) => resolveScenario(n)), ...(dir === undefined ? [] : loadScenarioDir(dir))];
  } catch (e) {
    if (e instanceof ScenarioLoadError) scenarioProblems(e);
    throw e;
  }
}

/**
 * --alg, --token-ttl, --issuer and --audience. With --profile, a flag left at its default is not
 * passed, so the profile's jwt section sets it; a flag the user gave wins over the profile.
 */
function jwtFlags(args: ServeArgs): Pick<SandboxOptions, "tokenTtl" | "algorithm" | "issuer" | "audience" | "profile"> {
  const flags = { tokenTtl: args.tokenTtl, algorithm: args.alg, issuer: args.issuer, audience: args.audience };
  if (args.profile === undefined) return flags;
  const defaults = { tokenTtl: "1h", algorithm: "RS256", issuer: "https://merchant-sandbox.test", audience: "merchant-api" };
  const given = Object.entries(flags).filter(([name, value]) => value !== defaults[name as keyof typeof defaults]);
  return { ...Object.fromEntries(given), profile: args.profile };
}

/**
 * A profile that cannot be used (--profile's, or a scenario's settings.profile) stops the start:
 * its located problems, or the one line about its name (which says who named it), exit 2.
 */
function profileProblems(e: Error): never {
  process.stderr.write(`merchant-sandbox: a response profile does not load, nothing was started:\n${e.message}\n`);
  process.exit(2);
}

/** An invalid scenario stops the start: one line per problem (file:line:column: path: message), exit 2. */
function scenarioProblems(e: ScenarioLoadError): never {
  process.stderr.write(`merchant-sandbox: the scenarios do not load, nothing was started:\n${e.message}\n`);
  process.exit(2);
}

function readKey(value: string): string {
  if (!value.startsWith("@")) return value;
  try {
    return readFileSync(value.slice(1), "utf8");
  } catch (e) {
    return usage(`--signing-key ${value}: cannot read the file (${(e as NodeJS.ErrnoException).code ?? "error"})`);
  }
}

/** A bad value stops the start: one line naming it as the user gave it (the flag, or its variable), exit 2. */
function usage(message: string): never {
  const given = { args: hideBin(process.argv), command: "serve", aliases: optionAliases(serveCommand(undefined) as unknown as CommandModule) };
  process.stderr.write(`merchant-sandbox: ${inGivenTerms(message, given, process.env)}\n${helpLine("serve")}\n`);
  process.exit(2);
}
