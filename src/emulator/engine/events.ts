/**
 * Private events and fills as compact records. On the hot path the exchange captures values
 * (ordinals, ticks, steps, bigint money, the shared Instant); the wire object (`event`, `fill`)
 * is built from them only when someone reads it: a listener, `listEvents`, `listFills`, or a
 * store that serializes. A built object is kept only while the exchange pins it (during the
 * delivery of one unit of work), so a store that keeps the records keeps the compact form: one
 * object per event (a fill and its event are one object), which matters because a store that
 * keeps hundreds of thousands of them makes the garbage collector copy each one.
 *
 * Every captured value is immutable (numbers, strings, bigints, an Instant's millisecond), so a
 * record built later gives exactly the object the engine would have built when it happened.
 */
import type { Fill, MarketDataStatus, OrderStatus, PrivateEvent } from '../../protocol/index.ts';
import type { EventRecord, FillRecord } from '../store/store.ts';
import type { Instant } from './instant.ts';
import type { MarketRuntime } from './state.ts';
import {
  accountToWire,
  closedPositionToWire,
  type FillSnapshot,
  fillToWire,
  KIND_EVENT,
  type PositionSnapshot,
  positionToWire,
  type WireFormat,
} from './wire.ts';

type RiskEvent = Extract<PrivateEvent, { channel: 'risk' }>;

function envelope(
  format: WireFormat,
  channel: string,
  sequence: number,
  ordinal: number,
  type: string,
  at: Instant,
  data: unknown,
): PrivateEvent {
  return {
    version: 1,
    channel,
    sequence,
    event_id: format.uuid(KIND_EVENT, ordinal),
    type,
    occurred_at: format.text(at),
    data,
  } as PrivateEvent;
}

/** An event of the orders, positions, account or risk channel. */
export abstract class EventEntry implements EventRecord {
  private pinned: PrivateEvent | null = null;

  constructor(
    protected readonly format: WireFormat,
    readonly account_id: string,
    readonly sequence: number,
    protected readonly ordinal: number,
    protected readonly at: Instant,
  ) {}

  /** The wire event (built on each read unless pinned). */
  get event(): PrivateEvent {
    return this.pinned ?? this.build();
  }

  /** Builds the event once and keeps it until `unpin()`. */
  pin(): PrivateEvent {
    if (this.pinned === null) this.pinned = this.build();
    return this.pinned;
  }

  unpin(): void {
    this.pinned = null;
  }

  protected abstract build(): PrivateEvent;
}

export class StatusEventEntry extends EventEntry {
  constructor(
    format: WireFormat,
    accountId: string,
    sequence: number,
    ordinal: number,
    at: Instant,
    private readonly orderId: string,
    private readonly from: OrderStatus | null,
    private readonly to: OrderStatus,
  ) {
    super(format, accountId, sequence, ordinal, at);
  }

  protected build(): PrivateEvent {
    return envelope(
      this.format,
      'orders',
      this.sequence,
      this.ordinal,
      'authoritative_status',
      this.at,
      {
        entity_type: 'execution_intent',
        entity_id: this.orderId,
        from_state: this.from,
        to_state: this.to,
      },
    );
  }
}

/** A position's figures at one instant, for reads and for the snapshot of a closing position. */
export class PositionCapture implements PositionSnapshot {
  constructor(
    readonly positionId: string,
    readonly market: MarketRuntime,
    readonly direction: 1 | -1,
    readonly steps: number,
    readonly costBasis: bigint,
    readonly margin: bigint,
    readonly marginMode: 'cross' | 'isolated',
    readonly markTicks: number,
    readonly dataStatus: MarketDataStatus,
    readonly collateral: bigint,
    readonly observedAt: Instant,
  ) {}
}

/** A `position` event: the snapshot is held in the entry itself. */
export class PositionEventEntry extends EventEntry implements PositionSnapshot {
  readonly positionId: string;
  readonly market: MarketRuntime;
  readonly direction: 1 | -1;
  readonly steps: number;
  readonly costBasis: bigint;
  readonly margin: bigint;
  readonly marginMode: 'cross' | 'isolated';
  readonly markTicks: number;
  readonly dataStatus: MarketDataStatus;
  readonly collateral: bigint;
  readonly observedAt: Instant;

