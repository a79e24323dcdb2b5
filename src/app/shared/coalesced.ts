/**
 * `work` for concurrent callers: one run at a time, shared by everyone who calls while it is under
 * way, and, since a run under way may have started before a caller came, one more run after it,
 * shared by every caller who came meanwhile. A caller is answered only by a run that began after
 * it called.
 */
export function coalesced(work: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  const run = (): Promise<void> => {
    if (!running) {
      running = work().finally(() => {
        running = undefined;
      });
      return running;
    }
    queued ??= running
      .catch(() => {})
      .then(() => {
        queued = undefined;
        return run();
      });
    return queued;
  };
  return run;
}
