import { writeFile } from "node:fs/promises";
import YAML from "yaml";
import { loadProfileFile, parseProfileText } from "../../profiles/load.js";
import { compareProfiles, type Difference } from "./compare.js";
import { CannotInfer, type CalibratedProfile, type CalibrationLine, inferProfile, isJwt } from "./infer.js";
import type { Observation, Observations } from "./observations.js";
import { DEFAULT_MAX_ANSWER_BYTES, type ProbeOptions, type ProbeResult, ProviderUnreachable, probeProvider } from "./probe.js";
import { HarUnusable, readHarFile } from "./har-read.js";
import { observationsFromHar } from "./har-classify.js";
import { type Scrubber, scrubber, scrubJson } from "./scrub.js";

/**
 * `calibrate` from flags to exit code: probe the provider, infer the profile, then write it (and
 * print the table) or, with --check, compare it with the file. Exit 0 done / no difference, 1 the
 * provider answers otherwise than the profile says (or cannot be learnt), 2 it cannot be reached.
 * Nothing printed or written may hold a secret, in any encoding: what the provider answered is
 * scrubbed before anything is inferred from it, and every text again before it is written or printed
 * (scrub.ts), with every secret calibrate was given or received.
 */

export const EXIT_DIFFERENT = 1;
export const EXIT_UNREACHABLE = 2;

export interface CalibrateOptions extends ProbeOptions {
  name: string;
  out?: string | undefined;
  check?: string | undefined;
  /** A HAR recording to learn from instead of probing (--from-har). */
  fromHar?: string | undefined;
}

/** What the observations came from, and how the table's last line says so. */
interface Gathered extends ProbeResult {
  /** `24 requests sent`, `31 exchanges of run.har read, 12 used`. */
  counted: string;
  /** `provider-test.example`, `the recording run.har of provider-test.example`. */
  from: string;
}

/** Probe the provider, or read a recording of it. */
async function gather(o: CalibrateOptions): Promise<Gathered> {
  if (o.fromHar === undefined) {
    const probed = await probeProvider(o);
    return { ...probed, counted: `${probed.sent} requests sent`, from: hostOf(o.url) };
  }
  const reading = observationsFromHar(readHarFile(o.fromHar, o.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES), o.fromHar);
  const given = [o.apiSecret, o.paymentToken, o.login?.password].filter((s): s is string => !!s);
  return {
    observations: reading.observations,
    secrets: [...given, ...reading.secrets],
    sent: 0,
    counted: `${reading.read} exchanges of ${o.fromHar} read, ${reading.used} used`,
    from: `the recording ${o.fromHar} of ${hostOf(reading.observations.url)}`,
  };
}

export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
}

export async function runCalibrate(o: CalibrateOptions, io: Io): Promise<number> {
  let secrets = scrubber([o.apiSecret, o.paymentToken, o.login?.password, o.expiredToken, o.revokedToken].filter((s): s is string => !!s));
  const clean = (text: string) => secrets.scrub(text);
  let stored: unknown;
  if (o.check !== undefined) {
    try {
      stored = loadProfileFile(o.check);
    } catch (e) {
      io.err(clean(`merchant-sandbox: the profile to check cannot be used:\n${(e as Error).message}\n`));
      return EXIT_UNREACHABLE;
    }
  }
  try {
    const probed = await gather(o);
    secrets = scrubber(probed.secrets);
    const observations = scrubObservations(probed.observations, secrets);
    const day = new Date(probed.observations.startedAt).toISOString().slice(0, 10);
    const { profile, lines } = inferProfile(
      observations,
      o.name,
      o.fromHar === undefined ? `${probed.from}'s test environment, calibrated ${day}` : `${probed.from}, recorded ${day}`,
    );
    const safe = scrubJson(profile, secrets) as CalibratedProfile;
    if (o.check !== undefined) {
      const differences = compareProfiles(stored, safe, observations);
      io.out(clean(differencesTable(differences, o.check, probed.counted)));
      return differences.length === 0 ? 0 : EXIT_DIFFERENT;
    }
    const text = profileText(safe, lines, o.fromHar === undefined ? `against ${probed.from}` : `from ${probed.from}`);
    if (secrets.finds(text)) throw new Error("a secret survived scrubbing; nothing was written");
    // What calibrate writes, `serve --profile` must load: checked by the same loader before writing.
    parseProfileText(text, o.out);
    await writeFile(o.out!, text);
    io.out(clean(linesTable(lines) + `\nWrote ${o.out} (${probed.counted}). Try it: merchant-sandbox serve --profile ${o.out}\n`));
    return 0;
  } catch (e) {
    if (e instanceof ProviderUnreachable || e instanceof HarUnusable) {
      io.err(clean(`merchant-sandbox: ${e.message}\n`));
      return EXIT_UNREACHABLE;
    }
    if (e instanceof CannotInfer) {
      io.err(clean(`merchant-sandbox: ${e.message}\n`));
      return EXIT_DIFFERENT;
    }
    io.err(clean(`merchant-sandbox: calibrate failed: ${(e as Error).message}\n`));
    return EXIT_UNREACHABLE;
  }
}

