/**
 * What an object made that replicas sharing its state must store (issued-token records, signing
 * keys), on its way to a commit: handed to the request that made it when its sink takes it, else
 * kept for the next commit to take, and given back, first, when that commit fails. Closed until
 * `open`: an object whose state is not shared keeps nothing.
 */
export class Outbox<T, Context = void> {
  private items: T[] | undefined;
  private sink: ((item: T, context: Context) => boolean) | undefined;

  /** Whether the object's state is shared (open was called). */
  get isOpen(): boolean {
    return this.items !== undefined;
  }

  /**
   * From now on keeps what is made (`first`: made before, taken first), unless `sink` takes it
   * (true): the request that made it carries it in its own commit.
   */
  open(sink?: (item: T, context: Context) => boolean, first: readonly T[] = []): void {
    this.sink = sink;
    this.items ??= [...first];
  }

  /** Something made: to the sink, or kept; nothing while closed. */
  put(item: T, context: Context): void {
    if (this.items !== undefined && !this.sink?.(item, context)) this.items.push(item);
  }

  /** Everything kept since the last take, oldest first. */
  take(): T[] {
    const taken = this.items;
    if (taken === undefined || taken.length === 0) return [];
    this.items = [];
    return taken;
  }

  /** Items taken whose commit failed: taken again, first, by the next take. */
  requeue(items: readonly T[]): void {
    if (this.items === undefined || items.length === 0) return;
    this.items = [...items, ...this.items];
  }

  /** Everything kept is dropped (the state was cleared). */
  clear(): void {
    if (this.items) this.items.length = 0;
  }
}
