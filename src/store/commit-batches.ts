import type { CommitRequest, CommitResult } from "../core/state-store.js";

interface Waiting {
  readonly request: CommitRequest;
  readonly resolve: (result: CommitResult) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Commits made in one turn of the event loop, sent together: one call, one write on the
 * connection and one script run for all of them, each still applied or refused on its own. A
 * batch goes at the end of the turn (setImmediate), or at once when `max` are waiting; batches do
 * not wait for each other's answers, so a slow one never holds up the next.
 */
export class CommitBatches {
  #waiting: Waiting[] = [];
  #scheduled = false;

  constructor(
    /** Sends the commits in one call: a result for each, in order, or one error for all. */
    private readonly send: (requests: CommitRequest[]) => Promise<CommitResult[]>,
    private readonly max: number,
  ) {}

  commit(request: CommitRequest): Promise<CommitResult> {
    return new Promise<CommitResult>((resolve, reject) => {
      this.#waiting.push({ request, resolve, reject });
      if (this.#waiting.length >= this.max) this.#flush();
      else if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => {
          this.#scheduled = false;
          this.#flush();
        });
      }
    });
  }

  #flush(): void {
    const batch = this.#waiting;
    if (batch.length === 0) return;
    this.#waiting = [];
    this.send(batch.map((w) => w.request)).then(
      (results) => {
        for (const [i, w] of batch.entries()) w.resolve(results[i]!);
      },
      (error: unknown) => {
        for (const w of batch) w.reject(error);
      },
    );
  }
}
