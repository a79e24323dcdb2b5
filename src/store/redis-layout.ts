/**
 * Where the Redis store keeps what, and under which layout version: every key name is made here.
 * Every key carries the hash tag `{sb}`, so one script can touch all of them on a Redis Cluster too
 * (they share a slot). The layout key sits outside the versioned names, so a replica of any version
 * can read it and refuse a store written in a layout it does not know, rather than misread it.
 */

/** The layout this code reads and writes; a change to what a key holds makes it the next one. */
export const LAYOUT_VERSION = "3";

export const DEFAULT_PREFIX = "msb:";

export function keyNames(prefix: string) {
  const base = `${prefix}{sb}:`;
  const versioned = `${base}v${LAYOUT_VERSION}:`;
  return {
    /** The layout version the store was written in. */
    layout: `${base}layout`,
    /** Made when the store is first written, and anew after Redis lost its data or a reseed: cursors of another epoch sync in full. */
    epoch: `${versioned}epoch`,
    /** The epoch in which the stored state was first seeded; a reseed keeps it (see reseed-14.lua). */
    lineage: `${versioned}lineage`,
    /** Where the stored state came from: "<epoch>:<position>" newest first, comma-separated (see reseed-14.lua). */
    ancestry: `${versioned}ancestry`,
    /** When the stored state was written back from a replica's (Redis's clock, ms); absent when seeded fresh. */
    reseededAt: `${versioned}reseeded-at`,
    /** Hash: part name → JSON. */
    parts: `${versioned}parts`,
    /** Hash: part name → version. */
    versions: `${versioned}versions`,
    /** Stream: one entry per commit that changed something, with ids `<n>-0` numbered by changeSeq. */
    changes: `${versioned}changes`,
    changeSeq: `${versioned}changes:n`,
    /** Hash: kid → key JSON; keyOrder lists the kids oldest first. */
    keys: `${versioned}keys`,
    keyOrder: `${versioned}keys:order`,
    /** Stream: journal records, with ids `<seq>-0`. */
    journal: `${versioned}journal`,
    journalSeq: `${versioned}journal:seq`,
    /** Stream: journal records and events, in commit order. */
    feed: `${versioned}feed`,
    /** Sorted set: a live session's part name → its last use (wall-clock ms). */
    live: `${versioned}live`,
    /** With a commit id after it: that commit's outcome (its journal number, or "void"), kept for a while. */
    outcomePrefix: `${versioned}outcome:`,
  };
}

export type KeyName = keyof ReturnType<typeof keyNames>;

export function checkPrefix(prefix: string): string {
  if (typeof prefix !== "string" || !/^[A-Za-z0-9:._-]{1,64}$/.test(prefix)) {
    throw new TypeError(
      `The Redis key prefix ${JSON.stringify(prefix)} is not usable: give 1 to 64 letters, digits or ":._-" (default ${JSON.stringify(DEFAULT_PREFIX)}); braces would change the keys' hash tag.`,
    );
  }
  return prefix;
}
