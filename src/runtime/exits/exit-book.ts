/**
 * The exits the emulator holds: the live ones by id, in creation order (the order OCO picks a
 * winner in), and the recently finished ones for the strategy's view. Every change is saved
 * through `ExitStore` (the journal's `emulated_exits` table) before it is applied, so a
 * restarted bot restores its live exits and never fires one twice.
 */
import type { Clock } from '../../core/clock.ts';
import type { StampedIntent } from '../intents.ts';
import { initialTrailing } from './trigger.ts';
import { type EmulatedExit, LIVE_EXIT_STATES } from './types.ts';

/** Where exits are kept across restarts (the journal's `emulated_exits` table). */
export interface ExitStore {
  save(exit: EmulatedExit): void;
  /** Exits in a live state (`pending`, `waiting`, `triggered`), oldest first. */
  live(): readonly EmulatedExit[];
  /** Whether the executor's journal holds an intent with this request id. */
  hasIntent(requestId: string): boolean;
}

/** What an exit is made of besides its identity, trailing memory and history. */
export type ExitFields = Pick<
  EmulatedExit,
  | 'marketId'
  | 'side'
  | 'quantity'
  | 'rule'
  | 'source'
  | 'order'
  | 'reduceOnly'
  | 'tag'
  | 'ocoGroup'
  | 'parentId'
  | 'state'
>;

export class ExitBook {
  /** Live exits by id, in creation order. */
  readonly live = new Map<string, EmulatedExit>();
  private readonly finished: EmulatedExit[] = [];

  constructor(
    private readonly store: ExitStore | null,
    private readonly clock: Clock,
    private readonly recentFinished: number,
    /** Called with an exit that left the live set (its price feed may be unused now). */
    private readonly onLeft: (exit: EmulatedExit) => void,
  ) {}

  /** A restored exit, held as it was journaled. */
  hold(exit: EmulatedExit): void {
    this.live.set(exit.id, exit);
  }

  /** Makes, journals and holds a new exit for the intent `stamped`. */
  create(stamped: StampedIntent, id: string, fields: ExitFields): EmulatedExit {
    const now = this.clock.now();
    const exit: EmulatedExit = Object.freeze({
      id,
      strategyId: stamped.strategyId,
      sequence: stamped.sequence,
      ...fields,
      rule: Object.freeze({ ...fields.rule }),
      order: Object.freeze({ ...fields.order }),
      trailing: initialTrailing(fields.rule),
      releaseId: null,
      triggerPrice: null,
      reason: null,
      createdAt: now,
      updatedAt: now,
    });
    this.store?.save(exit);
    this.live.set(id, exit);
    return exit;
  }

  /** Journals a change, then applies it; a finished exit leaves the live set. */
  update(id: string, change: Partial<EmulatedExit>): EmulatedExit | undefined {
    const current = this.live.get(id);
    if (current === undefined) return undefined;
    const next: EmulatedExit = Object.freeze({
      ...current,
      ...change,
      updatedAt: this.clock.now(),
    });
    this.store?.save(next);
    if (LIVE_EXIT_STATES.includes(next.state)) {
      this.live.set(id, next);
    } else {
      this.live.delete(id);
      this.finished.push(next);
      if (this.finished.length > this.recentFinished) this.finished.shift();
      this.onLeft(next);
    }
    return next;
  }

  /** One strategy's exits, live and recently finished, oldest first. */
  exitsOf(strategyId: string): readonly EmulatedExit[] {
    return [...this.finished, ...this.live.values()]
      .filter((exit) => exit.strategyId === strategyId)
      .sort((a, b) => a.sequence - b.sequence || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }
}
