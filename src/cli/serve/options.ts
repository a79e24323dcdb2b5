import { readFileSync } from "node:fs";
import type { CommandModule } from "yargs";
import { hideBin } from "yargs/helpers";
import type { ServerOptions } from "../../adapters/node-http.js";
import { parseDuration } from "../../core/duration.js";
import { DURATION_LIMITS } from "../../core/duration-limits.js";
import { hostName } from "../../control/access.js";
import type { ConfigError } from "../../core/config.js";
import { optionAliases, optionNames } from "../env.js";
import { inGivenTerms } from "../given-values.js";
import { helpLine } from "../help-line.js";
import { SERVE_COMMAND, type ServeArgs } from "./flags.js";

/** `serve`'s flags mapped to createSandbox and startServer options, each checked; a bad value is a usage error. */

/** --shutdown-grace: 0s (cut at once) to 1h; setTimeout cannot wait much longer anyway (~24.8 days). */
export function shutdownGraceMs(value: string): number {
  let ms: number;
  try {
    ms = parseDuration(value, "--shutdown-grace");
  } catch (e) {
    return usage((e as Error).message);
  }
  if (ms > DURATION_LIMITS.shutdownGrace.ms) usage(`--shutdown-grace must be at most ${DURATION_LIMITS.shutdownGrace.text}, got '${value}'`);
  return ms;
}

/** The server's own limits (the sandbox's are createSandbox options); a bad value is a usage error. */
export function serverLimits(args: ServeArgs): ServerOptions {
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
export function allowedHosts(args: ServeArgs): string[] {
  const given = (args.allowedHosts ?? "")
    .split(",")
    .map((h) => h.trim())
    .filter((h) => h !== "");
  const bound = hostName(args.host);
  return bound === undefined ? given : [...given, bound];
}

/** createSandbox() options whose flag is not their name in kebab case. */
const FLAG_NAMED_OTHERWISE: Readonly<Record<string, string>> = { algorithm: "alg" };

/** The flag a CLI user types for a createSandbox() option (`tokenTtl`: `--token-ttl`), if serve has one. */
export function flagOfSetting(setting: string): string | undefined {
  const flag = FLAG_NAMED_OTHERWISE[setting] ?? setting.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  return optionNames(SERVE_COMMAND as unknown as CommandModule).has(flag) ? `--${flag}` : undefined;
}

export function asFlagMessage(e: ConfigError): string {
  const flag = e.setting && flagOfSetting(e.setting);
  return flag && e.message.startsWith(e.setting!) ? flag + e.message.slice(e.setting!.length) : e.message;
}

export function readKey(value: string): string {
  if (!value.startsWith("@")) return value;
  try {
    return readFileSync(value.slice(1), "utf8");
  } catch (e) {
    return usage(`--signing-key ${value}: cannot read the file (${(e as NodeJS.ErrnoException).code ?? "error"})`);
  }
}

/** A bad value stops the start: one line naming it as the user gave it (the flag, or its variable), exit 2. */
export function usage(message: string): never {
  const given = { args: hideBin(process.argv), command: "serve", aliases: optionAliases(SERVE_COMMAND as unknown as CommandModule) };
  process.stderr.write(`merchant-sandbox: ${inGivenTerms(message, given, process.env)}\n${helpLine("serve")}\n`);
  process.exit(2);
}
