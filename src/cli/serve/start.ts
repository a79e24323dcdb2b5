import type { ArgumentsCamelCase } from "yargs";
import { constants as osConstants } from "node:os";
import { startServer, type RunningServer } from "../../adapters/node-http.js";
import { keyInTheMaking, type EarlyKey } from "../early-key.js";
import { listenErrorLine } from "../listen-error.js";
import { isLoopbackAddress } from "../../control/access.js";
import { ConfigError, DEFAULT_SETTINGS, type Algorithm } from "../../core/config.js";
import { internalsOf } from "../../app/internals.js";
import type { SandboxOptions } from "../../app/sandbox.js";
import { formatEvent, formatRequestLog } from "../../log/request-log.js";
import { stdoutLogWriter } from "../../log/log-writer.js";
import type { LoadedScenario } from "../../scenarios/library.js";
import { ScenarioLoadError } from "../../scenarios/problems.js";
import { inContainer, openControlPlaneWarning } from "../open-control-plane.js";
import type { ServeArgs } from "./flags.js";
import { allowedHosts, asFlagMessage, readKey, serverLimits, shutdownGraceMs, usage } from "./options.js";

/** `serve`'s start-up: the sandbox and its server, the start line, signals and exit codes. */

export async function serve(args: ArgumentsCamelCase<ServeArgs>, earlyKey: EarlyKey | undefined): Promise<void> {
  const format = args.logFormat;
  // A log reader that went away (a closed pipe) must not take the sandbox down with it.
  process.stdout.removeAllListeners("error").on("error", () => undefined);
  const log = stdoutLogWriter();
  // Every way out (process.exit below, a fatal error) writes the lines still waiting first.
  process.on("exit", () => log.flushSync());
  const out = log.lineNow;
  const options: SandboxOptions = {
    // Undefined unless given (flags.ts): the profile's jwt section, then the defaults, set the others.
    ...(args.profile !== undefined ? { profile: args.profile } : {}),
    tokenTtl: args.tokenTtl,
    leeway: args.leeway,
    algorithm: args.alg,
    issuer: args.issuer,
    audience: args.audience,
    credentialPrecedence: args.credentialPrecedence,
    paymentTokenTransport: args.paymentTokenTransport,
    disabledMerchantStatus: args.disabledMerchantStatus,
    loginMode: args.loginMode,
    loginToken: args.loginToken,
    seed: args.seed,
    // The start key is made while the server starts and answers: what signs or verifies waits for
    // it, health and the rest do not (createSandbox does not wait for a pregenerated key).
    ...(args.signingKey ? {} : { pregeneratedKey: earlyKey ?? keyInTheMaking((args.alg ?? DEFAULT_SETTINGS.algorithm) as Algorithm) }),
    scenarios: await loadScenarios(args.scenario ?? [], args.scenariosDir),
    controlPlane: args.controlPlane,
    // Given but empty is an error (createSandbox says so), never a silent "no token".
    ...(args.adminToken !== undefined ? { adminToken: args.adminToken } : {}),
    allowedHosts: allowedHosts(args),
    journalSize: args.journalSize,
    ...(args.state !== undefined ? { state: args.state, requireState: args.requireState } : {}),
    onNotice: (message) => process.stderr.write(`merchant-sandbox: ${message}\n`),
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
    if (e instanceof Error && e.name === "StateUnreachableAtStart") unreachable(e.message);
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
  stopOnSignals(
    running,
    graceMs,
    (msg, fields) => out(formatEvent(eventFormat, msg, fields)),
    () => sandbox.close(),
  );
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
      // Only when shared: the in-memory default's start line stays as it was.
      ...(sandbox.state !== "memory" && { state: sandbox.state }),
    }),
  );
}

/**
 * SIGTERM or SIGINT: stop accepting at once, answer the requests in flight for up to the grace,
 * then exit: 0 when all were answered, 1 when the grace ran out and some were cut. A second signal
 * stops at once with 128 + its number (143 for SIGTERM, 130 for SIGINT), as a shell reports a
 * process killed by it. One log line when the drain starts, one when it ends.
 */
function stopOnSignals(
  running: RunningServer,
  graceMs: number,
  log: (msg: string, fields: Record<string, unknown>) => void,
  closeSandbox: () => Promise<void>,
): void {
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
    // The shared state's connections close once the last request is answered (and committed).
    void closed
      .then(async (drained) => {
        await closeSandbox().catch(() => {});
        return drained;
      })
      .then(({ answered, cut }) => {
        const ms = Math.round(performance.now() - startedAt);
        if (cut === 0) log(`stopped: ${requests(answered)} answered while draining`, { answered, cut, drain_ms: ms });
        else log(`stopped: the ${graceMs / 1000}s shutdown grace ran out, ${requests(cut)} cut`, { answered, cut, drain_ms: ms });
        process.exit(cut === 0 ? 0 : 1);
      });
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
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
 * A profile that cannot be used (--profile's, or a scenario's settings.profile) stops the start:
 * its located problems, or the one line about its name (which says who named it), exit 2.
 */
function profileProblems(e: Error): never {
  process.stderr.write(`merchant-sandbox: a response profile does not load, nothing was started:\n${e.message}\n`);
  process.exit(2);
}

/** What the start needs is not reachable over the network: the line that says what, exit 3 (not a usage error: no --help). */
function unreachable(message: string): never {
  process.stderr.write(`merchant-sandbox: cannot start: ${message}\n`);
  process.exit(EXIT_UNREACHABLE);
}

/** The exit code of a start that a network failure stopped (docs/configuration.md). */
const EXIT_UNREACHABLE = 3;

/** An invalid scenario stops the start: one line per problem (file:line:column: path: message), exit 2. */
function scenarioProblems(e: ScenarioLoadError): never {
  process.stderr.write(`merchant-sandbox: the scenarios do not load, nothing was started:\n${e.message}\n`);
  process.exit(2);
}
