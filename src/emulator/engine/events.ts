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
 *
 * A store that keeps records for long (the MemoryStore) packs them into numbers (`pack`, see
 * `PackedColumns`); `EventCodec` reads them back into equal entries. Numbers of a slot: 0
 * sequence, 1 identifier ordinal, 2 time (epoch ms), then per kind; money in its own column.
 */
import {
  type Fill,
  MarketDataStatus,
  OrderStatus,
  type PrivateChannel,
  type PrivateEvent,
} from '../../protocol/index.ts';
import {
  type EventRecord,
  type FillRecord,
  type PackedColumns,
  packMoney,
  type RecordUnpacker,
  unpackMoney,
} from '../store/store.ts';
import { Instant } from './instant.ts';
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

const ORDER_STATUSES: readonly OrderStatus[] = OrderStatus.options;
const DATA_STATUSES: readonly MarketDataStatus[] = MarketDataStatus.options;
/**
 * An integer read from the columns: a small one as a small integer, as the hot path makes them
 * (a double kept in a field changes the field's representation for every entry of that class).
 */
function integer(value: number): number {
  return value <= 0x3fffffff && value >= -0x40000000 ? value | 0 : value;
}

/**
 * What the entries of one exchange share: the wire format for building, and the markets and
 * readers of packed entries.
 */
export class EventCodec {
  readonly status: RecordUnpacker<EventRecord> = {
    unpack: (columns, slot, accountId) => {
      const numbers = columns.numbers;
      const base = slot * columns.numberStride;
      const from = numbers[base + 3]!;
      return new StatusEventEntry(
        this,
        accountId,
        integer(numbers[base]!),
        integer(numbers[base + 1]!),
        new Instant(numbers[base + 2]!),
        columns.refs[slot] as string,
        from < 0 ? null : ORDER_STATUSES[from]!,
        ORDER_STATUSES[numbers[base + 4]!]!,
      );
    },
  };

  readonly account: RecordUnpacker<EventRecord> = {
    unpack: (columns, slot, accountId) => {
      const numbers = columns.numbers;
      const base = slot * columns.numberStride;
      const money = slot * columns.moneyStride;
      return new AccountEventEntry(
        this,
        accountId,
        integer(numbers[base]!),
        integer(numbers[base + 1]!),
        new Instant(numbers[base + 2]!),
        integer(numbers[base + 3]!),
        new Instant(numbers[base + 4]!),
        unpackMoney(columns.money, money),
        unpackMoney(columns.money, money + 2),
        unpackMoney(columns.money, money + 4),
        unpackMoney(columns.money, money + 6),
      );
    },
  };

  readonly position: RecordUnpacker<EventRecord> = {
    unpack: (columns, slot, accountId) => {
      const numbers = columns.numbers;
      const base = slot * columns.numberStride;
      const money = slot * columns.moneyStride;
      return new PositionEventEntry(
        this,
        accountId,
        integer(numbers[base]!),
        integer(numbers[base + 1]!),
        new Instant(numbers[base + 2]!),
        columns.refs[slot] as string,
        this.markets[numbers[base + 3]!]!,
        numbers[base + 4] === 1 ? 1 : -1,
        integer(numbers[base + 5]!),
        unpackMoney(columns.money, money),
        unpackMoney(columns.money, money + 2),
        numbers[base + 6] === 1 ? 'cross' : 'isolated',
        integer(numbers[base + 7]!),
        DATA_STATUSES[numbers[base + 8]!]!,
        unpackMoney(columns.money, money + 4),
        new Instant(numbers[base + 9]!),
        numbers[base + 10] === 1,
      );
    },
  };

  readonly fill: RecordUnpacker<FillEntry> = {
    unpack: (columns, slot, accountId) => {
      const numbers = columns.numbers;
      const base = slot * columns.numberStride;
      const fill = new FillEntry(
        this,
        integer(numbers[base + 1]!),
        accountId,
        this.markets[numbers[base + 3]!]!,
        numbers[base + 4] === 1 ? 'sell' : 'buy',
        integer(numbers[base + 5]!),
        integer(numbers[base + 6]!),
        columns.refs[slot] as string | null,
        numbers[base + 7] === 1,
        new Instant(numbers[base + 2]!),
      );
      fill.sequence = integer(numbers[base]!);
      return fill;
    },
  };

  constructor(
    readonly format: WireFormat,
    /** By ordinal. */
    readonly markets: readonly MarketRuntime[],
  ) {}
}

