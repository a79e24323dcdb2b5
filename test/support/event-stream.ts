/**
 * A bounded reader of a Server-Sent Events answer over real HTTP: `next(k)` resolves with the next
 * k events (comment lines skipped). The timeout only turns a hang into a failure that says what
 * arrived; no test asserts on it.
 */
export interface SseEvent {
  event: string;
  id?: string;
  data: string;
}

export interface EventStream {
  status: number;
  headers: Headers;
  /** The whole body, for an answer that is not a stream (a refusal). */
  text(): Promise<string>;
  next(k: number, guardMs?: number): Promise<SseEvent[]>;
  /** Resolves when the server ends the stream, with the events that came before the end. */
  untilEnd(guardMs?: number): Promise<SseEvent[]>;
  close(): void;
}

export async function openEventStream(url: string, headers: Record<string, string> = {}): Promise<EventStream> {
  const abort = new AbortController();
  const res = await fetch(url, { headers, signal: abort.signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  const ready: SseEvent[] = [];
  let ended = false;

  const parse = () => {
    for (let cut = buffered.indexOf("\n\n"); cut >= 0; cut = buffered.indexOf("\n\n")) {
      const block = buffered.slice(0, cut);
      buffered = buffered.slice(cut + 2);
      const event: SseEvent = { event: "message", data: "" };
      let any = false;
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(": ");
        const [name, value] = colon < 0 ? [line, ""] : [line.slice(0, colon), line.slice(colon + 2)];
        if (name === "event") event.event = value;
        else if (name === "id") event.id = value;
        else if (name === "data") event.data = value;
        any = true;
      }
      if (any) ready.push(event);
    }
  };

  const readUntil = async (done: () => boolean, guardMs: number, what: string) => {
    const guard = setTimeout(() => abort.abort(), guardMs);
    try {
      while (!done() && !ended) {
        const chunk = await reader.read();
        if (chunk.done) {
          ended = true;
          break;
        }
        buffered += decoder.decode(chunk.value, { stream: true });
        parse();
      }
    } catch (e) {
      throw new Error(`${what}: the stream gave ${JSON.stringify(ready)} before ${String(e)}`);
    } finally {
      clearTimeout(guard);
    }
  };

  return {
    status: res.status,
    headers: res.headers,
    text: async () => {
      let all = "";
      for (let c = await reader.read(); !c.done; c = await reader.read()) all += decoder.decode(c.value, { stream: true });
      return all;
    },
    async next(k, guardMs = 5000) {
      await readUntil(() => ready.length >= k, guardMs, `waiting for ${k} events`);
      if (ready.length < k) throw new Error(`the stream ended after ${JSON.stringify(ready)}, ${k} events were expected`);
      return ready.splice(0, k);
    },
    async untilEnd(guardMs = 5000) {
      await readUntil(() => false, guardMs, "waiting for the end");
      return ready.splice(0);
    },
    close: () => abort.abort(),
  };
}
