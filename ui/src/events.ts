/**
 * The live feed of one session: GET /__sandbox/events?session=… read with fetch, not EventSource,
 * because EventSource cannot send the admin token header. The frames are Server-Sent Events; on a
 * dropped stream it reconnects with Last-Event-ID, and the sandbox replays the requests and the
 * session's history entries missed.
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
  /**
   * Told whether the stream is open, so the page can say "live" or "reconnecting"; when it stopped
   * because the sandbox refused it, `status` says why (404: the session ended; 401: the admin token).
   */
  onState: (state: "live" | "reconnecting" | "stopped", status?: number) => void;
  /** The last request id already shown: the stream starts after it. */
  since?: string;
  /** The fetch to use (tests pass their own); the page's own by default. */
  fetch?: typeof fetch;
  /** Waits before reconnecting: the first time 1 s, doubling up to 15 s while it keeps failing. */
  wait?: (ms: number) => Promise<void>;
}

/** Answers that retrying cannot change: the session is gone, or the admin token is wanted or wrong. */
const FINAL_STATUSES = new Set([400, 401, 403, 404]);

/**
 * Follows the session's events until `stop()`. A dropped stream, a 429 (the sandbox's subscriber
 * limit) or a 5xx is retried, with Last-Event-ID so the missed requests are replayed; a refusal
 * that retrying cannot change stops it, with its status.
 */
export function followSession(options: FollowOptions): { stop: () => void } {
  const abort = new AbortController();
  const fetchStream = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  const wait = options.wait ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  let lastId = options.since ?? "";
  let stopped = false;
  let delay = 1000;

  const run = async (): Promise<void> => {
    while (!stopped) {
      try {
        const url = `/__sandbox/events?session=${encodeURIComponent(options.session)}`;
        const headers = lastId ? { ...options.headers(), "last-event-id": lastId } : options.headers();
        const res = await fetchStream(url, { headers, signal: abort.signal });
        if (FINAL_STATUSES.has(res.status)) {
          stopped = true;
          options.onState("stopped", res.status);
          return;
        }
        if (res.ok && res.body) {
          options.onState("live");
          delay = 1000;
          const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
          let buffer = "";
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            const { frames, rest } = parseFrames(buffer + value);
            buffer = rest;
            for (const f of frames) {
              // A history entry's id (req_N.M) is a place in the replay too: it is not sent again.
              if ((f.event === "request" || f.event === "history") && f.id) lastId = f.id;
              options.onEvent(f);
            }
          }
        }
      } catch {
        // A network error or the stream cut: retried below, like a 429 or a 5xx.
      }
      if (stopped) return;
      options.onState("reconnecting");
      await wait(delay);
      delay = Math.min(delay * 2, 15_000);
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
