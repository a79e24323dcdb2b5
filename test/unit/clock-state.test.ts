import { afterEach, describe, expect, it, vi } from "vitest";
import { SandboxClock } from "../../src/core/clock.js";

/**
 * A clock's state as replicas share it: each clock restored on its own (a scenario's apart from
 * the sandbox's) reads, freezes and answers `skippedOver` as the one it was taken from, frozen or
 * running. The base is the wall clock, faked and shared by both copies, as by replicas on one host.
 */

const WALL = Date.UTC(2026, 0, 1);
const T0 = Date.UTC(2030, 5, 15);
const MIN = 60_000;

afterEach(() => {
  vi.useRealTimers();
});

/** A sandbox clock with a scenario clock following it, as a replica makes them. */
function pair(options: { frozenAt?: number } = {}) {
  const parent = new SandboxClock(options);
  const child = new SandboxClock({ parent, offsetMs: 5 * MIN, label: "the clock of scenario 'x'" });
  return { parent, child };
}

/** Every [from, to) of readings around the moves made, as `skippedOver` is asked. */
function skips(clock: SandboxClock, marks: number[]): boolean[] {
  return marks.flatMap((from) => marks.map((to) => clock.skippedOver(from, to)));
}

function copyInto(from: { parent: SandboxClock; child: SandboxClock }, to: { parent: SandboxClock; child: SandboxClock }) {
  to.parent.restore(JSON.parse(JSON.stringify(from.parent.toState())));
  to.child.restore(JSON.parse(JSON.stringify(from.child.toState())));
}

describe("SandboxClock state", () => {
  it("running: the copies read the same while wall time passes, and keep the same moves", () => {
    vi.useFakeTimers({ now: WALL, toFake: ["Date"] });
    const a = pair();
    a.parent.advance(60 * MIN);
    a.child.advance(-2 * MIN);
    a.parent.set(WALL + 3 * 60 * MIN);
    vi.advanceTimersByTime(1234);
    const b = pair();
    copyInto(a, b);
    expect([b.parent.now(), b.child.now()]).toEqual([a.parent.now(), a.child.now()]);
    expect(b.child.now()).toBe(WALL + 3 * 60 * MIN + 1234 + 3 * MIN);
    vi.advanceTimersByTime(10 * MIN);
    expect([b.parent.now(), b.child.now()]).toEqual([a.parent.now(), a.child.now()]);
    expect([b.parent.frozen, b.child.frozen]).toEqual([false, false]);
    const marks = [WALL, WALL + 30 * MIN, WALL + 61 * MIN, WALL + 2 * 60 * MIN, WALL + 4 * 60 * MIN].flatMap((m) => [m, m + 3 * MIN]);
    expect(skips(b.child, marks)).toEqual(skips(a.child, marks));
    expect(skips(b.parent, marks)).toEqual(skips(a.parent, marks));
    expect(skips(a.child, marks)).toContain(true);
    expect(JSON.stringify(b.child.toState())).toBe(JSON.stringify(a.child.toState()));
    // Moving the parent afterwards moves the child alike on both.
    a.parent.advance(MIN);
    b.parent.advance(MIN);
    expect(JSON.stringify([b.parent.toState(), b.child.toState()])).toBe(JSON.stringify([a.parent.toState(), a.child.toState()]));
  });

  it("frozen, the sandbox clock or the scenario's alone: the copies stand at the same reading", () => {
    vi.useFakeTimers({ now: WALL, toFake: ["Date"] });
    const a = pair({ frozenAt: T0 });
    a.child.advance(MIN);
    const b = pair();
    copyInto(a, b);
    expect([b.parent.now(), b.child.now(), b.child.frozen]).toEqual([T0, T0 + 6 * MIN, true]);
    a.parent.unfreeze();
    a.child.freeze(T0 + 60 * MIN);
    vi.advanceTimersByTime(7 * MIN);
    copyInto(a, b);
    vi.advanceTimersByTime(MIN);
    expect([b.parent.now(), b.child.now()]).toEqual([a.parent.now(), a.child.now()]);
    expect([b.parent.frozen, b.child.frozen]).toEqual([false, true]);
    expect(b.parent.now()).toBe(T0 + 8 * MIN);
    expect(b.child.toState()).toEqual({
      offsetMs: 6 * MIN,
      frozenAtMs: T0 + 60 * MIN,
      moves: [
        [T0, T0 + 5 * MIN],
        [T0 + 5 * MIN, T0 + 6 * MIN],
        [T0 + 6 * MIN, T0 + 60 * MIN],
      ],
    });
  });

  it("a follower sees its parent's jumps in its own readings, keeping none of them in its state; frozen, it sees none", () => {
    const { parent, child } = pair({ frozenAt: T0 });
    const childState = JSON.stringify(child.toState());
    parent.advance(60 * MIN);
    // The child reads 5 minutes ahead of its parent: the jump skipped its [T0+10m, T0+65m).
    expect(child.skippedOver(T0 + 10 * MIN, T0 + 65 * MIN)).toBe(true);
    expect(child.skippedOver(T0 + 10 * MIN, T0 + 66 * MIN)).toBe(false);
    expect(parent.skippedOver(T0 + 10 * MIN, T0 + 60 * MIN)).toBe(true);
    expect(JSON.stringify(child.toState())).toBe(childState);
    child.freeze();
    expect(child.skippedOver(T0 + 10 * MIN, T0 + 65 * MIN)).toBe(false);
  });

  it("a restore sets that clock alone: the clocks following it keep their own state", () => {
    const a = pair({ frozenAt: T0 });
    const childBefore = JSON.stringify(a.child.toState());
    a.parent.restore({ offsetMs: 0, frozenAtMs: T0 + 60 * MIN });
    expect(JSON.stringify(a.child.toState())).toBe(childBefore);
    expect(a.child.now()).toBe(T0 + 65 * MIN);
    expect(a.parent.toState()).toEqual({ offsetMs: 0, frozenAtMs: T0 + 60 * MIN });
  });

  it("refuses what is not a clock state, saying what is missing, and stays as it was", () => {
    const clock = new SandboxClock({ frozenAt: T0 });
    expect(() => clock.restore({ offsetMs: Number.NaN })).toThrow(
      new RangeError("a clock state needs a finite offsetMs; give what SandboxClock.toState() returned"),
    );
    expect(() => clock.restore({ offsetMs: 0, moves: [[1, "2"]] } as never)).toThrow(/needs moves as \[from, to\] pairs/);
    expect(() => clock.restore({ offsetMs: 0, frozenAtMs: Number.POSITIVE_INFINITY })).toThrow(/needs a finite frozenAtMs/);
    expect(clock.now()).toBe(T0);
  });
});
