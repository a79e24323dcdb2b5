/**
 * The sandbox clock: the only source of "now" for issuing and verifying tokens. It runs with its
 * base clock plus an offset, or stands frozen at one instant. The base is the system clock, read
 * with `Date.now()` on every call (so in library mode it follows vitest's or sinon's fake timers),
 * or a parent SandboxClock: a scenario's clock follows the sandbox's, plus its own moves.
 */
/**
 * The readings the clock may take: years 0001 to 9999, what ISO 8601 dates (and so the journal,
 * templates and most JWT libraries) can carry; Date itself fails past year 275760.
 */
export const CLOCK_RANGE = { minMs: -62_135_596_800_000, maxMs: 253_402_300_799_999 } as const;

/** A clock change that would take the reading out of CLOCK_RANGE; the clock is left as it was. */
export class ClockRangeError extends RangeError {
  /** `whose`: the clock that would leave the range, when it is not the one being moved. */
  constructor(
    readonly targetMs: number,
    whose = "the clock",
  ) {
    super(`${whose} would read ${describeMs(targetMs)}, outside 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z`);
  }
}

/** Throws ClockRangeError unless `ms` is a reading the clock may take. */
export function assertClockReading(ms: number, whose?: string): void {
  if (!(ms >= CLOCK_RANGE.minMs && ms <= CLOCK_RANGE.maxMs)) throw new ClockRangeError(ms, whose);
}

