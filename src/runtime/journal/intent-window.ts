/**
 * The bounded intent window of a replay's journal (`JournalOptions.intentWindow`): which
 * settled intents may leave it, so a replay of days of data holds a window of intents instead
 * of every one.
 *
 * An intent leaves only when nothing in the runtime can ask for it again: it is settled (no open
 * state), at least `size` newer intents were journaled after it, and, when it made a venue
 * order (a placement, an amendment, a close), that order reached a terminal status, as the
 * order events the tracker records tell (`recordOrderEvent`, live and in a replay). Lookups by order id and by client order id serve live
 * orders only (their fills, their amendments, the reconciler), and a closed order's last
 * events were applied long before `size` more intents came. An intent that must stay goes back
 * to the end of the queue and is looked at again later.
 */
import { type IntentState, OPEN_INTENT_STATES } from './schema.ts';

/** What the window reads of an intent (the journal's `IntentRecord` has it). */
export interface WindowedIntent {
  readonly requestId: string;
  readonly kind: string;
  readonly state: IntentState;
  readonly orderId: string | null;
}

/** A sweep looks at the intents beyond the window once per this many new intents. */
const SWEEP_EVERY = 1_024;

/** Kinds whose rows are found by the order they made. */
const ORDER_KINDS: ReadonlySet<string> = new Set(['place', 'amend', 'close_position']);

/**
 * `Item` is how the journal names an intent to itself (the replay journal's slot of a record),
 * so a sweep reads each intent without a lookup by request id.
 */
export class IntentWindow<Item> {
  /** Intents in journal order from `head` (a queue; the array is compacted now and then). */
  private queue: Item[] = [];
  private head = 0;
  private sinceSweep = 0;
  /** Orders that reached a terminal status while an intent of theirs may still be held. */
  private readonly closedOrders = new Set<string>();

  constructor(readonly size: number) {}

  /** Notes a new intent; true when a sweep is due. */
  noteIntent(item: Item): boolean {
    this.queue.push(item);
    this.sinceSweep += 1;
    return this.sinceSweep >= SWEEP_EVERY && this.queue.length - this.head > this.size;
  }

  noteOrderClosed(orderId: string): void {
    this.closedOrders.add(orderId);
    // Orders of no intent would stay forever: beyond a generous bound the oldest go (their
    // intents then stay, which is safe).
    if (this.closedOrders.size > 8 * this.size + SWEEP_EVERY) {
      const oldest = this.closedOrders.values().next();
      if (oldest.done !== true) this.closedOrders.delete(oldest.value);
    }
  }

  /** Whether a settled intent may leave (see the file's comment). */
  mayLeave(record: WindowedIntent): boolean {
    if (OPEN_INTENT_STATES.includes(record.state)) return false;
    if (!ORDER_KINDS.has(record.kind)) return true;
    if (record.orderId !== null) return this.closedOrders.has(record.orderId);
    // No order: refused or denied ones never made one; any other state might have.
    return record.state === 'rejected' || record.state === 'denied';
  }

  /**
   * The intents beyond the window that may leave, oldest first; `read` gives an intent's current
   * record (undefined: already gone). The ones that must stay are queued again.
   */
  sweep<Intent extends WindowedIntent>(read: (item: Item) => Intent | undefined): Intent[] {
    this.sinceSweep = 0;
    const leaving: Intent[] = [];
    // Bounded work per sweep: intents that must stay are looked at again at every sweep.
    const excess = Math.min(this.queue.length - this.head - this.size, 4 * SWEEP_EVERY);
    for (let index = 0; index < excess; index++) {
      const item = this.queue[this.head]!;
      this.head += 1;
      const record = read(item);
      if (record === undefined) continue;
      if (this.mayLeave(record)) {
        leaving.push(record);
        if (record.orderId !== null) this.closedOrders.delete(record.orderId);
      } else {
        this.queue.push(item);
      }
    }
    if (this.head > this.queue.length / 2) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    return leaving;
  }
}