/** Writes the numbers every slot starts with (sequence, ordinal, time); returns `base`. */
function packHead(
  numbers: Float64Array,
  base: number,
  sequence: number,
  ordinal: number,
  at: Instant,
): number {
  numbers[base] = sequence;
  numbers[base + 1] = ordinal;
  numbers[base + 2] = at.ms;
  return base;
}

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
    protected readonly codec: EventCodec,
    readonly account_id: string,
    readonly sequence: number,
    protected readonly ordinal: number,
    protected readonly at: Instant,
  ) {}

  protected get format(): WireFormat {
    return this.codec.format;
  }

  /** The wire event of this entry: its envelope around `data`. */
  protected wire(channel: PrivateChannel, type: string, data: unknown): PrivateEvent {
    return envelope(this.format, channel, this.sequence, this.ordinal, type, this.at, data);
  }

  /** Writes the common part; returns the slot's first index. */
  protected packHead(numbers: Float64Array, base: number): number {
    return packHead(numbers, base, this.sequence, this.ordinal, this.at);
  }

  abstract pack(columns: PackedColumns, slot: number): RecordUnpacker<EventRecord> | null;

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
    codec: EventCodec,
    accountId: string,
    sequence: number,
    ordinal: number,
    at: Instant,
    private readonly orderId: string,
    private readonly from: OrderStatus | null,
    private readonly to: OrderStatus,
  ) {
    super(codec, accountId, sequence, ordinal, at);
  }

  pack(columns: PackedColumns, slot: number): RecordUnpacker<EventRecord> | null {
    if (columns.numberStride < 5) return null;
    const numbers = columns.numbers;
    const base = this.packHead(numbers, slot * columns.numberStride);
    numbers[base + 3] = this.from === null ? -1 : ORDER_STATUSES.indexOf(this.from);
    numbers[base + 4] = ORDER_STATUSES.indexOf(this.to);
    columns.refs[slot] = this.orderId;
    return this.codec.status;
  }

  protected build(): PrivateEvent {
    return this.wire('orders', 'authoritative_status', {
      entity_type: 'execution_intent',
      entity_id: this.orderId,
      from_state: this.from,
      to_state: this.to,
    });
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
    codec: EventCodec,
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
    super(codec, accountId, sequence, ordinal, at);
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

  pack(columns: PackedColumns, slot: number): RecordUnpacker<EventRecord> | null {
    if (columns.numberStride < 11 || columns.moneyStride < 6) return null;
    const money = slot * columns.moneyStride;
    if (
      !packMoney(columns.money, money, this.costBasis) ||
      !packMoney(columns.money, money + 2, this.margin) ||
      !packMoney(columns.money, money + 4, this.collateral)
    ) {
      return null;
    }
    const numbers = columns.numbers;
    const base = this.packHead(numbers, slot * columns.numberStride);
    numbers[base + 3] = this.market.ordinal;
    numbers[base + 4] = this.direction;
    numbers[base + 5] = this.steps;
    numbers[base + 6] = this.marginMode === 'cross' ? 1 : 0;
    numbers[base + 7] = this.markTicks;
    numbers[base + 8] = DATA_STATUSES.indexOf(this.dataStatus);
    numbers[base + 9] = this.observedAt.ms;
    numbers[base + 10] = this.closed ? 1 : 0;
    columns.refs[slot] = this.positionId;
    return this.codec.position;
  }

  protected build(): PrivateEvent {
    const data = this.closed
      ? closedPositionToWire(this, this.format)
      : positionToWire(this, this.format);
    return this.wire('positions', 'position', data);
  }
}

export class AccountEventEntry extends EventEntry {
  constructor(
    codec: EventCodec,
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
    super(codec, accountId, sequence, ordinal, at);
  }

  pack(columns: PackedColumns, slot: number): RecordUnpacker<EventRecord> | null {
    if (columns.numberStride < 5 || columns.moneyStride < 8) return null;
    const money = slot * columns.moneyStride;
    if (
      !packMoney(columns.money, money, this.totalEquity) ||
      !packMoney(columns.money, money + 2, this.available) ||
      !packMoney(columns.money, money + 4, this.inPositions) ||
      !packMoney(columns.money, money + 6, this.unrealizedPnl)
    ) {
      return null;
    }
    const numbers = columns.numbers;
    const base = this.packHead(numbers, slot * columns.numberStride);
    numbers[base + 3] = this.snapshotVersion;
    numbers[base + 4] = this.observedAt.ms;
    columns.refs[slot] = null;
    return this.codec.account;
  }

  protected build(): PrivateEvent {
    const data = accountToWire(
      this.account_id,
      this.snapshotVersion,
      this.observedAt,
      this,
      this.format,
    );
    return this.wire('account', 'account', data);
  }
}

/**
 * A rare event whose data is built when it happens: a liquidation or cancel-all-after (risk
 * channel), a funding payment (account channel).
 */
export class DataEventEntry extends EventEntry {
  constructor(
    codec: EventCodec,
    accountId: string,
    sequence: number,
    ordinal: number,
    at: Instant,
    private readonly channel: PrivateChannel,
    private readonly type: string,
    private readonly data: unknown,
  ) {
    super(codec, accountId, sequence, ordinal, at);
  }

  /** Rare, and its data is an object: kept as it is. */
  pack(): null {
    return null;
  }

  protected build(): PrivateEvent {
    return this.wire(this.channel, this.type, this.data);
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
    private readonly codec: EventCodec,
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

  private get format(): WireFormat {
    return this.codec.format;
  }

  pack(columns: PackedColumns, slot: number): RecordUnpacker<FillEntry> | null {
    if (columns.numberStride < 8) return null;
    const numbers = columns.numbers;
    const base = packHead(
      numbers,
      slot * columns.numberStride,
      this.sequence,
      this.ordinal,
      this.at,
    );
    numbers[base + 3] = this.market.ordinal;
    numbers[base + 4] = this.side === 'sell' ? 1 : 0;
    numbers[base + 5] = this.steps;
    numbers[base + 6] = this.priceTicks;
    numbers[base + 7] = this.isMaker ? 1 : 0;
    columns.refs[slot] = this.orderId;
    return this.codec.fill;
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
