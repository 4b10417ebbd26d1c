/**
 * Builders of wire objects from the engine's working state or from snapshots of it. Decimal
 * strings are made here, at the edge, from integer ticks/steps and bigint money; the hot path
 * only captures numbers (events.ts) and these run when someone reads the result.
 */
import {
  type Account,
  executionStageOfStatus,
  type Fill,
  formatTimestamp,
  type MarketDataStatus,
  type Order,
  type Position,
} from '../../protocol/index.ts';
import { type Instant, InstantSource } from './instant.ts';
import type { OrderRecord } from '../store/store.ts';
import {
  DERIVED_QUANTUM,
  divideRounded,
  formatMoney,
  MONEY_ONE,
  MONEY_SCALE,
  parseScaled,
} from './fixed.ts';
import type { EngineIdentifiers } from './identifiers.ts';
import { type AccountFigures, unrealizedPnl } from './margin.ts';
import { BUY } from './order-book.ts';
import { type MarketRuntime, type OrderState, ROUTE_ID, SETTLEMENT_ASSET } from './state.ts';

export { formatMoney };

/** Identifier kinds: each kind draws UUIDs from its own space of the seeded identifier source. */
export const KIND_ORDER = 1;
export const KIND_FILL = 2;
export const KIND_EVENT = 3;
export const KIND_POSITION = 4;
export const KIND_TRADE = 5;
export const KIND_ACCOUNT = 6;
/** Trades of the seeded past (before the exchange opened): a space of their own. */
export const KIND_PAST_TRADE = 7;

const DAY_MS = 86_400_000;
/** "00" to "99", for the two-digit fields of a time of day. */
const TWO_DIGITS: readonly string[] = Array.from({ length: 100 }, (_, value) =>
  String(value).padStart(2, '0'),
);
/** "000" to "999", for the milliseconds. */
const THREE_DIGITS: readonly string[] = Array.from({ length: 1000 }, (_, value) =>
  String(value).padStart(3, '0'),
);

/**
 * Identifiers and timestamps for wire objects. Both are pure functions of a number (an ordinal,
 * an epoch millisecond), so snapshots keep the number and the text is made when it is read.
 */
export class WireFormat {
  private readonly instants = new InstantSource();
  private lastMs = Number.NaN;
  private lastText = '';
  /** The UTC day of the last timestamp made in full: its first millisecond and its date text. */
  private dayStart = Number.NaN;
  private dayPrefix = '';

  constructor(private readonly ids: EngineIdentifiers) {}

  /** The shared Instant of `epochMs` (see instant.ts). */
  instant(epochMs: number): Instant {
    return this.instants.at(epochMs);
  }

  /** RFC 3339 text of an Instant, kept in it. */
  text(instant: Instant): string {
    let text = instant.text;
    if (text === null) {
      text = this.timestamp(instant.ms);
      instant.text = text;
    }
    return text;
  }

  uuid(kind: number, ordinal: number): string {
    return this.ids.uuid(kind, ordinal);
  }

  /**
   * RFC 3339 text of `epochMs`, as `formatTimestamp` writes it. Within the UTC day of the last
   * one made in full, the time of day is written from its digits (`Date` costs about a
   * microsecond a call, and a replay asks for a new millisecond at almost every command).
   */
  timestamp(epochMs: number): string {
    if (epochMs === this.lastMs) return this.lastText;
    let text: string;
    const ofDay = epochMs - this.dayStart;
    if (ofDay >= 0 && ofDay < DAY_MS && Number.isInteger(epochMs)) {
      const seconds = Math.floor(ofDay / 1000);
      const minutes = Math.floor(seconds / 60);
      text =
        this.dayPrefix +
        TWO_DIGITS[Math.floor(minutes / 60)]! +
        ':' +
        TWO_DIGITS[minutes % 60]! +
        ':' +
        TWO_DIGITS[seconds % 60]! +
        '.' +
        THREE_DIGITS[ofDay % 1000]! +
        'Z';
    } else {
      text = formatTimestamp(epochMs);
      // "YYYY-MM-DDT": the same for every millisecond of this day.
      this.dayStart = epochMs - (((epochMs % DAY_MS) + DAY_MS) % DAY_MS);
      this.dayPrefix = text.slice(0, 11);
    }
    this.lastMs = epochMs;
    this.lastText = text;
    return text;
  }
}

