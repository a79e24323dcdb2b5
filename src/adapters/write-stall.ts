import type { Socket } from "node:net";

/**
 * What the server holds for clients that do not read, bounded twice. Once a write leaves a buffer's
 * worth (`writableHighWaterMark`) waiting on a socket, the socket is stalled: it must drain within
 * `timeoutMs`, or it is destroyed and what waited for it freed; and the stalled sockets together
 * may hold at most `budgetBytes`, past which the longest stalled are destroyed at once, so the
 * bound holds however many connections are opened. Without this, a client that asks for a large
 * answer (the journal, an event stream) and never reads holds it in memory as long as it keeps the
 * connection open. A client that reads, however slowly, drains and is left alone; less than a
 * buffer's worth waiting is left to the kernel's socket buffers.
 * One per server: which sockets are stalled is its own state, never the module's.
 */
export class WriteStallGuard {
  /** Stalled sockets with their timers, longest stalled first (a Map keeps insertion order). */
  private readonly stalled = new Map<Socket, { timer: ReturnType<typeof setTimeout>; drained: () => void }>();

  constructor(
    private readonly timeoutMs: number,
    private readonly budgetBytes: number,
  ) {
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1) throw new RangeError(`writeTimeoutMs must be a whole number of at least 1, got ${timeoutMs}`);
  }

  /** A buffer's worth waits on `socket` for its client: it must not be given more to hold. */
  isStalled(socket: Socket): boolean {
    return this.stalled.has(socket);
  }

  /** Called after each write to `socket`: starts its clock if that write left it a buffer behind. */
  wrote(socket: Socket | null | undefined): void {
    if (!socket || socket.destroyed) return;
    if (!this.stalled.has(socket)) {
      if (socket.writableLength < socket.writableHighWaterMark) return;
      const drained = () => {
        const entry = this.stalled.get(socket);
        if (!entry) return;
        clearTimeout(entry.timer);
        this.stalled.delete(socket);
        // 'drain' when emptied; 'finish' instead once the socket is ending (Connection: close).
        socket.off("drain", drained).off("finish", drained).off("close", drained);
      };
      const timer = setTimeout(() => this.cut(socket), this.timeoutMs);
      // The timer alone must not keep a library user's process alive.
      timer.unref();
      this.stalled.set(socket, { timer, drained });
      socket.on("drain", drained).on("finish", drained).on("close", drained);
    }
    this.keepWithinBudget();
  }

  private keepWithinBudget(): void {
    let held = 0;
    for (const socket of this.stalled.keys()) held += socket.writableLength;
    for (const socket of this.stalled.keys()) {
      if (held <= this.budgetBytes) return;
      held -= socket.writableLength;
      this.cut(socket);
    }
  }

  private cut(socket: Socket): void {
    this.stalled.get(socket)?.drained();
    socket.destroy();
  }
}
