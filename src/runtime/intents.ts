/**
 * Order intents: what a strategy asks for. A strategy never calls the venue; it emits intents,
 * every intent passes the risk gate, then the executor turns it into venue commands.
 *
 * Decimal fields are decimal strings (interface rule 1), so nothing a strategy computes reaches
 * the wire through binary floating point. Intents are immutable once emitted (design rule 9).
 */

export type Side = 'buy' | 'sell';
export type MarginMode = 'cross' | 'isolated';
export type TimeInForce = 'GTC' | 'IOC';

export interface PlaceIntent {
  readonly kind: 'place';
  readonly marketId: string;
  readonly side: Side;
  readonly type: 'market' | 'limit';
  /** Decimal string; rounded down to the market's quantity step by the gate. */
  readonly quantity: string;
  /** Decimal string, required for limit orders; rounded to the tick in the owner's favour. */
  readonly price?: string | undefined;
  readonly timeInForce?: TimeInForce | undefined;
  readonly postOnly?: boolean | undefined;
  readonly reduceOnly?: boolean | undefined;
  /** Integer leverage; defaults to the strategy's configured leverage, else 1. */
  readonly leverage?: number | undefined;
  readonly marginMode?: MarginMode | undefined;
  /** Decimal string in (0, 2]; market orders only. Defaults to the runtime's configuration. */
  readonly maxSlippagePercent?: string | undefined;
  /** A free label the strategy uses to recognise its own orders (kept locally, not sent). */
  readonly tag?: string | undefined;
}

/** Cancels one of the strategy's orders, named by the client order id the runtime gave it. */
export interface CancelIntent {
  readonly kind: 'cancel';
  readonly clientOrderId: string;
  readonly tag?: string | undefined;
}

/** Cancels the account's active orders, on one market or all of them. */
export interface CancelAllIntent {
  readonly kind: 'cancel_all';
  readonly marketId?: string | undefined;
  readonly tag?: string | undefined;
}

/** Replaces one of the strategy's orders (Practice: cancel, confirm, new order). */
export interface AmendIntent {
  readonly kind: 'amend';
  readonly clientOrderId: string;
  readonly price?: string | undefined;
  /**
   * The order's new TOTAL size, filled part included: the replacement is placed for this total
   * minus what the old order had filled by the time it was cancelled (nothing, if that leaves
   * zero or less).
   */
  readonly quantity?: string | undefined;
  readonly tag?: string | undefined;
}

/** Closes a percentage of the position on a market (the runtime finds the position id). */
export interface ClosePositionIntent {
  readonly kind: 'close_position';
  readonly marketId: string;
  /** Decimal string in (0, 100]; default 100. */
  readonly quantityPercent?: string | undefined;
  readonly maxSlippagePercent?: string | undefined;
  readonly tag?: string | undefined;
}

/**
 * The price an emulated exit watches: the ticker's mark, the last public trade, or the book's
 * touch on the side the released order trades against (best bid for a sell, best ask for a buy).
 */
export type TriggerSource = 'mark' | 'last' | 'bid_ask';

/** What fires an emulated exit (see `runtime/exits/trigger.ts`). */
export type ExitTrigger =
  | { readonly kind: 'stop'; readonly price: string }
  | { readonly kind: 'take_profit'; readonly price: string }
  | {
      readonly kind: 'trailing';
      /** A price distance; exactly one of `offset` and `offsetPercent`. */
      readonly offset?: string | undefined;
      /** Percent of the best price seen, in (0, 100). */
      readonly offsetPercent?: string | undefined;
      readonly activationPrice?: string | undefined;
    };

/**
 * A stop, take-profit or trailing order the venue does not offer: the runtime holds it, watches
 * its trigger on every tick, and when it fires places an ordinary order (market, or limit at
 * `limitPrice`) through the risk gate and the executor. Reduce-only unless said otherwise: an
 * exit protects a position. Nothing protects the position while the bot is down.
 */
export interface ExitIntent {
  readonly kind: 'exit';
  readonly marketId: string;
  readonly side: Side;
  readonly quantity: string;
  readonly trigger: ExitTrigger;
  /** Default `mark`. */
  readonly triggerSource?: TriggerSource | undefined;
  /** Released as a limit order at this price; a market order without it. */
  readonly limitPrice?: string | undefined;
  readonly maxSlippagePercent?: string | undefined;
  /** Default true. */
  readonly reduceOnly?: boolean | undefined;
  readonly tag?: string | undefined;
}

