import { afterEach, describe, expect, it, vi } from "vitest";
import { CLOCK_MOVES_KEPT, SandboxClock } from "../../src/core/clock.js";

const T0 = Date.UTC(2026, 0, 1);
const T1 = Date.UTC(2030, 5, 15, 12, 0, 0);

afterEach(() => {
  vi.useRealTimers();
});

describe("SandboxClock", () => {
  it("frozen at an instant, it stands still", () => {
    vi.useFakeTimers({ now: T1 });
    const clock = new SandboxClock({ frozenAt: T0 });
    expect(clock.frozen).toBe(true);
    expect(clock.now()).toBe(T0);
    vi.advanceTimersByTime(60_000);
    vi.setSystemTime(T1 + 10_000_000);
    expect(clock.now()).toBe(T0);
    expect(clock.nowSeconds()).toBe(T0 / 1000);
  });

  it("accepts a Date for frozenAt", () => {
    const clock = new SandboxClock({ frozenAt: new Date(T0) });
    expect(clock.now()).toBe(T0);
  });

  it("nowSeconds floors", () => {
    const clock = new SandboxClock({ frozenAt: T0 + 1_999 });
    expect(clock.nowSeconds()).toBe(T0 / 1000 + 1);
  });

  it("without frozenAt it runs with the system clock and follows vitest's fake timers", () => {
    vi.useFakeTimers({ now: T0 });
    const clock = new SandboxClock();
    expect(clock.frozen).toBe(false);
    expect(clock.now()).toBe(T0);
    vi.advanceTimersByTime(1_500);
    expect(clock.now()).toBe(T0 + 1_500);
    vi.setSystemTime(T1);
    expect(clock.now()).toBe(T1);
  });

  it("advance moves a frozen clock, forward and back", () => {
    const clock = new SandboxClock({ frozenAt: T0 });
    clock.advance(90_000);
    expect(clock.now()).toBe(T0 + 90_000);
    clock.advance(-30_000);
    expect(clock.now()).toBe(T0 + 60_000);
    expect(clock.frozen).toBe(true);
  });

  it("advance moves a running clock by an offset that it keeps while time passes", () => {
    vi.useFakeTimers({ now: T0 });
    const clock = new SandboxClock();
    clock.advance(3_600_000);
    expect(clock.now()).toBe(T0 + 3_600_000);
    vi.advanceTimersByTime(1_000);
    expect(clock.now()).toBe(T0 + 3_601_000);
    expect(clock.frozen).toBe(false);
  });

  it("set jumps a frozen clock to an instant (number or Date), and it stays frozen", () => {
    const clock = new SandboxClock({ frozenAt: T0 });
    clock.set(T1);
    expect(clock.now()).toBe(T1);
    clock.set(new Date(T0));
    expect(clock.now()).toBe(T0);
    expect(clock.frozen).toBe(true);
  });

  it("set on a running clock keeps it running from there", () => {
    vi.useFakeTimers({ now: T0 });
    const clock = new SandboxClock();
    clock.set(T1);
    expect(clock.now()).toBe(T1);
    vi.advanceTimersByTime(5_000);
    expect(clock.now()).toBe(T1 + 5_000);
    expect(clock.frozen).toBe(false);
  });

  it("freeze stops the clock at its current reading, or at a given instant", () => {
    vi.useFakeTimers({ now: T0 });
    const clock = new SandboxClock();
    clock.advance(1_000);
    clock.freeze();
    expect(clock.frozen).toBe(true);
    vi.advanceTimersByTime(10_000);
    expect(clock.now()).toBe(T0 + 1_000);
    clock.freeze(T1);
    expect(clock.now()).toBe(T1);
    clock.freeze(new Date(T0));
    expect(clock.now()).toBe(T0);
  });

  it("unfreeze lets the clock run again from where it stood", () => {
    vi.useFakeTimers({ now: T1 });
    const clock = new SandboxClock({ frozenAt: T0 });
    clock.unfreeze();
    expect(clock.frozen).toBe(false);
    expect(clock.now()).toBe(T0);
    vi.advanceTimersByTime(2_000);
    expect(clock.now()).toBe(T0 + 2_000);
  });

  it("unfreeze on a running clock changes nothing", () => {
    vi.useFakeTimers({ now: T0 });
    const clock = new SandboxClock();
    clock.advance(500);
    clock.unfreeze();
    expect(clock.now()).toBe(T0 + 500);
    expect(clock.frozen).toBe(false);
  });

  it("reset goes back to the system clock, running, with no offset", () => {
    vi.useFakeTimers({ now: T1 });
    const frozen = new SandboxClock({ frozenAt: T0 });
    frozen.reset();
    expect(frozen.frozen).toBe(false);
    expect(frozen.now()).toBe(T1);

    const offset = new SandboxClock();
    offset.advance(123_456);
    offset.reset();
    expect(offset.now()).toBe(T1);
    vi.advanceTimersByTime(1_000);
    expect(offset.now()).toBe(T1 + 1_000);
  });

  it("two clocks share nothing", () => {
    const a = new SandboxClock({ frozenAt: T0 });
    const b = new SandboxClock({ frozenAt: T0 });
    a.advance(1_000);
    expect(b.now()).toBe(T0);
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])("advance(%d) throws and leaves the clock alone", (ms) => {
    const clock = new SandboxClock({ frozenAt: T0 });
    expect(() => clock.advance(ms)).toThrow(RangeError);
    expect(() => clock.advance(ms)).toThrow(`advance takes a finite number of milliseconds, got ${ms}`);
    expect(clock.now()).toBe(T0);
  });

  it("invalid instants throw", () => {
    const message = "the clock needs a valid date";
    expect(() => new SandboxClock({ frozenAt: new Date("not a date") })).toThrow(RangeError);
    expect(() => new SandboxClock({ frozenAt: new Date("not a date") })).toThrow(message);
    expect(() => new SandboxClock({ frozenAt: Number.NaN })).toThrow(message);
    const clock = new SandboxClock({ frozenAt: T0 });
    expect(() => clock.set(new Date("nope"))).toThrow(message);
    expect(() => clock.set(Number.POSITIVE_INFINITY)).toThrow(message);
    expect(() => clock.freeze(Number.NaN)).toThrow(message);
    expect(clock.now()).toBe(T0);
  });

  it("skippedOver: a single move over the whole span, its own or its parent's; a stop inside it is not one", () => {
    const parent = new SandboxClock({ frozenAt: T0 });
    const child = new SandboxClock({ parent });
    const frozenChild = new SandboxClock({ parent, frozenAt: T0 });
    // The span [T0+54 s, T0+60 s): the last tenth of a 60 s token.
    const span: [number, number] = [T0 + 54_000, T0 + 60_000];
    expect(parent.skippedOver(...span)).toBe(false);
    parent.advance(61_000);
    expect(parent.skippedOver(...span)).toBe(true);
    expect(child.skippedOver(...span)).toBe(true); // it moved with its parent
    expect(frozenChild.skippedOver(...span)).toBe(false); // it stood still
    // In two moves that stop inside the span: the clock read a time in it.
    const steps = new SandboxClock({ frozenAt: T0 });
    steps.advance(55_000);
    steps.advance(6_000);
    expect(steps.skippedOver(...span)).toBe(false);
    // set, freeze at an instant and reset are moves too; a move back skips nothing ahead.
    const set = new SandboxClock({ frozenAt: T0 });
    set.set(T0 + 3_600_000);
    expect(set.skippedOver(...span)).toBe(true);
    const frozen = new SandboxClock({ frozenAt: T0 });
    frozen.freeze(T0 + 60_000);
    expect(frozen.skippedOver(...span)).toBe(true);
    const back = new SandboxClock({ frozenAt: T0 + 120_000 });
    back.advance(-120_000);
    expect(back.skippedOver(...span)).toBe(false);
  });

  it("bounded memory: a clock keeps its latest CLOCK_MOVES_KEPT moves, however many it makes", () => {
    const clock = new SandboxClock({ frozenAt: T0 });
    clock.advance(61_000); // over [T0+54 s, T0+60 s)
    for (let i = 0; i < CLOCK_MOVES_KEPT - 1; i++) clock.advance(1);
    expect(clock.skippedOver(T0 + 54_000, T0 + 60_000)).toBe(true);
    clock.advance(1); // the jump is the oldest of CLOCK_MOVES_KEPT + 1: gone
    expect(clock.skippedOver(T0 + 54_000, T0 + 60_000)).toBe(false);
    for (let i = 0; i < 100_000; i++) clock.advance(1);
    expect((clock as unknown as { moves: unknown[] }).moves).toHaveLength(CLOCK_MOVES_KEPT);
  });
});
