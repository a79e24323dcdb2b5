/**
 * The live feed of one session: GET /__sandbox/events?session=… read with fetch, not EventSource,
 * because EventSource cannot send the admin token header. The frames are Server-Sent Events; on a
 * dropped stream it reconnects with Last-Event-ID, and the sandbox replays the requests missed.
 */
export interface StreamEvent {
  event: string;
  id: string;
  data: unknown;
}

/** Splits SSE text into complete frames; returns the frames and the unfinished rest. */
export function parseFrames(buffer: string): { frames: StreamEvent[]; rest: string } {
  const frames: StreamEvent[] = [];
  const parts = buffer.split("\n\n");
  const rest = parts.pop() ?? "";
  for (const part of parts) {
    let event = "message";
    let id = "";
    const data: string[] = [];
    for (const line of part.split("\n")) {
      if (line.startsWith(":")) continue; // a comment: the opening line, heartbeats
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") event = value;
      else if (field === "id") id = value;
      else if (field === "data") data.push(value);
    }
    if (data.length === 0) continue;
    try {
      frames.push({ event, id, data: JSON.parse(data.join("\n")) });
    } catch {
      // Not JSON: the sandbox sends only JSON, so this is not one of its frames.
    }
  }
  return { frames, rest };
}

export interface FollowOptions {
  session: string;
  headers: () => Record<string, string>;
  onEvent: (event: StreamEvent) => void;
  /** Told whether the stream is open, so the page can say "live" or "reconnecting". */
  onState: (state: "live" | "reconnecting" | "stopped", why?: string) => void;
  /** The last request id already shown: the stream starts after it. */
  since?: string;
}

/** Follows the session's events until `stop()`; reconnects after a drop, 1 s later. */
export function followSession(options: FollowOptions): { stop: () => void } {
  const abort = new AbortController();
  let lastId = options.since ?? "";
  let stopped = false;

  const run = async (): Promise<void> => {
    while (!stopped) {
      try {
        const url = `/__sandbox/events?session=${encodeURIComponent(options.session)}`;
        const headers = lastId ? { ...options.headers(), "last-event-id": lastId } : options.headers();
        const res = await fetch(url, { headers, signal: abort.signal });
        if (!res.ok || !res.body) {
          // 404: the session ended; 401: the token is wanted; neither gets better by retrying.
          options.onState("stopped", `the event stream answered ${res.status}`);
          return;
        }
        options.onState("live");
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          const { frames, rest } = parseFrames(buffer + value);
          buffer = rest;
          for (const f of frames) {
            if (f.event === "request" && f.id) lastId = f.id;
            options.onEvent(f);
          }
        }
      } catch (e) {
        if (stopped) return;
        options.onState("reconnecting", e instanceof Error ? e.message : String(e));
      }
      if (!stopped) {
        options.onState("reconnecting");
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  };
  void run();
  return {
    stop: () => {
      stopped = true;
      abort.abort();
      options.onState("stopped");
    },
  };
}