/** ISO 8601 of an epoch-milliseconds time, or undefined when no Date can hold it. Never throws. */
function isoOrUndefined(ms: number): string | undefined {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

function describeMs(ms: number): string {
  return isoOrUndefined(ms) ?? `${ms} ms after 1970`;
}

/**
 * A NumericDate (seconds) as ISO 8601 for messages and bodies. Never throws: a token's claims come
 * from outside, and a time no Date can hold is shown as the number it is.
 */
export function isoOfSeconds(seconds: number): string {
  if (!Number.isFinite(seconds)) return "an invalid time";
  return isoOrUndefined(seconds * 1000) ?? `${seconds} seconds after 1970`;
}

/**
 * How many of its latest moves a clock keeps (SandboxClock.skippedOver): enough for every jump a
 * test makes within a token's lifetime, and a fixed bound however many it makes.
 */
export const CLOCK_MOVES_KEPT = 32;

/**
 * A clock's own state, as replicas share it: its offset from its base (never its reading, which
 * the base's passing time changes), where it stands if frozen, and its latest moves.
 */
export interface ClockState {
  readonly offsetMs: number;
  readonly frozenAtMs?: number;
  /** Its own latest moves, oldest first (its parent's are its parent's state). */
  readonly moves?: ReadonlyArray<readonly [number, number]>;
}

export class SandboxClock {
  private offsetMs = 0;
  /**
   * Its latest own moves (advance, set, freeze at an instant, reset; its parent's are the
   * parent's), as pairs of readings [from, to], oldest first: what a request can no longer see happen, so what no client could
   * have acted on (a token's renewal window jumped over). Made on the first move.
   */
  private moves: Array<[number, number]> | undefined;

  private frozenAtMs: number | undefined;
  private readonly parent: SandboxClock | undefined;
  /** Named in refusals: "the clock of session s_…". */
  private readonly label: string | undefined;
  /**
   * The clocks that follow this one (scenarios', sessions'): moving this one moves them, so each
   * move is checked against their readings too. A session's clock leaves with detach().
   */
  private readonly followers = new Set<SandboxClock>();

  constructor(options: { frozenAt?: Date | number; parent?: SandboxClock; offsetMs?: number; label?: string } = {}) {
    this.parent = options.parent;
    this.label = options.label;
    if (options.frozenAt !== undefined) this.frozenAtMs = toMs(options.frozenAt);
    if (options.offsetMs !== undefined) this.advance(options.offsetMs);
    this.parent?.followers.add(this);
  }

  /** This clock's scenario ended (a session deleted): its reading no longer limits its parent's moves. */
  detach(): void {
    this.parent?.followers.delete(this);
  }

  /**
   * Throws ClockRangeError unless this clock may read `targetMs`: in range itself, and so is every
   * clock that follows it, moved by as much. Nothing moves here; a refused change changes nothing.
   */
  assertCanMoveTo(targetMs: number): void {
    assertClockReading(targetMs);
    this.assertFollowersCanMove(targetMs - this.now());
  }

  private assertFollowersCanMove(deltaMs: number): void {
    for (const follower of this.followers) {
      // A clock frozen itself stands still whatever its parent does; so do its own followers.
      if (follower.frozenAtMs === undefined) {
        assertClockReading(follower.now() + deltaMs, follower.label ?? "a clock that follows it");
        follower.assertFollowersCanMove(deltaMs);
      }
    }
  }

  private base(): number {
    return this.parent ? this.parent.now() : Date.now();
  }

  /** Milliseconds since the epoch on the sandbox clock. */
  now(): number {
    return this.frozenAtMs ?? this.base() + this.offsetMs;
  }

  /** Seconds since the epoch, as JWT claims count them. */
  nowSeconds(): number {
    return Math.floor(this.now() / 1000);
  }

  /** True when this clock does not move: stopped itself, or following a stopped parent. */
  get frozen(): boolean {
    return this.frozenAtMs !== undefined || (this.parent?.frozen ?? false);
  }

  /** Moves the clock forward (or back, with a negative amount) by `ms`, frozen or not. */
  advance(ms: number): void {
    if (!Number.isFinite(ms)) throw new RangeError(`advance takes a finite number of milliseconds, got ${ms}`);
    const from = this.now();
    this.assertCanMoveTo(from + ms);
    if (this.frozenAtMs !== undefined) this.frozenAtMs += ms;
    else this.offsetMs += ms;
    this.moved(from);
  }

  /** Jumps to an instant; a running clock keeps running from there. */
  set(instant: Date | number): void {
    const ms = toMs(instant);
    const from = this.now();
    this.assertCanMoveTo(ms);
    if (this.frozenAtMs !== undefined) this.frozenAtMs = ms;
    else this.offsetMs = ms - this.base();
    this.moved(from);
  }

  /** Stops the clock at its current reading (or at `instant`). */
  freeze(instant?: Date | number): void {
    const from = this.now();
    const ms = instant === undefined ? from : toMs(instant);
    if (instant !== undefined) this.assertCanMoveTo(ms);
    this.frozenAtMs = ms;
    this.moved(from);
  }

  /**
   * True when one move of this clock (or of a clock it follows) carried it from before `fromMs` to
   * `toMs` or later: the clock never read a time in [fromMs, toMs), so nothing could happen in
   * between. Among the moves kept (CLOCK_MOVES_KEPT).
   */
  skippedOver(fromMs: number, toMs: number): boolean {
    if (this.moves?.some(([from, to]) => from < fromMs && to >= toMs)) return true;
    // Its parent's moves, in the parent's readings (this one's less its offset): kept by the
    // parent alone, so a move of the sandbox clock changes no session's state. A clock frozen now
    // is taken to have stood still through them.
    return this.frozenAtMs === undefined && (this.parent?.skippedOver(fromMs - this.offsetMs, toMs - this.offsetMs) ?? false);
  }

  /** Keeps the move from `fromMs` to the reading now, here and on every clock that moved with it. */
  private moved(fromMs: number): void {
    const to = this.now();
    if (to === fromMs) return;
    this.moves = kept(this.moves, fromMs, to);
  }

  /** Lets a frozen clock run again from where it stood. */
  unfreeze(): void {
    if (this.frozenAtMs === undefined) return;
    this.offsetMs = this.frozenAtMs - this.base();
    this.frozenAtMs = undefined;
  }

  /**
   * This clock's own state: what `restore` takes. Its parent's is the parent's own; a reading
   * is the parent's plus this offset, so each clock is shared and restored on its own.
   */
  toState(): ClockState {
    const state: { offsetMs: number; frozenAtMs?: number; moves?: ReadonlyArray<readonly [number, number]> } = { offsetMs: this.offsetMs };
    if (this.frozenAtMs !== undefined) state.frozenAtMs = this.frozenAtMs;
    // A pair is never changed once kept: copying the list is enough.
    if (this.moves !== undefined) state.moves = this.moves.slice();
    return state;
  }

  /**
   * Takes the state another replica's copy of this clock had (`toState`). Sets this clock alone:
   * its followers are restored from their own states, and already moved with it there.
   */
  restore(state: ClockState): void {
    const problem = clockStateProblem(state);
    if (problem) throw new RangeError(`a clock state ${problem}; give what SandboxClock.toState() returned`);
    const { offsetMs, frozenAtMs, moves } = state;
    this.offsetMs = offsetMs;
    this.frozenAtMs = frozenAtMs;
    this.moves = moves?.slice(-CLOCK_MOVES_KEPT).map(([from, to]) => [from, to]);
  }

  /** Back to the base clock, running, with no offset. */
  reset(): void {
    const from = this.now();
    this.offsetMs = 0;
    this.frozenAtMs = undefined;
    this.moved(from);
  }
}

/** What a clock state lacks (see SandboxClock.restore), or undefined when it is one. */
export function clockStateProblem(state: ClockState): string | undefined {
  if (typeof state !== "object" || state === null) return "is not an object";
  const { offsetMs, frozenAtMs, moves } = state;
  if (!Number.isFinite(offsetMs)) return "needs a finite offsetMs";
  if (frozenAtMs !== undefined && !Number.isFinite(frozenAtMs)) return "needs a finite frozenAtMs, or none";
  if (moves !== undefined && !(Array.isArray(moves) && moves.every(isMove))) return "needs moves as [from, to] pairs of finite numbers, or none";
  return undefined;
}

function isMove(move: unknown): boolean {
  return Array.isArray(move) && move.length === 2 && Number.isFinite(move[0]) && Number.isFinite(move[1]);
}

/** `list` with the move [from, to] added, the oldest dropped past CLOCK_MOVES_KEPT. */
function kept(list: Array<[number, number]> | undefined, from: number, to: number): Array<[number, number]> {
  const moves = list ?? [];
  if (moves.length >= CLOCK_MOVES_KEPT) moves.shift();
  moves.push([from, to]);
  return moves;
}

function toMs(instant: Date | number): number {
  const ms = instant instanceof Date ? instant.getTime() : instant;
  if (!Number.isFinite(ms)) throw new RangeError("the clock needs a valid date");
  return ms;
}