/** A bracket's stop-loss or take-profit: its trigger price, and a limit price for a limit exit. */
export interface BracketLeg {
  readonly triggerPrice: string;
  readonly limitPrice?: string | undefined;
}

/**
 * An entry order with an attached stop-loss and take-profit, one-cancels-other. The entry is
 * placed at once; the exits start watching when it fills, for the quantity it filled, on the
 * opposite side, reduce-only. The first exit to fire cancels the other.
 */
export interface BracketIntent {
  readonly kind: 'bracket';
  readonly entry: PlaceIntent;
  readonly stopLoss?: BracketLeg | undefined;
  readonly takeProfit?: BracketLeg | undefined;
  /** Default `mark`. */
  readonly triggerSource?: TriggerSource | undefined;
  readonly tag?: string | undefined;
}

/** Intents the runtime holds itself (emulated exits), never sent to the venue as they are. */
export type EmulatedIntent = ExitIntent | BracketIntent;

export type OrderIntent =
  PlaceIntent | CancelIntent | CancelAllIntent | AmendIntent | ClosePositionIntent | EmulatedIntent;

/**
 * An intent as the runtime tracks it: stamped with the emitting strategy, its sequence and the
 * ids derived from them. The ids are deterministic, so a restart or a replay gives the same ids
 * to the same intents, and a resend after a timeout never gets a second id.
 */
export interface StampedIntent {
  readonly strategyId: string;
  readonly sequence: number;
  readonly requestId: string;
  /** The client order id of the order this intent creates (place, amend, close); else null. */
  readonly clientOrderId: string | null;
  readonly intent: OrderIntent;
  /** Epoch milliseconds on the runtime's clock when the intent was emitted. */
  readonly emittedAt: number;
}

/** Why the risk gate refused an intent: the rule, its limit and what was observed. */
export interface Denial {
  readonly rule: string;
  readonly limit: string;
  readonly observed: string;
  readonly message: string;
}

export type IntentOutcome =
  | {
      readonly status: 'denied';
      readonly intent: StampedIntent;
      readonly denials: readonly Denial[];
    }
  | {
      readonly status: 'rejected';
      readonly intent: StampedIntent;
      readonly code: string;
      readonly message: string;
      readonly issues?: readonly unknown[];
    }
  | { readonly status: 'accepted'; readonly intent: StampedIntent; readonly orderId: string | null }
  | { readonly status: 'unknown'; readonly intent: StampedIntent; readonly reason: string }
  | {
      readonly status: 'resolved';
      readonly intent: StampedIntent;
      readonly resolution: 'accepted' | 'rejected';
      readonly orderId: string | null;
    }
  | {
      readonly status: 'filled';
      readonly intent: StampedIntent;
      readonly orderId: string;
      readonly filledQuantity: string;
      readonly averagePrice: string | null;
    };

const ID_CHARACTERS = /[^A-Za-z0-9:_-]/g;

/**
 * The request id of a strategy's n-th intent: `<strategy>:<epoch>:<sequence>`. The epoch is
 * fixed when a journal is created, so two journals (say, a deleted one and its replacement)
 * never reuse ids against the same account. Ids keep to the interface's character set and
 * 8..80 length; client order ids (1..100) use the same text.
 */
export function intentRequestId(strategyId: string, epoch: string, sequence: number): string {
  const strategy = strategyId.replace(ID_CHARACTERS, '_').slice(0, 40);
  const id = `${strategy}:${epoch.replace(ID_CHARACTERS, '_').slice(0, 16)}:${sequence}`;
  return id.length >= 8 ? id : id.padEnd(8, '_');
}

/** Request ids of the runtime's own commands (simulate, heartbeat, reconciliation cancels). */
export function internalRequestId(purpose: string, epoch: string, sequence: number): string {
  return intentRequestId(`pb-${purpose}`, epoch, sequence);
}

/**
 * The text every request id and client order id of one strategy under one journal epoch starts
 * with (`<strategy>:<epoch>:`), so the runtime can recognise a strategy's orders after a restart.
 */
export function intentIdPrefix(strategyId: string, epoch: string): string {
  const strategy = strategyId.replace(ID_CHARACTERS, '_').slice(0, 40);
  return `${strategy}:${epoch.replace(ID_CHARACTERS, '_').slice(0, 16)}:`;
}