/** 10^18 / 10^-10 quantum: numerator × 10^18 / (denominator × quantum) is numerator × this / denominator. */
const RATIO_FACTOR = MONEY_ONE / DERIVED_QUANTUM;

/** `numerator / denominator` for two 10^-18 amounts, as a 10^-18 amount rounded to 10^-10. */
export function ratioScaled(numerator: bigint, denominator: bigint): bigint {
  // The same fraction as numerator × 10^18 / (denominator × 10^8), on smaller integers.
  return divideRounded(numerator * RATIO_FACTOR, denominator, 'half-even') * DERIVED_QUANTUM;
}

export function sideText(side: number): 'buy' | 'sell' {
  return side === BUY ? 'buy' : 'sell';
}

export function averageFillPrice(order: OrderState): string | null {
  if (order.filledSteps === 0) return null;
  return formatMoney(
    ratioScaled(order.filledNotional, order.market.step.scaledOf(order.filledSteps)),
  );
}

export function orderToWire(order: OrderState, format: WireFormat): Order {
  const market = order.market;
  return {
    trading_mode: 'paper',
    execution_account_id: order.account.id,
    request_id: order.requestId,
    order_id: order.id,
    client_order_id: order.clientOrderId,
    market_id: market.id,
    route_id: ROUTE_ID,
    side: sideText(order.side),
    type: order.type,
    quantity: market.step.format(order.quantitySteps),
    price: order.priceTicks === null ? null : market.tick.format(order.priceTicks),
    trigger_price: null,
    time_in_force: order.timeInForce,
    post_only: order.postOnly,
    reduce_only: order.reduceOnly,
    status: order.status,
    execution_stage: executionStageOfStatus[order.status],
    received_at: format.text(order.receivedAt),
    updated_at: format.text(order.updatedAt),
    filled_quantity: market.step.format(order.filledSteps),
    average_fill_price: averageFillPrice(order),
    last_event_sequence: order.lastEventSequence,
    provenance: null,
    error: order.error === null ? null : { code: order.error.code, message: order.error.message },
  };
}

/**
 * The wire object of an order read back from the store (one the exchange released from
 * memory): the same object `orderToWire` gave for it, from the record's decimal strings.
 */
export function orderRecordToWire(
  record: OrderRecord,
  market: MarketRuntime,
  format: WireFormat,
): Order {
  const filledSteps = market.step.unitsOf(record.filled_quantity) ?? 0;
  const filledNotional = parseScaled(record.filled_notional, MONEY_SCALE) ?? 0n;
  return {
    trading_mode: 'paper',
    execution_account_id: record.account_id,
    request_id: record.request_id,
    order_id: record.order_id,
    client_order_id: record.client_order_id,
    market_id: market.id,
    route_id: ROUTE_ID,
    side: record.side,
    type: record.type,
    quantity: record.quantity,
    price: record.price,
    trigger_price: null,
    time_in_force: record.time_in_force,
    post_only: record.post_only,
    reduce_only: record.reduce_only,
    status: record.status,
    execution_stage: executionStageOfStatus[record.status],
    received_at: format.timestamp(record.received_at),
    updated_at: format.timestamp(record.updated_at),
    filled_quantity: record.filled_quantity,
    average_fill_price:
      filledSteps === 0
        ? null
        : formatMoney(ratioScaled(filledNotional, market.step.scaledOf(filledSteps))),
    last_event_sequence: record.last_event_sequence,
    provenance: null,
    error:
      record.error === null ? null : { code: record.error.code, message: record.error.message },
  };
}

/**
 * One execution of an account, as captured when it happened. Its notional is price × quantity
 * and its fee follows from the market's fixed rates, so neither needs keeping.
 */
export interface FillSnapshot {
  readonly ordinal: number;
  readonly market: MarketRuntime;
  readonly side: 'buy' | 'sell';
  readonly steps: number;
  readonly priceTicks: number;
  /** Null for a liquidation: closed at the mark against the insurance fund, without a fee. */
  readonly orderId: string | null;
  readonly isMaker: boolean;
  readonly at: Instant;
}

