/**
 * A first-in first-out queue on an array with a moving head, compacted when the head passes
 * half of it: push and shift cost O(1) amortized (`Array.prototype.shift` copies a long array).
 * For the bounded "forget the oldest" memories of a map or set, where `keys().next()` skips
 * every entry deleted since the table last compacted (some microseconds per call once thousands
 * were), and for the replay venue's commands in flight.
 */
export class FifoQueue<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /**
   * The oldest item, removed; undefined when empty. Its slot is cleared at once, so the queue
   * keeps nothing it handed back alive, and an emptied queue starts over at the front.
   */
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head += 1;
    if (this.head === this.items.length) {
      this.items.length = 0;
      this.head = 0;
    } else if (this.head > 1_024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** Keeps only the items `keep` accepts, in order. */
  keep(keep: (item: T) => boolean): void {
    const kept: (T | undefined)[] = [];
    for (let index = this.head; index < this.items.length; index++) {
      const item = this.items[index] as T;
      if (keep(item)) kept.push(item);
    }
    this.items = kept;
    this.head = 0;
  }
}