  /** The snapshot's fields are given one by one: an open position's need no object in between. */
  constructor(
    format: WireFormat,
    accountId: string,
    sequence: number,
    ordinal: number,
    at: Instant,
    positionId: string,
    market: MarketRuntime,
    direction: 1 | -1,
    steps: number,
    costBasis: bigint,
    margin: bigint,
    marginMode: 'cross' | 'isolated',
    markTicks: number,
    dataStatus: MarketDataStatus,
    collateral: bigint,
    observedAt: Instant,
    /** A position that just closed: sent with quantity 0. */
    private readonly closed: boolean,
  ) {
    super(format, accountId, sequence, ordinal, at);
    this.positionId = positionId;
    this.market = market;
    this.direction = direction;
    this.steps = steps;
    this.costBasis = costBasis;
    this.margin = margin;
    this.marginMode = marginMode;
    this.markTicks = markTicks;
    this.dataStatus = dataStatus;
    this.collateral = collateral;
    this.observedAt = observedAt;
  }

  protected build(): PrivateEvent {
    const data = this.closed
      ? closedPositionToWire(this, this.format)
      : positionToWire(this, this.format);
    return envelope(
      this.format,
      'positions',
      this.sequence,
      this.ordinal,
      'position',
      this.at,
      data,
    );
  }
}

export class AccountEventEntry extends EventEntry {
  constructor(
    format: WireFormat,
    accountId: string,
    sequence: number,
    ordinal: number,
    at: Instant,
    private readonly snapshotVersion: number,
    private readonly observedAt: Instant,
    readonly totalEquity: bigint,
    readonly available: bigint,
    readonly inPositions: bigint,
    readonly unrealizedPnl: bigint,
  ) {
    super(format, accountId, sequence, ordinal, at);
  }

  protected build(): PrivateEvent {
    const data = accountToWire(
      this.account_id,
      this.snapshotVersion,
      this.observedAt,
      this,
      this.format,
    );
    return envelope(this.format, 'account', this.sequence, this.ordinal, 'account', this.at, data);
  }
}

/** A rare event (liquidation, cancel-all-after) whose data is built when it happens. */
export class RiskEventEntry extends EventEntry {
  constructor(
    format: WireFormat,
    accountId: string,
    sequence: number,
    ordinal: number,
    at: Instant,
    private readonly type: RiskEvent['type'],
    private readonly data: RiskEvent['data'],
  ) {
    super(format, accountId, sequence, ordinal, at);
  }

  protected build(): PrivateEvent {
    return envelope(
      this.format,
      'risk',
      this.sequence,
      this.ordinal,
      this.type,
      this.at,
      this.data,
    );
  }
}

/**
 * One execution of an account: the fill record the store keeps and, once `announce` gave it
 * its sequence, the `fill` event carrying it (the event's data is the fill itself).
 */
export class FillEntry implements FillRecord, EventRecord, FillSnapshot {
  sequence = 0;
  /** The built event while pinned; its `data` is the fill. */
  private pinned: PrivateEvent | null = null;

  constructor(
    private readonly format: WireFormat,
    readonly ordinal: number,
    readonly account_id: string,
    readonly market: MarketRuntime,
    readonly side: 'buy' | 'sell',
    readonly steps: number,
    readonly priceTicks: number,
    readonly orderId: string | null,
    readonly isMaker: boolean,
    readonly at: Instant,
  ) {}

  /**
   * Gives the fill its event: the account's sequence and the event's identifier ordinal. The
   * exchange announces a fill right after making it, so the event's ordinal is the fill's plus
   * one, and the event is stamped with the fill's time; the record keeps no ordinal of its own
   * for the event (it is kept by the hundred thousand), and refuses an announcement that would
   * need one.
   */
  announce(sequence: number, eventOrdinal: number): this {
    if (eventOrdinal !== this.ordinal + 1) {
      throw new Error('a fill event must follow its fill at once');
    }
    this.sequence = sequence;
    return this;
  }

  get market_id(): string {
    return this.market.id;
  }

  get fill(): Fill {
    const pinned = this.pinned;
    return pinned === null ? fillToWire(this, this.format) : (pinned.data as Fill);
  }

  get event(): PrivateEvent {
    return this.pinned ?? this.buildEvent(fillToWire(this, this.format));
  }

  pin(): PrivateEvent {
    if (this.pinned === null) this.pinned = this.buildEvent(fillToWire(this, this.format));
    return this.pinned;
  }

  unpin(): void {
    this.pinned = null;
  }

  private buildEvent(fill: Fill): PrivateEvent {
    return envelope(this.format, 'fills', this.sequence, this.ordinal + 1, 'fill', this.at, fill);
  }
}

/** What the exchange queues per event: pinned for delivery, then left compact for the store. */
export type PendingEvent = EventEntry | FillEntry;