export function fillToWire(fill: FillSnapshot, format: WireFormat): Fill {
  const market = fill.market;
  return {
    fill_id: format.uuid(KIND_FILL, fill.ordinal),
    market_id: market.id,
    route_id: ROUTE_ID,
    side: fill.side,
    quantity: market.step.format(fill.steps),
    price: market.tick.format(fill.priceTicks),
    fee: fill.orderId === null ? '0' : market.formatFee(fill.priceTicks, fill.steps, fill.isMaker),
    notional: market.formatNotional(fill.priceTicks, fill.steps),
    order_id: fill.orderId,
    is_maker: fill.isMaker,
    occurred_at: format.text(fill.at),
  };
}

/** A position's figures at one instant; everything derived (PnL, liquidation) follows from it. */
export interface PositionSnapshot {
  readonly positionId: string;
  readonly market: MarketRuntime;
  readonly direction: 1 | -1;
  readonly steps: number;
  readonly costBasis: bigint;
  readonly margin: bigint;
  readonly marginMode: 'cross' | 'isolated';
  readonly markTicks: number;
  readonly dataStatus: MarketDataStatus;
  /**
   * What backs the position against liquidation: its margin (isolated), or the cross collateral
   * plus the other cross positions' PnL less their maintenance margin (cross).
   */
  readonly collateral: bigint;
  readonly observedAt: Instant;
}

function leverageOf(snapshot: PositionSnapshot): string | null {
  return snapshot.margin > 0n
    ? formatMoney(ratioScaled(snapshot.costBasis, snapshot.margin))
    : null;
}

export function positionToWire(snapshot: PositionSnapshot, format: WireFormat): Position {
  const market = snapshot.market;
  const quantity = market.step.scaledOf(snapshot.steps);
  const value = market.notional(snapshot.markTicks, snapshot.steps);
  const liquidation = market.liquidationTicks(
    snapshot.direction,
    snapshot.steps,
    snapshot.costBasis,
    snapshot.collateral,
  );
  return {
    position_id: snapshot.positionId,
    market_id: market.id,
    route_id: ROUTE_ID,
    side: snapshot.direction === 1 ? 'long' : 'short',
    quantity: market.step.format(snapshot.steps),
    entry_price: formatMoney(ratioScaled(snapshot.costBasis, quantity)),
    margin_mode: snapshot.marginMode,
    observed_at: format.text(snapshot.observedAt),
    data_status: snapshot.dataStatus,
    mark_price: market.tick.format(snapshot.markTicks),
    position_value: market.formatNotional(snapshot.markTicks, snapshot.steps),
    unrealized_pnl: formatMoney(unrealizedPnl(snapshot.direction, snapshot.costBasis, value)),
    leverage: leverageOf(snapshot),
    liquidation_price: liquidation === null ? null : market.tick.format(liquidation),
  };
}

/** The last state of a position that just closed, sent once more with quantity 0. */
export function closedPositionToWire(snapshot: PositionSnapshot, format: WireFormat): Position {
  const market = snapshot.market;
  const quantity = market.step.scaledOf(snapshot.steps);
  return {
    position_id: snapshot.positionId,
    market_id: market.id,
    route_id: ROUTE_ID,
    side: snapshot.direction === 1 ? 'long' : 'short',
    quantity: '0',
    entry_price: formatMoney(ratioScaled(snapshot.costBasis, quantity)),
    margin_mode: snapshot.marginMode,
    observed_at: format.text(snapshot.observedAt),
    data_status: snapshot.dataStatus,
    mark_price: market.tick.format(snapshot.markTicks),
    position_value: '0',
    unrealized_pnl: '0',
    leverage: leverageOf(snapshot),
    liquidation_price: null,
  };
}

export function accountToWire(
  accountId: string,
  snapshotVersion: number,
  observedAt: Instant,
  figures: AccountFigures,
  format: WireFormat,
): Account {
  return {
    trading_mode: 'paper',
    settlement_asset: SETTLEMENT_ASSET,
    account_id: accountId,
    snapshot_version: snapshotVersion,
    observed_at: format.text(observedAt),
    total_equity: formatMoney(figures.totalEquity),
    available: formatMoney(figures.available),
    in_positions: formatMoney(figures.inPositions),
    unrealized_pnl: formatMoney(figures.unrealizedPnl),
    complete: true,
    data_status: 'live',
  };
}
