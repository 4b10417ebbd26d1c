/**
 * A first-in first-out queue on an array with a moving head, compacted when the head passes
 * half of it: push and shift cost O(1) amortized. For the bounded "forget the oldest" memories
 * of a map or set, where `keys().next()` skips every entry deleted since the table last
 * compacted (some microseconds per call once thousands were).
 */
export class FifoQueue<T> {
  private items: T[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** The oldest item, removed; undefined when empty. */
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head]!;
    this.head += 1;
    if (this.head > 1_024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** Keeps only the items `keep` accepts, in order. */
  keep(keep: (item: T) => boolean): void {
    const kept: T[] = [];
    for (let index = this.head; index < this.items.length; index++) {
      const item = this.items[index]!;
      if (keep(item)) kept.push(item);
    }
    this.items = kept;
    this.head = 0;
  }
}
