import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";
import { hideBin } from "yargs/helpers";
import type { Finding } from "../../control/findings/finding.js";
import { inGivenTerms } from "../given-values.js";

/**
 * `merchant-sandbox report --url URL [--session ID] [--merchant ID]`: the integration report of a
 * running sandbox, as a table, and a CI gate: exit 1 when any finding is an error, 0 otherwise, 2 for
 * a usage error or a sandbox that cannot be reached or refuses the request.
 */

interface ReportArgs {
  url: string;
  session?: string;
  merchant?: string;
  adminToken?: string;
  json: boolean;
}

export const EXIT_FINDINGS = 1;
export const EXIT_TROUBLE = 2;

export const reportCommand: CommandModule<object, ReportArgs> = {
  command: "report",
  describe: "Print what the integration did wrong, from a running sandbox's journal; exit 1 on any error (a CI gate)",
  builder: (y: Argv) =>
    y
      .option("url", { type: "string", demandOption: true, describe: "The sandbox's base URL, e.g. http://localhost:4010" })
      .option("session", { type: "string", describe: "Only this session's requests (POST /__sandbox/sessions gave its id)" })
      .option("merchant", { type: "string", describe: "Only this merchant's requests (its id, the tokens' sub)" })
      .option("admin-token", { type: "string", describe: "The sandbox's --admin-token, if it was started with one" })
      .option("json", { type: "boolean", default: false, describe: "Print the report as JSON" })
      .example("$0 report --url http://localhost:4010", "every request the sandbox has seen")
      .example(
        "$0 report --url http://localhost:4010 --session $SESSION_ID",
        "one session: the CI gate of one test run",
      ) as unknown as Argv<ReportArgs>,
  handler: async (args: ArgumentsCamelCase<ReportArgs>) => {
    await guarded("report", async () => {
      const base = baseUrl(args.url);
      const path =
        args.session !== undefined && args.merchant === undefined
          ? `/__sandbox/sessions/${encodeURIComponent(args.session)}/report`
          : `/__sandbox/report${query({ session: args.session, merchant: args.merchant })}`;
      // An unknown session is an error (404, exit 2) however the report is asked for.
      if (args.session !== undefined && args.merchant !== undefined) {
        await controlRequest(base, "GET", `/__sandbox/sessions/${encodeURIComponent(args.session)}`, args.adminToken);
      }
      const body = await controlRequest(base, "GET", path, args.adminToken);
      if (args.merchant !== undefined) {
        // A mistyped merchant id would pass the gate on an empty report: say so.
        const seen = (await controlRequest(
          base,
          "GET",
          `/__sandbox/requests${query({ session: args.session, merchant: args.merchant, limit: "1" })}`,
          args.adminToken,
        )) as { requests?: unknown[] };
        if (Array.isArray(seen.requests) && seen.requests.length === 0) {
          process.stderr.write(
            `merchant-sandbox: note: the journal holds no request of merchant '${args.merchant}'${args.session !== undefined ? ` in session ${args.session}` : ""}; is the merchant id right?\n`,
          );
        }
      }
      const findings = (body as { findings?: unknown } | null)?.findings;
      if (!Array.isArray(findings) || !findings.every(isFinding)) {
        throw new CliTrouble(`GET ${base}${path} did not answer a report (no "findings" list); is ${base} a merchant-sandbox?`);
      }
      const scope = [args.session !== undefined && `session ${args.session}`, args.merchant !== undefined && `merchant ${args.merchant}`]
        .filter(Boolean)
        .join(", ");
      process.stdout.write(args.json ? JSON.stringify(body, null, 2) + "\n" : formatReport(findings, `${base} (${scope || "all requests"})`));
      process.exitCode = findings.some((f) => f.severity === "error") ? EXIT_FINDINGS : 0;
    });
  },
};

function isFinding(f: unknown): f is Finding {
  const x = f as Finding;
  return (
    typeof x === "object" &&
    x !== null &&
    typeof x.code === "string" &&
    typeof x.message === "string" &&
    ["error", "warning", "info"].includes(x.severity) &&
    Array.isArray(x.evidence)
  );
}

