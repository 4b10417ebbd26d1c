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
  /** One past the newest item: the slots from here on are free (an emptied queue keeps them). */
  private tail = 0;

  get size(): number {
    return this.tail - this.head;
  }

  push(item: T): void {
    // Into a free slot when there is one: a queue that empties and refills (the replay venue's,
    // a few items per intent) reuses its array instead of growing a new one each time.
    if (this.tail < this.items.length) this.items[this.tail] = item;
    else this.items.push(item);
    this.tail += 1;
  }

  /**
   * The oldest item, removed; undefined when empty. Its slot is cleared at once, so the queue
   * keeps nothing it handed back alive, and an emptied queue starts over at the front (a large
   * one with a new array, so a burst does not keep its memory).
   */
  shift(): T | undefined {
    if (this.head >= this.tail) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head += 1;
    if (this.head === this.tail) {
      if (this.items.length > 1_024) this.items = [];
      this.head = 0;
      this.tail = 0;
    } else if (this.head > 1_024 && this.head * 2 > this.tail) {
      this.items = this.items.slice(this.head, this.tail);
      this.tail -= this.head;
      this.head = 0;
    }
    return item;
  }

  /** Keeps only the items `keep` accepts, in order. */
  keep(keep: (item: T) => boolean): void {
    const kept: (T | undefined)[] = [];
    for (let index = this.head; index < this.tail; index++) {
      const item = this.items[index] as T;
      if (keep(item)) kept.push(item);
    }
    this.items = kept;
    this.head = 0;
    this.tail = kept.length;
  }
}
