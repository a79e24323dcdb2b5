import { describe, expect, it } from "vitest";
import {
  clockMark,
  EMPTY_FEED,
  type FeedAction,
  type FeedState,
  feedReducer,
  historyMark,
  mergeEntries,
  mergeHistoryMarks,
  replayFrom,
} from "../../ui/src/feed-state.js";
import type { HistoryEntry, JournalEntry, SessionDetail } from "../../ui/src/types.js";

function entry(seq: number): JournalEntry {
  return {
    id: `req_${seq}`,
    seq,
    time: "2026-01-01T00:00:00.000Z",
    sandboxTime: "2026-01-01T00:00:00.000Z",
    method: "GET",
    path: "/api/v2/payment/status",
    query: "",
    status: 200,
    durationMs: 1,
    endpoint: "payment",
    scenario: "default",
  };
}

describe("mergeEntries", () => {
  it("appends a newer row", () => {
    const rows = [entry(1), entry(2)];
    expect(mergeEntries(rows, [entry(3)]).map((e) => e.id)).toEqual(["req_1", "req_2", "req_3"]);
  });
  it("keeps each id once when the load and the stream's replay overlap", () => {
    const merged = mergeEntries([entry(1), entry(2)], [entry(2), entry(3), entry(3)]);
    expect(merged.map((e) => e.id)).toEqual(["req_1", "req_2", "req_3"]);
  });
  it("puts rows in journal order whatever order they came in", () => {
    expect(mergeEntries([entry(5)], [entry(3), entry(4)]).map((e) => e.seq)).toEqual([3, 4, 5]);
  });
  it("returns the same array when nothing is new, so the table does not re-render", () => {
    const rows = [entry(1)];
    expect(mergeEntries(rows, [entry(1)])).toBe(rows);
  });
});

describe("replayFrom", () => {
  it("replays after the newest row loaded, or everything (req_0) when none was", () => {
    expect(replayFrom([entry(1), entry(7)])).toBe("req_7");
    expect(replayFrom([])).toBe("req_0");
  });
});

describe("clockMark", () => {
  const at = (now: string, frozen = false) => ({ now, frozen });
  it("labels a move by how far it went, at the time after it", () => {
    expect(clockMark(at("2026-01-01T10:00:00Z"), at("2026-01-01T11:01:00Z"))).toEqual({ kind: "clock", at: "2026-01-01T11:01:00Z", label: "+61m" });
  });
  it("marks freezing and unfreezing", () => {
    expect(clockMark(at("2026-01-01T10:00:00Z"), at("2026-01-01T10:00:00Z", true))?.label).toBe("frozen");
    expect(clockMark(at("2026-01-01T10:00:00Z", true), at("2026-01-01T10:00:00Z"))?.label).toBe("running");
  });
  it("makes no mark for a running clock's drift, nor without an earlier reading", () => {
    expect(clockMark(at("2026-01-01T10:00:00.000Z"), at("2026-01-01T10:00:00.400Z"))).toBeUndefined();
    expect(clockMark(undefined, at("2026-01-01T10:00:00Z"))).toBeUndefined();
  });
});

describe("historyMark: what was done to the session, from its history", () => {
  const base = { session: "ses_1", time: "2030-01-01T00:00:00.000Z", sandboxTime: "2026-01-01T10:00:00.000Z" };
  const clock = (now: string, frozen = false) => ({ now, frozen });
  const moved: HistoryEntry = { ...base, id: "req_1.1", kind: "clock", change: { advance: "61m" }, clock: clock("2026-01-01T11:01:00.000Z") };

  it("a clock move at the time after it, labelled by how far and whether it froze; a reset; actions with their values and next rule", () => {
    expect(historyMark(moved)).toEqual({ id: "req_1.1", kind: "clock", at: "2026-01-01T11:01:00.000Z", label: "+61m" });
    const frozen: HistoryEntry = { ...base, id: "req_1.2", kind: "clock", change: { freeze: true }, clock: clock(base.sandboxTime, true) };
    expect(historyMark(frozen).label).toBe("frozen");
    const reset: HistoryEntry = { ...base, id: "req_1.3", kind: "reset", clock: clock("2026-01-01T00:00:00.000Z") };
    expect(historyMark(reset)).toEqual({ id: "req_1.3", kind: "clock", at: "2026-01-01T00:00:00.000Z", label: "reset" });
    const actions: HistoryEntry = {
      ...base,
      id: "req_1.4",
      kind: "actions",
      merchants: ["m"],
      now: { expire_token: "all", rotate_key: true },
      next: { rule: "default/action-1", endpoint: "token", times: 2, actions: ["respond"] },
      clock: clock(base.sandboxTime),
    };
    expect(historyMark(actions)).toEqual({
      id: "req_1.4",
      kind: "actions",
      at: base.sandboxTime,
      label: "expire_token: all, rotate_key, next 2× respond (default/action-1)",
    });
  });

  it("an entry read twice (the page's load, then the stream's replay) is marked once", () => {
    const once = mergeHistoryMarks([], [moved]);
    expect(mergeHistoryMarks(once, [moved])).toBe(once);
    expect(once).toHaveLength(1);
  });
});

