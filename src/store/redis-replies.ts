import { StateUnavailable } from "../core/errors.js";
import type { CommitRequest, CommitResult, FeedEntry, Reseed, ReseedResult, SettleResult, StateChanges, StoredPart } from "../core/state-store.js";
import { RESET_EVENT } from "./op-checks.js";
import type { ResolvedLimits } from "./store-limits.js";

/**
 * The Redis store's arguments to its scripts and readings of their answers (lua/*.lua, each its header, say
 * the shapes): kept apart from the connection handling so each side reads on its own.
 */

type Flat = ReadonlyArray<string | number | null>;

/** Reads the sync script's flat answer. Parts and removed names come sorted by name, as the memory store gives them. */
export function readSyncAnswer(answer: unknown): StateChanges {
  const flat = answer as Flat;
  const next = reader(flat, 0);
  const full = next() === 1;
  const cursor = String(next());
  const epoch = String(next());
  const lineage = String(next());
  const position = Number(next());
  const ancestry = String(next());
  const ago = Number(next());
  return {
    cursor,
    epoch,
    lineage: lineage === "" ? undefined : lineage,
    position,
    ancestry: ancestry === "" ? [] : ancestry.split(","),
    reseededMsAgo: ago < 0 ? undefined : ago,
    full,
    ...readChangeLists(next),
  };
}

/** The counted lists a sync or a commit answers with (parts, removed names, records, keys), the parts and names sorted. */
function readChangeLists(next: () => string | number | null | undefined): Pick<StateChanges, "parts" | "removed" | "records" | "keys"> {
  const parts: StoredPart[] = [];
  const partCount = Number(next());
  for (let p = 0; p < partCount; p++) {
    const name = String(next());
    const version = Number(next());
    parts.push({ name, version, json: String(next()) });
  }
  const list = () => {
    const n = Number(next());
    const out: string[] = [];
    for (let k = 0; k < n; k++) out.push(String(next()));
    return out;
  };
  const removed = list();
  const records = list();
  const keys = list();
  parts.sort((a, b) => byText(a.name, b.name));
  removed.sort(byText);
  return { parts, removed, records, keys };
}

function reader(flat: Flat, from: number): () => string | number | null | undefined {
  let i = from;
  return () => flat[i++];
}

/** The commit script's arguments after the layout version, for `requests` committed in one call (commit-13.lua's header). */
export function commitArgs(requests: readonly CommitRequest[], limits: ResolvedLimits, outcomeMs: number): string[] {
  const args = [
    String(outcomeMs),
    String(limits.changeLogSize),
    String(limits.journalSize),
    String(limits.feedSize),
    String(limits.keysSize),
    RESET_EVENT,
    String(requests.length),
  ];
  for (const request of requests) {
    const own = oneCommitArgs(request);
    args.push(String(own.length));
    for (const arg of own) args.push(arg);
  }
  return args;
}

/** One commit's arguments, numbered in commit-13.lua's header from 1. */
function oneCommitArgs(request: CommitRequest): string[] {
  const { basis } = request;
  const args = [
    request.id,
    request.epoch,
    String(request.deadlineMs),
    request.touch?.part ?? "",
    request.touch ? String(request.touch.atMs) : "0",
    request.admit?.part ?? "",
    request.admit ? String(request.admit.max) : "0",
    request.clearParts ? "2" : request.clearLogs ? "1" : "0",
    request.journal !== undefined ? "1" : "0",
    request.journal ?? "",
    basis?.cursor ?? "",
    basis?.origin ?? "",
    basis?.privatePrefix ?? "",
    basis?.recordsRead ? "1" : "0",
  ];
  const own = basis?.ownParts ?? [];
  args.push(String(own.length), ...own);
  const reads = Object.entries(request.read);
  args.push(String(reads.length));
  for (const [name, version] of reads) args.push(name, String(version));
  args.push(String(request.writes.length));
  for (const write of request.writes) args.push(write.name, write.json === undefined ? "d" : "w", write.json ?? "");
  args.push(String(request.records.length), ...request.records);
  args.push(String(request.keys.length));
  for (const key of request.keys) args.push(key.kid, key.json);
  args.push(String(request.events.length), ...request.events);
  return args;
}

