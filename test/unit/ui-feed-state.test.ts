import { describe, expect, it } from "vitest";
import { clockMark, historyMark, mergeEntries, mergeHistoryMarks, replayFrom } from "../../ui/src/feed-state.js";
import type { HistoryEntry, JournalEntry } from "../../ui/src/types.js";

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
