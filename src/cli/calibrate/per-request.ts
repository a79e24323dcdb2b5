import { idShapeOf } from "../../profiles/companion-token.js";
import { REQUEST_ID_PATTERNS, REQUEST_ID_SHAPES, type RequestIdShape } from "../../profiles/request-id.js";
import { parseOlderForm, TIME_FORMATS, TIME_PATTERNS, type TimeFormat } from "../../profiles/time-value.js";
import { keyOf, leaves, pathText } from "./json-paths.js";
import type { Answer, Observation } from "./observations.js";

/**
 * Per-request values: what differs between two identical probes (a request id, a timestamp), and
 * the placeholder that fits each one's shape. Pure.
 */

/** How far a timestamp may be from the moment it stands for and still be read as it (clock skew, rounding). */
export const TIME_TOLERANCE_S = 120;

export interface Varying {
  /** Lower-case header names whose values differed between the two answers of a repeated probe. */
  headers: ReadonlySet<string>;
  /** Body member names (the last key of the path) whose values differed. */
  keys: ReadonlySet<string>;
  /** Headers whose whole values were integers that moved: a gateway's counter, and which way it moved. */
  counters: ReadonlyMap<string, "down" | "up">;
}

/** What differed between each repeated probe's two answers (the JWTs, which always differ, aside). */
export function varyingBetween(first: readonly Observation[], repeats: readonly Observation[], isToken: (v: unknown) => boolean): Varying {
  const headers = new Set<string>();
  const keys = new Set<string>();
  const counters = new Map<string, "down" | "up">();
  const votes = new Map<string, number>();
  for (const again of repeats) {
    const before = first.find((o) => o.probe === again.probe);
    if (!before) continue;
    for (const [name, value] of Object.entries(again.answer.headers)) {
      const was = before.answer.headers[name];
      if (was === undefined || was === value) continue;
      headers.add(name);
      // Each pair votes by the way it moved; a step of one or two (identical calls in a row) twice over
      // a jump (a recording's repeats lie further apart; a counter that wrapped jumps the wrong way).
      const step = /^\d{1,15}$/.test(was) && /^\d{1,15}$/.test(value) ? Number(value) - Number(was) : 0;
      if (step !== 0) votes.set(name, (votes.get(name) ?? 0) + Math.sign(step) * (Math.abs(step) <= 2 ? 2 : 1));
    }
    const was = new Map(leaves(before.answer.json).map((l) => [pathText(l.path), l.value]));
    for (const { path, value } of leaves(again.answer.json)) {
      const old = was.get(pathText(path));
      if (old !== undefined && JSON.stringify(old) !== JSON.stringify(value) && !isToken(value)) keys.add(keyOf(path));
    }
  }
  for (const [name, vote] of votes) if (vote !== 0) counters.set(name, vote < 0 ? "down" : "up");
  return { headers, keys, counters };
}

/** Limits a counter with no limit header beside it is read against: the first above its value. */
const ROUND_LIMITS = [10, 60, 100, 600, 1000, 3600, 5000, 10_000, 100_000, 1_000_000];

/**
 * The placeholder of a counting header: `{{count_up}}`, or `{{count_down:N}}` where N is the limit
 * the provider states beside it (`X-RateLimit-Limit` for `X-RateLimit-Remaining`), else the first
 * round limit above the value seen (a limit, not the value, so that --check compares it by kind).
 */
export function counterPlaceholder(name: string, direction: "down" | "up", headers: Readonly<Record<string, string>>): string {
  if (direction === "up") return "{{count_up}}";
  const stated = headers[name.replace(/remaining/i, "limit")];
  if (stated !== undefined && /remaining/i.test(name) && /^\d{1,10}$/.test(stated) && Number(stated) >= 1) return `{{count_down:${Number(stated)}}}`;
  const value = Number(headers[name] ?? 0);
  return `{{count_down:${ROUND_LIMITS.find((limit) => limit > value) ?? 1_000_000_000}}}`;
}

/** The formats a time takes as text (unix and unix-ms are numbers), each with its pattern anchored. */
const TEXT_TIME_FORMATS = TIME_FORMATS.filter((format) => !format.startsWith("unix"));
const TIME_SHAPES: ReadonlyArray<[TimeFormat, RegExp]> = TEXT_TIME_FORMATS.map((format) => [format, new RegExp(`^${TIME_PATTERNS[format]}$`, "u")]);
/**
 * Any of them inside a longer text, and a Unix time in seconds (ten digits, maybe a fraction),
 * which only a moment it is near turns into a placeholder (timesInText).
 */
const UNIX_IN_TEXT = "(?<![\\d.])\\d{10}(?:\\.\\d{1,9})?(?![\\d.])";
const TIME_IN_TEXT = new RegExp([...TEXT_TIME_FORMATS.map((format) => TIME_PATTERNS[format]), UNIX_IN_TEXT].join("|"), "gu");