/** The reseed script's arguments after the layout version (reseed-14.lua's header). */
export function reseedArgs(state: Reseed, limits: ResolvedLimits): string[] {
  const args = [
    state.lineage,
    state.fromEpoch,
    String(state.position),
    String(state.journalSeq),
    String(limits.keysSize),
    String(limits.journalSize),
  ];
  args.push(String(state.parts.length));
  for (const part of state.parts) args.push(part.name, part.json);
  args.push(String(state.keys.length));
  for (const key of state.keys) args.push(key.kid, key.json);
  args.push(String(state.journal.length));
  for (const entry of state.journal) args.push(String(entry.seq), entry.json);
  args.push(String(state.live.length));
  for (const live of state.live) args.push(live.part, String(live.atMs));
  args.push(String(state.ancestry.length), ...state.ancestry);
  return args;
}

export function readReseedAnswer(answer: unknown): ReseedResult {
  const [ok, cursor, epoch] = answer as [number, string?, string?];
  return ok === 1 ? { ok: true, cursor: String(cursor), epoch: String(epoch) } : { ok: false };
}

export function readSettleAnswer(answer: unknown): SettleResult {
  const [applied, seq, position] = answer as [number, number?, number?];
  return applied === 1 ? { applied: true, seq: Number(seq) === 0 ? undefined : Number(seq), position: Number(position ?? 0) } : { applied: false };
}

/** Reads the commit script's answer to `requests`, one result each, in order. */
export function readCommitAnswers(answer: unknown, requests: readonly CommitRequest[]): CommitResult[] {
  const flat = answer as Flat;
  const results: CommitResult[] = [];
  let at = 0;
  for (const request of requests) {
    const size = Number(flat[at]);
    if (!Number.isSafeInteger(size) || size < 2 || at + 1 + size > flat.length) {
      // Not a refusal: the script ran, so each commit may have applied and is settled (commitKnown).
      throw new StateUnavailable(
        `The commit script answered ${flat.length} items, which do not hold an answer for each of the ${requests.length} commits sent.`,
      );
    }
    results.push(readCommitAnswer(flat.slice(at + 1, at + 1 + size), request));
    at += 1 + size;
  }
  return results;
}

/** One commit's answer (its epoch is the store's when it was not refused as of another). */
function readCommitAnswer(flat: Flat, request: CommitRequest): CommitResult {
  const [applied, detail, third] = flat as [number, number | string, number?];
  if (applied === 1) {
    const seq = Number(detail) === 0 ? undefined : Number(detail);
    const position = Number(third ?? 0);
    if (!request.basis) return { ok: true, seq, position };
    const changes = { cursor: `${request.epoch}:${position}`, position, ...readChangeLists(reader(flat, 3)) };
    return { ok: true, seq, position, changes };
  }
  if (detail === "stale") {
    if (third !== 1) return { ok: false, reason: "stale", changes: undefined };
    // Refused: the changes bring the replica to where the store stood, before any commit that comes after.
    const position = Number(flat[3]);
    return { ok: false, reason: "stale", changes: { cursor: `${request.epoch}:${position}`, position, ...readChangeLists(reader(flat, 4)) } };
  }
  if (detail === "late" || detail === "conflict" || detail === "full") return { ok: false, reason: detail };
  throw new StateUnavailable(
    `The commit script answered ${JSON.stringify(detail)} for a commit, which is neither applied, late, a conflict, stale nor full.`,
  );
}

type StreamEntry = [id: string, fields: string[]];

export function readFeedEntries(entries: unknown): FeedEntry[] {
  return ((entries as StreamEntry[] | null) ?? []).map(([id, fields]) => {
    const seq = field(fields, "s");
    return { id, seq: seq === undefined ? undefined : Number(seq), json: field(fields, "j") ?? "" };
  });
}

export function readJournal(entries: unknown): Array<{ seq: number; json: string }> {
  return ((entries as StreamEntry[] | null) ?? []).map(([id, fields]) => ({ seq: Number(id.split("-")[0]), json: field(fields, "j") ?? "" }));
}

/** XREAD's answer for one stream: its entries, none when it timed out. */
export function readXread(answer: unknown): FeedEntry[] {
  const streams = answer as Array<[key: string, entries: StreamEntry[]]> | null;
  return readFeedEntries(streams?.[0]?.[1] ?? []);
}

function field(fields: string[], name: string): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}

function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
