/**
 * Emulated exits: stop, take-profit and trailing orders the venue does not offer, held by the
 * runtime and released as ordinary orders when their trigger fires. A record is plain data
 * (decimal strings, no `Decimal`), so it goes to the journal and back unchanged.
 */
import { type ExitTrigger, type Side, TriggerSource } from '../intents.ts';

export type { TriggerSource } from '../intents.ts';

export const TRIGGER_SOURCES: readonly TriggerSource[] = TriggerSource.options;

/**
 * - `pending`: a bracket's exit, waiting for its entry to fill before it starts watching;
 * - `waiting`: watching its trigger;
 * - `triggered`: fired; the order it releases is being handed to the gate and the executor;
 * - `released`: the order was handed on (its fate is an ordinary intent's outcome);
 * - `cancelled`: taken down (by the strategy, its OCO partner, a flat position or a refusal).
 */
export type ExitState = 'pending' | 'waiting' | 'triggered' | 'released' | 'cancelled';
export const LIVE_EXIT_STATES: readonly ExitState[] = ['pending', 'waiting', 'triggered'];

/** What fires the exit (the intent's `ExitTrigger`; semantics in `trigger.ts`). */
export type TriggerRule = ExitTrigger;

/** A trailing stop's memory: whether it is active and the best price seen since. */
export interface TrailingState {
  readonly active: boolean;
  /** The highest price seen (a sell) or the lowest (a buy); null until active. */
  readonly extreme: string | null;
}

/** The order released when the trigger fires. */
export type ReleasedOrder =
  | { readonly type: 'market'; readonly maxSlippagePercent?: string | undefined }
  | { readonly type: 'limit'; readonly price: string };

export interface EmulatedExit {
  /** The exit's client order id, as the strategy names it in a cancel or an amend. */
  readonly id: string;
  readonly strategyId: string;
  /** The sequence of the intent that created it (a release is journaled under it). */
  readonly sequence: number;
  readonly marketId: string;
  /** The side of the order released: a sell protects a long, a buy a short. */
  readonly side: Side;
  readonly quantity: string;
  readonly rule: TriggerRule;
  readonly source: TriggerSource;
  readonly order: ReleasedOrder;
  readonly reduceOnly: boolean;
  readonly tag?: string | undefined;
  /** Exits of one group cancel each other: the first to fire takes the others down. */
  readonly ocoGroup: string | null;
  /** A bracket's entry (its client order id): the exit is `pending` until it fills. */
  readonly parentId: string | null;
  readonly state: ExitState;
  readonly trailing: TrailingState | null;
  /** The request (and client order) id of the order released; set when it fires. */
  readonly releaseId: string | null;
  /** The price that fired it, or why it was cancelled. */
  readonly triggerPrice: string | null;
  readonly reason: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** The request id of the order an exit releases: the exit's id and a fixed suffix. */
export function releaseIdOf(exitId: string): string {
  return `${exitId}:x`;
}
