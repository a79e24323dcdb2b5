import { describe, expect, it } from "vitest";
import { followSession, parseFrames, type StreamEvent } from "../../ui/src/events.js";

/**
 * How the QA page follows a session (ui/src/events.ts): Server-Sent Events read with fetch, frames
 * cut anywhere by the network, and a stream that drops or is refused. No browser: a fake fetch
 * answers as the sandbox would.
 */
const frame = (event: string, id: string, data: unknown) => `event: ${event}\nid: ${id}\ndata: ${JSON.stringify(data)}\n\n`;

function streamOf(...chunks: string[]): Response {
  const bytes = new TextEncoder();
  return new Response(
    new ReadableStream<Uint8Array>({
      start(c) {
        for (const chunk of chunks) c.enqueue(bytes.encode(chunk));
        c.close();
      },
    }),
    { status: 200, headers: { "content-type": "text/event-stream" } },
  );
}

describe("parseFrames", () => {
  it("keeps a frame cut across chunks for the next one, and skips comment lines", () => {
    const whole = `: merchant-sandbox events\n\n${frame("request", "req_1", { id: "req_1" })}${frame("findings", "req_1", { findings: [] })}`;
    const cut = whole.length - 10;
    const first = parseFrames(whole.slice(0, cut));
    expect(first.frames).toEqual([{ event: "request", id: "req_1", data: { id: "req_1" } }]);
    const second = parseFrames(first.rest + whole.slice(cut));
    expect(second).toEqual({ frames: [{ event: "findings", id: "req_1", data: { findings: [] } }], rest: "" });
  });

  it("ignores a frame whose data is not JSON (the sandbox sends only JSON)", () => {
    expect(parseFrames("event: request\ndata: {not json\n\n")).toEqual({ frames: [], rest: "" });
  });
});

describe("followSession", () => {
  it("retries a 503 with a doubling wait, replays from the last request or history id after a drop, and stops for good on a 404", async () => {
    const calls: Array<{ url: string; lastEventId: string | undefined }> = [];
    const answers = [
      () => new Response("busy", { status: 503 }),
      () => new Response("too many", { status: 429 }),
      () =>
        streamOf(
          ": merchant-sandbox events\n\n",
          frame("request", "req_7", { id: "req_7" }).slice(0, 12),
          frame("request", "req_7", { id: "req_7" }).slice(12),
          // A history entry after it is a place in the replay too; a session event (the last request's id) is not.
          frame("history", "req_7.2", { id: "req_7.2" }),
          frame("session", "req_7", { change: "actions" }),
        ),
      () => new Response("{}", { status: 404 }),
    ];
    const fakeFetch = async (input: RequestInfo | URL, init?: RequestInit) => {
      const headers = (init?.headers ?? {}) as Record<string, string>;
      calls.push({ url: String(input), lastEventId: headers["last-event-id"] });
      return answers[calls.length - 1]!();
    };
    const waits: number[] = [];
    const events: StreamEvent[] = [];
    const states: Array<[string, number | undefined]> = [];
    const done = new Promise<void>((resolve) => {
      followSession({
        session: "ses_1",
        since: "req_5",
        headers: () => ({ "x-admin-token": "t" }),
        onEvent: (e) => events.push(e),
        onState: (state, status) => {
          states.push([state, status]);
          if (state === "stopped") resolve();
        },
        fetch: fakeFetch,
        wait: async (ms) => {
          waits.push(ms);
        },
      });
    });
    await done;
    expect(calls).toEqual([
      { url: "/__sandbox/events?session=ses_1", lastEventId: "req_5" },
      { url: "/__sandbox/events?session=ses_1", lastEventId: "req_5" },
      { url: "/__sandbox/events?session=ses_1", lastEventId: "req_5" },
      // After the stream dropped: from the last request or history entry it delivered.
      { url: "/__sandbox/events?session=ses_1", lastEventId: "req_7.2" },
    ]);
    expect(events).toEqual([
      { event: "request", id: "req_7", data: { id: "req_7" } },
      { event: "history", id: "req_7.2", data: { id: "req_7.2" } },
      { event: "session", id: "req_7", data: { change: "actions" } },
    ]);
    // 1 s, then 2 s while it keeps failing; back to 1 s once a stream was open.
    expect(waits).toEqual([1000, 2000, 1000]);
    expect(states).toEqual([
      ["reconnecting", undefined],
      ["reconnecting", undefined],
      ["live", undefined],
      ["reconnecting", undefined],
      ["stopped", 404],
    ]);
  });
});
