import { describe, expect, it } from "vitest";
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

describe("EventHub", () => {
  it("closes a subscriber that falls bufferSize events behind with a last overflow event, and frees its place", () => {
    const hub = new EventHub({ maxSubscribers: 1, bufferSize: 2, heartbeatMs: 0 });
    const sink = stuckSink();
    hub.subscribe(undefined, []).open(sink);
    for (let i = 1; i <= 4; i++) hub.publish("request", `req_${i}`, { i }, undefined);
    expect(sink.chunks).toEqual([
      eventFrame("request", "req_1", { i: 1 }),
      eventFrame("request", "req_2", { i: 2 }),
      eventFrame("overflow", "", {
        reason: "more than 2 events were waiting for this client; reconnect with Last-Event-ID to replay the requests missed",
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
    expect(sink.chunks).toEqual(["replayed", eventFrame("request", "req_2", { i: 2 })]);
  });

  it("sends a keep-alive comment on its timer while a stream is open, and stops the timer after", async () => {
    const hub = new EventHub({ maxSubscribers: 1, bufferSize: 10, heartbeatMs: 1 });
    const sink = { ...stuckSink(), pending: () => 0 };
    const stop = hub.subscribe(undefined, []).open(sink);
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (sink.chunks.length > 0) {
          clearInterval(check);
          resolve();
        }
      }, 1);
    });
    stop();
    expect(sink.chunks[0]).toBe(": keep-alive\n\n");
    expect(hub.active).toBe(false);
  });

  it("cancel frees the place of a stream never opened (a HEAD)", () => {
    const hub = new EventHub({ maxSubscribers: 1, bufferSize: 10, heartbeatMs: 0 });
    hub.subscribe(undefined, []).cancel();
    expect(hub.active).toBe(false);
    expect(() => hub.subscribe(undefined, [])).not.toThrow();
  });
});