/** The findings as a table sized to the terminal (100 columns when not a terminal), and a verdict. */
export function formatReport(findings: readonly Finding[], scope: string, width = process.stdout.columns || 100): string {
  if (findings.length === 0) return `No findings: the integration behaved.\n`;
  const shownEvidence = findings.map((f) => evidenceText(f.evidence));
  const head = ["SEVERITY", "CODE", "MESSAGE", "EVIDENCE"];
  const sevWidth = Math.max(head[0]!.length, ...findings.map((f) => f.severity.length));
  const codeWidth = Math.max(head[1]!.length, ...findings.map((f) => f.code.length));
  const evWidth = Math.min(26, Math.max(head[3]!.length, ...shownEvidence.map((e) => e.length)));
  const msgWidth = Math.max(30, width - sevWidth - codeWidth - evWidth - 3 * 2 - 1);
  const lines = [`Integration report for ${scope}`, ""];
  const row = (cells: string[]) => {
    const [sev, code, msg, ev] = cells as [string, string, string, string];
    return `${sev.padEnd(sevWidth)}  ${code.padEnd(codeWidth)}  ${msg.padEnd(msgWidth)}  ${ev}`.trimEnd();
  };
  lines.push(row(head), row(["-".repeat(sevWidth), "-".repeat(codeWidth), "-".repeat(msgWidth), "-".repeat(evWidth)]));
  findings.forEach((f, i) => {
    const msg = wrap(f.message, msgWidth, " ");
    const ev = wrap(shownEvidence[i]!, evWidth, ", ", ",");
    for (let k = 0; k < Math.max(msg.length, ev.length); k++) {
      lines.push(row([k === 0 ? f.severity : "", k === 0 ? f.code : "", msg[k] ?? "", ev[k] ?? ""]));
    }
    lines.push("");
  });
  const count = (s: Finding["severity"]) => findings.filter((f) => f.severity === s).length;
  const errors = count("error");
  const tally = `${plural(errors, "error")}, ${plural(count("warning"), "warning")}, ${count("info")} info`;
  lines.push(
    errors > 0
      ? `${tally}: the gate fails. Fix the errors; the evidence ids are requests in GET /__sandbox/requests.`
      : `${tally}: the gate passes (only errors fail it).`,
  );
  return lines.join("\n") + "\n";
}

function evidenceText(ids: readonly string[]): string {
  const shown = ids.slice(0, 6).map(String);
  return ids.length > shown.length ? `${shown.join(", ")} +${ids.length - shown.length} more` : shown.join(", ") || "-";
}

/** Words of `text` in lines of at most `width` (a word longer than that gets a line of its own). */
function wrap(text: string, width: number, separator: string, keepAtEnd = ""): string[] {
  const words = text.split(separator);
  const out: string[] = [];
  let current = "";
  words.forEach((word, i) => {
    const piece = i < words.length - 1 ? word + keepAtEnd : word;
    const joined = current === "" ? piece : current + (keepAtEnd ? " " : separator) + piece;
    if (current !== "" && joined.length > width) {
      out.push(current);
      current = piece;
    } else current = joined;
  });
  if (current !== "") out.push(current);
  return out;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function query(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : "";
}

/* ---- Talking to a sandbox's control plane (shared with scan-logs) ---- */

/** A reason to stop with exit code 2 and one line on stderr. */
export class CliTrouble extends Error {}

/** Runs a command body; a CliTrouble becomes its one-line message and exit code 2. */
export async function guarded(command: string, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (e) {
    troubleLine(command, e);
  }
}

/**
 * A CliTrouble as its one line and exit code 2, naming --url as the user gave it (MERCHANT_SANDBOX_URL
 * when it came from there); anything else is thrown on.
 */
export function troubleLine(command: string, e: unknown): void {
  if (!(e instanceof CliTrouble)) throw e;
  process.stderr.write(`merchant-sandbox: ${inGivenTerms(e.message, { args: hideBin(process.argv), command }, process.env)}\n`);
  process.exitCode = EXIT_TROUBLE;
}

/** --url as a base URL without a trailing slash; anything but http(s) is a usage error. */
export function baseUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CliTrouble(`--url '${url.slice(0, 200)}' is not a URL; give the sandbox's base URL, e.g. http://localhost:4010`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new CliTrouble(`--url must be an http:// or https:// URL, e.g. http://localhost:4010 (got '${parsed.protocol}')`);
  }
  return parsed.href.replace(/\/+$/, "");
}

const TIMEOUT_MS = 30_000;

/**
 * One control-plane call; resolves with the parsed JSON answer of a 2xx. Anything else (no answer,
 * a refusal, not JSON) is a CliTrouble that says what happened in one line.
 */
export async function controlRequest(
  base: string,
  method: "GET" | "POST",
  path: string,
  adminToken: string | undefined,
  body?: unknown,
): Promise<unknown> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (adminToken) headers.authorization = `Bearer ${adminToken}`;
  // The control plane refuses a POST not declared as JSON, even an empty one (it keeps web pages out).
  if (body !== undefined || method === "POST") headers["content-type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(base + path, {
      method,
      headers,
      ...(body !== undefined && { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (e) {
    const err = e as Error & { cause?: { code?: string; message?: string } };
    const why = err.name === "TimeoutError" ? `no answer within ${TIMEOUT_MS / 1000} s` : (err.cause?.code ?? err.cause?.message ?? err.message);
    throw new CliTrouble(
      `cannot reach the sandbox at ${base} (${why}); is it running? Check --url, or start it with 'merchant-sandbox serve' or 'docker run -p 4010:4010 merchant-sandbox'.`,
    );
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    const detail = (json as { detail?: unknown } | undefined)?.detail;
    const said = typeof detail === "string" ? detail : `${res.statusText || "no details"}; is ${base} a merchant-sandbox?`;
    const hint = res.status === 401 && !adminToken ? " Pass it with --admin-token." : "";
    throw new CliTrouble(`${method} ${path} answered ${res.status}: ${said}${hint}`);
  }
  if (json === undefined) throw new CliTrouble(`${method} ${base}${path} did not answer JSON; is ${base} a merchant-sandbox?`);
  return json;
}
