import { afterEach, describe, expect, it, vi } from "vitest";
import { EventHub, eventFrame } from "../../src/control/events.js";
import type { StreamSink } from "../../src/core/http-types.js";

/** A sink whose client never reads: everything written stays pending. */
function stuckSink(): StreamSink & { chunks: string[]; ended: boolean } {
  const sink = {
    chunks: [] as string[],
    ended: false,
    write: (chunk: string) => void sink.chunks.push(chunk),
    pending: () => sink.chunks.length,
    end: () => {
      sink.ended = true;
    },
  };
  return sink;
}

/** The comment line every stream starts with, so the first chunk arrives at once. */
const OPENING = ": merchant-sandbox events\n\n";

describe("EventHub", () => {
  it("closes a subscriber that falls bufferSize events behind with a last overflow event, and frees its place", () => {
    const hub = new EventHub({ maxSubscribers: 1, bufferSize: 3, heartbeatMs: 0 });
    const sink = stuckSink();
    hub.subscribe(undefined, []).open(sink);
    for (let i = 1; i <= 4; i++) hub.publish("request", `req_${i}`, { i }, undefined);
    expect(sink.chunks).toEqual([
      OPENING,
      eventFrame("request", "req_1", { i: 1 }),
      eventFrame("request", "req_2", { i: 2 }),
      eventFrame("overflow", "", {
        reason: "more than 3 events were waiting for this client; reconnect with Last-Event-ID to replay the requests missed",
      }),
    ]);
    expect(sink.ended).toBe(true);
    expect(hub.active).toBe(false);
  });

  it("keeps what is published before the adapter opens the stream, after the replay", () => {
    const hub = new EventHub({ maxSubscribers: 1, bufferSize: 10, heartbeatMs: 0 });
    const stream = hub.subscribe("ses_a", ["replayed"]);
    hub.publish("request", "req_2", { i: 2 }, "ses_a");
    hub.publish("request", "req_3", { i: 3 }, "ses_b");
    const sink = stuckSink();
    stream.open(sink);
    expect(sink.chunks).toEqual([OPENING, "replayed", eventFrame("request", "req_2", { i: 2 })]);
  });

  it("bounds what waits for a stream not yet open: past the replay and a buffer's worth, overflow, then the end", () => {
    const hub = new EventHub({ maxSubscribers: 1, bufferSize: 1, heartbeatMs: 0 });
    const stream = hub.subscribe(undefined, ["replayed"]);
    for (let i = 1; i <= 3; i++) hub.publish("request", `req_${i}`, { i }, undefined);
    expect(hub.active).toBe(false);
    const sink = stuckSink();
    stream.open(sink);
    expect(sink.chunks).toEqual([
      OPENING,
      "replayed",
      eventFrame("request", "req_1", { i: 1 }),
      eventFrame("overflow", "", {
        reason: "more than 1 events were waiting for this client; reconnect with Last-Event-ID to replay the requests missed",
      }),
    ]);
    expect(sink.ended).toBe(true);
  });

  it("closeSession ends the streams of that session only, and frees their places", () => {
    const hub = new EventHub({ maxSubscribers: 3, bufferSize: 10, heartbeatMs: 0 });
    const [a, b, all] = [stuckSink(), stuckSink(), stuckSink()];
    hub.subscribe("ses_a", []).open(a);
    hub.subscribe("ses_b", []).open(b);
    hub.subscribe(undefined, []).open(all);
    hub.closeSession("ses_a");
    expect([a.ended, b.ended, all.ended]).toEqual([true, false, false]);
    expect(hub.watches("ses_a")).toBe(false);
    expect(() => hub.subscribe("ses_c", [])).not.toThrow();
  });

  it("sends a keep-alive comment on its timer while a stream is open, and stops the timer after", async () => {
    const hub = new EventHub({ maxSubscribers: 1, bufferSize: 10, heartbeatMs: 1 });
    const sink = { ...stuckSink(), pending: () => 0 };
    const stop = hub.subscribe(undefined, []).open(sink);
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (sink.chunks.length > 1) {
          clearInterval(check);
          resolve();
        }
      }, 1);
    });
    stop();
    expect(sink.chunks.slice(0, 2)).toEqual([OPENING, ": keep-alive\n\n"]);
    expect(hub.active).toBe(false);
  });

  it("cancel frees the place of a stream never opened (a HEAD)", () => {
    const hub = new EventHub({ maxSubscribers: 1, bufferSize: 10, heartbeatMs: 0 });
    hub.subscribe(undefined, []).cancel();
    expect(hub.active).toBe(false);
    expect(() => hub.subscribe(undefined, [])).not.toThrow();
  });

  describe("a watched session's findings", () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it("are worked out once per burst of requests, after findingsDelayMs, and sent only when they changed", () => {
      vi.useFakeTimers();
      const hub = new EventHub({ maxSubscribers: 2, bufferSize: 10, heartbeatMs: 0, findingsDelayMs: 200 });
      const sink = stuckSink();
      hub.subscribe("ses_a", []).open(sink);
      hub.baseline("ses_a", []);
      let computed = 0;
      const findings = [{ code: "expired_token_reused" }];
      const snapshot = (id: string) => () => {
        computed++;
        return { id, findings };
      };
      for (let i = 1; i <= 100; i++) hub.findingsChanged("ses_a", snapshot(`req_${i}`));
      expect(computed).toBe(0);
      vi.advanceTimersByTime(199);
      expect(computed).toBe(0);
      vi.advanceTimersByTime(1);
      expect(computed).toBe(1);
      expect(sink.chunks).toEqual([OPENING, eventFrame("findings", "req_100", { session: "ses_a", findings })]);
      // Unchanged findings after the next burst: worked out again, not sent again.
      hub.findingsChanged("ses_a", snapshot("req_101"));
      vi.advanceTimersByTime(200);
      expect(computed).toBe(2);
      expect(sink.chunks).toHaveLength(2);
    });

    it("are not worked out for a session whose streams closed before the delay ran out", () => {
      vi.useFakeTimers();
      const hub = new EventHub({ maxSubscribers: 2, bufferSize: 10, heartbeatMs: 0, findingsDelayMs: 200 });
      hub.subscribe("ses_a", []).open(stuckSink());
      let computed = 0;
      hub.findingsChanged("ses_a", () => {
        computed++;
        return { id: "req_1", findings: [] };
      });
      hub.closeSession("ses_a");
      vi.advanceTimersByTime(1000);
      expect(computed).toBe(0);
      expect(vi.getTimerCount()).toBe(0);
    });
  });
});