describe("feedReducer: the session page's state, folded from its loads and events", () => {
  const fold = (...actions: FeedAction[]): FeedState => actions.reduce(feedReducer, EMPTY_FEED);
  const running = (now: string) => ({ now, frozen: false });
  const T = 1_000_000; // ms on the page's machine when the first reading came
  const moved: HistoryEntry = {
    id: "req_1.1",
    session: "ses_1",
    time: "2030-01-01T00:00:00.000Z",
    sandboxTime: "2026-01-01T10:00:00.000Z",
    kind: "clock",
    change: { advance: "61m" },
    clock: running("2026-01-01T11:01:00.000Z"),
  };
  const session = { id: "ses_1", scenario: "default", clock: running("2026-01-01T10:00:00.000Z"), history: [moved] } as unknown as SessionDetail;

  it("the load shows the session, its clock, and marks what was done to it before the page opened", () => {
    const state = fold({ type: "loaded", session, at: T });
    expect(state.detail).toBe(session);
    expect(state.clock).toEqual(session.clock);
    expect(state.marks).toEqual([historyMark(moved)]);
  });

  it("running clock: a reading that only kept pace with the running clock is no move, a jump is", () => {
    const loaded: FeedAction = { type: "loaded", session: { ...session, history: [] }, at: T };
    const drift = fold(loaded, { type: "clock heard", view: running("2026-01-01T10:00:05.000Z"), at: T + 5000, mark: true });
    expect(drift.marks).toEqual([]);
    expect(drift.clock).toEqual(running("2026-01-01T10:00:05.000Z"));
    const jump = fold(loaded, { type: "clock heard", view: running("2026-01-01T11:01:05.000Z"), at: T + 5000, mark: true });
    expect(jump.marks).toEqual([{ kind: "clock", at: "2026-01-01T11:01:05.000Z", label: "+61m" }]);
  });

  it("a clock a panel shows is not what moves are measured from, or its own event would look like no move", () => {
    const loaded: FeedAction = { type: "loaded", session: { ...session, history: [] }, at: T };
    const shown = fold(loaded, { type: "clock shown", view: { now: "2026-01-01T11:01:00.000Z", frozen: true } });
    expect(shown.clock).toEqual({ now: "2026-01-01T11:01:00.000Z", frozen: true });
    const heard = feedReducer(shown, { type: "clock heard", view: { now: "2026-01-01T11:01:00.000Z", frozen: true }, at: T, mark: true });
    expect(heard.marks).toEqual([{ kind: "clock", at: "2026-01-01T11:01:00.000Z", label: "frozen" }]);
  });

  it("the session's own clock events and reads are shown but not marked (its history marks them)", () => {
    const state = fold({ type: "loaded", session, at: T }, { type: "clock heard", view: running("2026-01-01T12:00:00.000Z"), at: T, mark: false });
    expect(state.clock).toEqual(running("2026-01-01T12:00:00.000Z"));
    expect(state.marks).toEqual([historyMark(moved)]);
  });

  it("returns the same state when an event changes nothing, so the page does not re-render", () => {
    const state = fold({ type: "requests", entries: [entry(1)] }, { type: "history", entries: [moved] }, { type: "live", state: "live" });
    expect(feedReducer(state, { type: "requests", entries: [entry(1)] })).toBe(state);
    expect(feedReducer(state, { type: "history", entries: [moved] })).toBe(state);
    expect(feedReducer(state, { type: "live", state: "live" })).toBe(state);
    expect(feedReducer(state, { type: "requests", entries: [entry(2)] }).entries.map((e) => e.id)).toEqual(["req_1", "req_2"]);
  });

  it("an end this page did not make is said once; one it made, or is making, is not", () => {
    const elsewhere = fold({ type: "ended", say: true });
    expect(elsewhere).toMatchObject({ ended: true, endedElsewhere: true });
    expect(fold({ type: "ending here", on: true }, { type: "ended", say: true })).toMatchObject({ ended: true, endedElsewhere: false });
    expect(fold({ type: "ended", say: false }, { type: "ended", say: true })).toMatchObject({ ended: true, endedElsewhere: false });
    // Ending failed: the page is not ending it any more, so a later end is news.
    expect(fold({ type: "ending here", on: true }, { type: "ending here", on: false }, { type: "ended", say: true }).endedElsewhere).toBe(true);
    // The stream found the session gone (404): ended, quietly, as before.
    expect(fold({ type: "ended", say: false })).toMatchObject({ ended: true, endedElsewhere: false });
  });

  it("a session that could not be loaded says why", () => {
    expect(fold({ type: "missing", why: "No session ses_9" }).missing).toBe("No session ses_9");
  });
});