/**
 * The answers with every secret taken out, before anything is inferred from them. JWTs stay whole:
 * the inference must see the issued token to put {{access_token}} in its place, and a JWT is never
 * copied into a profile (the scrub of the profile catches one that would be).
 */
function scrubObservations(obs: Observations, s: Scrubber): Observations {
  const clean = (list: Observation[]) =>
    list.map((o) => ({
      ...o,
      answer: {
        ...o.answer,
        headers: scrubJson(o.answer.headers, s) as Record<string, string>,
        json: scrubJson(o.answer.json, s, isJwt),
        ...(o.answer.text !== undefined && { text: s.scrub(o.answer.text) }),
      },
    }));
  return { ...obs, observed: clean(obs.observed), repeats: clean(obs.repeats ?? []) };
}

function profileText(profile: CalibratedProfile, lines: CalibrationLine[], from: string): string {
  const inferred = lines.filter((f) => f.inferred !== undefined).map((f) => `#   - ${f.probe}: ${f.inferred}`);
  const head = [
    `# Written by merchant-sandbox calibrate ${from}; check it nightly with`,
    "#   merchant-sandbox calibrate --check <this file> --url ... --api-key ... --api-secret ...",
    ...(inferred.length > 0 ? ["# Inferred rather than observed:", ...inferred] : []),
  ];
  return `${head.join("\n")}\n${YAML.stringify(profile, { lineWidth: 0 })}`;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

export function linesTable(lines: readonly CalibrationLine[]): string {
  const rows = lines.map((f) => [f.probe, f.cameBack, f.profileSays, f.inferred ? `inferred: ${f.inferred}` : "observed"]);
  return table(["PROBE", "CAME BACK", "PROFILE NOW SAYS", "HOW"], rows);
}

function differencesTable(differences: readonly Difference[], file: string, counted: string): string {
  if (differences.length === 0) return `The provider still answers as ${file} says (${counted}).\n`;
  return (
    table(
      ["WHERE", "PROFILE SAYS", "PROVIDER NOW ANSWERS"],
      differences.map((d) => [d.where, d.profile, d.provider]),
    ) +
    `\n${differences.length} difference${differences.length === 1 ? "" : "s"}: recalibrate with merchant-sandbox calibrate --out ${file}, or tell the provider.\n`
  );
}

/** Columns of at most COLUMN characters; a longer cell goes on over several lines, broken at spaces. */
function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.min(COLUMN, Math.max(h.length, ...rows.map((r) => r[i]!.length))));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  const out = [line(head), line(widths.map((w) => "-".repeat(w)))];
  for (const row of rows) {
    const wrapped = row.map((cell, i) => wrap(cell, i === row.length - 1 ? COLUMN * 2 : widths[i]!));
    const height = Math.max(...wrapped.map((w) => w.length));
    for (let k = 0; k < height; k++) out.push(line(wrapped.map((w) => w[k] ?? "")));
  }
  return out.join("\n") + "\n";
}

const COLUMN = 48;

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let rest = text;
  while (rest.length > width) {
    const cut = rest.lastIndexOf(" ", width);
    const at = cut > width / 3 ? cut : width;
    lines.push(rest.slice(0, at).trimEnd());
    rest = rest.slice(at).trimStart();
  }
  lines.push(rest);
  return lines;
}