/** The format of a time written as text, and the time in seconds; undefined for anything else. */
export function readTime(value: string): { format: TimeFormat; seconds: number } | undefined {
  for (const [format, shape] of TIME_SHAPES) {
    if (!shape.test(value)) continue;
    const seconds = parseOlderForm(format, value) ?? Date.parse(value) / 1000;
    return Number.isNaN(seconds) ? undefined : { format, seconds };
  }
  return undefined;
}

/** A number that is a Unix time near `seconds`: in seconds, milliseconds, or seconds with a fraction. */
export function readUnix(value: number, seconds: number): "unix" | "unix-ms" | "unix-fraction" | undefined {
  if (Math.abs(value - seconds) <= TIME_TOLERANCE_S) return Number.isInteger(value) ? "unix" : "unix-fraction";
  if (Math.abs(value / 1000 - seconds) <= TIME_TOLERANCE_S) return "unix-ms";
  return undefined;
}

/**
 * A value that is per request by its very shape, seen once or twice: a W3C traceparent (a trace
 * is never a constant), which a refusal calibrate sends once may carry.
 */
export function perRequestByShape(value: unknown): PerRequest | undefined {
  return typeof value === "string" && requestIdShape(value) === "traceparent"
    ? { placeholder: "{{request_id}}", requestId: "traceparent" }
    : undefined;
}

/** The request-id shape a value has (REQUEST_ID_PATTERNS, case-insensitive for hex), if any. */
export function requestIdShape(value: string): RequestIdShape | undefined {
  return REQUEST_ID_SHAPES.find((shape) => new RegExp(REQUEST_ID_PATTERNS[shape], shape === "alnum16" || shape === "ulid" ? "" : "i").test(value));
}

export interface PerRequest {
  placeholder: string;
  requestId?: RequestIdShape;
}

/**
 * The placeholder for a value that varies per request, by its shape: a time near `nowS` is
 * {{now:<format>}}, a request id {{request_id}}; undefined when the shape is not one the sandbox
 * can make (the value then stays a constant, and the table says so).
 */
export function perRequestPlaceholder(value: unknown, nowS: number): PerRequest | undefined {
  if (typeof value === "number") {
    const unix = readUnix(value, nowS);
    return unix && { placeholder: `{{now:${unix}}}` };
  }
  if (typeof value !== "string") return undefined;
  const time = readTime(value);
  if (time) return { placeholder: `{{now:${time.format}}}` };
  const shape = requestIdShape(value);
  return shape ? { placeholder: "{{request_id}}", requestId: shape } : madeId(value);
}

/**
 * An id that varied in no whole shape of REQUEST_ID_SHAPES: a short prefix kept (`req_`, `acme_`)
 * and the rest a request id of a known shape, or `{{fresh:<alphabet>-<length>}}`. Only a run of 8
 * to 512 id characters with a digit in it is read so: a word that changed (a status) is not an id.
 */
export function madeId(value: string): PerRequest | undefined {
  const id = idShapeOf(value);
  if (!id || !/\d/.test(id.body)) return undefined;
  const shape = id.prefix === "" ? undefined : requestIdShape(id.body);
  if (shape) return { placeholder: `${id.prefix}{{request_id}}`, requestId: shape };
  return { placeholder: `${id.prefix}{{fresh:${id.shape}}}` };
}

/** A time near now, whether or not it varied (two calls in one second print the same time). */
export function nowPlaceholder(value: unknown, nowS: number): string | undefined {
  if (typeof value === "string") {
    const t = readTime(value);
    return t && Math.abs(t.seconds - nowS) <= TIME_TOLERANCE_S ? `{{now:${t.format}}}` : undefined;
  }
  return undefined;
}

/**
 * The times inside a text (a message such as "Jwt expired at 2026-11-27T21:00:00Z") turned into
 * the placeholder of the moment each stands for, in its format.
 */
export function timesInText(text: string, moments: ReadonlyArray<{ name: string; seconds: number | undefined }>): string {
  return text.replace(TIME_IN_TEXT, (found) => {
    const t = readTime(found) ?? readUnixText(found);
    if (!t) return found;
    const moment = moments.find((m) => m.seconds !== undefined && Math.abs(t.seconds - m.seconds) <= TIME_TOLERANCE_S);
    return moment ? `{{${moment.name}:${t.format}}}` : found;
  });
}

/** Ten digits of Unix seconds inside a text, with or without a fraction. */
function readUnixText(text: string): { format: TimeFormat; seconds: number } | undefined {
  if (!/^\d{10}(\.\d+)?$/.test(text)) return undefined;
  return { format: text.includes(".") ? "unix-fraction" : "unix", seconds: Number(text) };
}

/** Whether an answer carries no body at all. */
export function isEmpty(answer: Answer): boolean {
  return answer.empty === true || (answer.json === undefined && !answer.notJson);
}
