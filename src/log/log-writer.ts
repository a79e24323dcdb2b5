import sonicBoom from "sonic-boom";

// A CommonJS module: Node's ESM loader gives its module.exports (the class, which carries itself as
// .SonicBoom) as the default export, and no named ones.
const { SonicBoom } = sonicBoom;

/**
 * Where `serve` writes its log: stdout, through sonic-boom (pino's destination). Request lines are
 * gathered and written a few kilobytes at a time instead of one write(2) per request (a pipe write
 * per line cost about a quarter of a protected call's throughput); lines about the server itself
 * (listening, stopping) are written at once. What a reader sees is unchanged: the same lines, in order.
 *
 * A reader that cannot keep up, or that went away, never stops the server:
 * - stdout full (EAGAIN: `serve | slow-reader`): lines wait in memory, tried again every
 *   FULL_RETRY_MS (not at each line: a failing write(2) per line would slow the server); past
 *   MAX_WAITING_BYTES, a new line first tries to write what waits and is dropped if it still does not
 *   fit (sonic-boom's `maxLength`). The server keeps answering and its memory stays bounded.
 * - stdout closed (EPIPE: `serve | head -1`): the log stops; the server goes on.
 * - On exit, what is waiting is written synchronously, for at most EXIT_FLUSH_MS if stdout stays full.
 */
export interface LogWriter {
  /** Queues one line (without its newline); written within FLUSH_EVERY_MS, sooner under load. */
  line(text: string): void;
  /** Writes one line and everything before it now (in order): lines people and supervisors wait for. */
  lineNow(text: string): void;
  /** Writes what waits, synchronously: call before the process exits. Never throws. */
  flushSync(): void;
}

/** A write(2) once this much waits (sonic-boom's `minLength`; it must be below its 16 KiB `maxWrite`). */
const BATCH_BYTES = 4096;
/** A quiet server's lines are written at most this late. */
const FLUSH_EVERY_MS = 10;
/** What may wait for a reader that does not read (~10,000 request lines) before lines are dropped. */
const MAX_WAITING_BYTES = 1024 * 1024;
/** A full stdout is tried again this often (sonic-boom's own pause on EAGAIN). */
const FULL_RETRY_MS = 100;
/** At exit, how long a full stdout is waited for before the lines still waiting are given up. */
const EXIT_FLUSH_MS = 1000;

export function stdoutLogWriter(fd = 1): LogWriter {
  // Retried in place (sonic-boom sleeps between tries) only while exiting: a full pipe must never
  // block the event loop while the server answers; the lines wait in memory instead.
  let retryUntil = 0;
  const boom = new SonicBoom({
    fd,
    sync: true,
    minLength: BATCH_BYTES,
    maxLength: MAX_WAITING_BYTES,
    retryEAGAIN: () => Date.now() < retryUntil,
  });
  // sonic-boom reads its minLength at each write and flush but does not type it: it is changed below.
  const batching = boom as unknown as { minLength: number };
  let closed = false;
  let flushTimer: ReturnType<typeof setTimeout> | undefined;
  /** What waits is written `ms` from now (once: the first to ask sets the time). */
  const flushIn = (ms: number) => {
    // Unref'd: this timer alone never keeps the process alive (the exit flush writes what is left).
    if (flushTimer === undefined) flushTimer = setTimeout(flushWaiting, ms).unref();
  };
  /** stdout was full at the last write: write() stops trying (a failing write(2) per line is dear: docs/performance.md#the-request-log-and-the-event-streams). */
  let full = false;
  /**
   * Writes everything that waits, now, in order, until stdout is full. flush(), not flushSync(): in
   * sync mode it writes at once and keeps the unwritten rest of a partial write exactly once (4.2.1's
   * flushSync, with retries off, throws on EAGAIN yet keeps a chunk it had partly written: sent
   * twice), and it does not fsync (a disk flush on the event loop when stdout is a file). EAGAIN
   * reaches `failed` through 'error'.
   */
  const writeWaiting = () => {
    if (closed) return;
    full = false;
    // flush() writes chunk after chunk while more than minLength waits: 1 writes them all.
    batching.minLength = 1;
    boom.flush();
    batching.minLength = full ? MAX_WAITING_BYTES : BATCH_BYTES;
  };
  const flushWaiting = () => {
    flushTimer = undefined;
    writeWaiting();
  };
  /** A write failed: stdout full (EAGAIN), the lines wait and are tried again; anything else (EPIPE), nobody will read them. */
  const failed = (e: NodeJS.ErrnoException) => {
    if (closed) return;
    if (e.code === "EAGAIN") {
      // write() tries again only once 1 MiB waits (never, in effect): the retry timer does.
      full = true;
      batching.minLength = MAX_WAITING_BYTES;
      return flushIn(FULL_RETRY_MS);
    }
    closed = true;
    if (flushTimer !== undefined) clearTimeout(flushTimer);
    boom.destroy();
  };
  boom.on("error", failed);
  // Past MAX_WAITING_BYTES sonic-boom drops a line without trying to write: try once (the reader may
  // be reading again), then queue the line again, so the log resumes as soon as the reader does
  // rather than at the next retry. Dropped for good if it still does not fit.
  let retryingDrop = false;
  boom.on("drop", (data: string) => {
    if (closed || retryingDrop) return;
    retryingDrop = true;
    try {
      writeWaiting();
      if (!closed) boom.write(data);
    } finally {
      retryingDrop = false;
    }
  });
  /** At exit: writes what waits, waiting up to `waitMs` for a full stdout, then gives the rest up. */
  const writeBeforeExit = (waitMs: number) => {
    if (closed) return;
    retryUntil = Date.now() + waitMs;
    try {
      boom.flushSync();
    } catch (e) {
      failed(e as NodeJS.ErrnoException);
    } finally {
      retryUntil = 0;
    }
  };
  return {
    line: (text) => {
      if (closed) return;
      boom.write(`${text}\n`);
      // A quiet server's lines go out FLUSH_EVERY_MS after the first of them; under load a write(2)
      // happens each BATCH_BYTES anyway. (sonic-boom's periodicFlush would write, even nothing,
      // every period forever.)
      flushIn(FLUSH_EVERY_MS);
    },
    lineNow: (text) => {
      if (closed) return;
      boom.write(`${text}\n`);
      writeWaiting();
    },
    flushSync: () => writeBeforeExit(EXIT_FLUSH_MS),
  };
}
