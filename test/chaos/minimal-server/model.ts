/**
 * The trading model of the minimal server: one market, one route, a mark that walks one tick
 * at a time (seeded), and orders of the bound accounts that fill against the mark: a resting
 * buy fills at its price when the mark reaches it, a crossing order fills at the mark. Prices
 * are kept in ticks and quantities in steps (integers), sent as decimal strings.
 */
import { randomUUID } from 'node:crypto';

export const MARKET_ID = 'BTC-PERP';
export const ROUTE_ID = 'svc-paper';
const TICK = 0.5;
const STEP = 0.001;
const START_BALANCE = 10_000;
const ACTIVE = new Set(['PENDING', 'SUBMITTED', 'OPEN', 'PARTIALLY_FILLED']);

export const price = (ticks: number): string => (ticks * TICK).toFixed(1);
export const quantity = (steps: number): string => (steps * STEP).toFixed(3);
export const iso = (ms: number): string => new Date(ms).toISOString();

export interface OrderState {
  readonly order_id: string;
  readonly request_id: string;
  readonly client_order_id: string;
  readonly side: 'buy' | 'sell';
  readonly type: 'market' | 'limit';
  readonly priceTicks: number | null;
  readonly steps: number;
  readonly time_in_force: string;
  readonly post_only: boolean;
  readonly reduce_only: boolean;
  status: string;
  filledSteps: number;
  notionalTicks: number;
  readonly received_at: number;
  updated_at: number;
  last_event_sequence: number | null;
}

export interface FillState {
  readonly fill_id: string;
  readonly order_id: string;
  readonly side: 'buy' | 'sell';
  readonly steps: number;
  readonly priceTicks: number;
  readonly is_maker: boolean;
  readonly occurred_at: number;
}

export interface VenueEvent {
  readonly sequence: number;
  readonly channel: string;
  readonly frame: Record<string, unknown>;
}

export interface AccountState {
  readonly account_id: string;
  sequence: number;
  readonly events: VenueEvent[];
  readonly orders: OrderState[];
  readonly fills: FillState[];
  /** Signed, in steps. */
  positionSteps: number;
  /** Cash flow of the fills, in quote units (price * quantity, fees subtracted). */
  cash: number;
  snapshot: number;
  deadlineAt: number | null;
  deadlineTimer: NodeJS.Timeout | null;
}

export type EventListener = (account: AccountState, event: VenueEvent) => void;

export class MinimalModel {
  markTicks = 120_000;
  readonly accounts = new Map<string, AccountState>();
  readonly #listeners: EventListener[] = [];
  readonly #deadlineListeners: ((accountId: string) => void)[] = [];
  #orderCounter = 0;
  #fillCounter = 0;
  #random: number;

  constructor(
    seed: string,
    readonly now: () => number,
    /** The dead-man expiry event: this server's own (`deadline.expired`) or the contract's. */
    readonly ownShapes = true,
    /** Additive drift (server.ts): extra keys in every event's data, an event type of its own. */
    readonly additive = false,
    /**
     * Every n-th private event (by sequence), if an order or fill event, breaks its schema: the
     * order event loses `to_state`, the fill event `fee` (0: none). REST answers stay whole.
     */
    readonly breakEvery = 0,
  ) {
    let hash = 2166136261;
    for (const char of seed) hash = Math.imul(hash ^ char.charCodeAt(0), 16777619);
    this.#random = hash >>> 0;
  }

  onEvent(listener: EventListener): void {
    this.#listeners.push(listener);
  }

  onDeadline(listener: (accountId: string) => void): () => void {
    this.#deadlineListeners.push(listener);
    return () => this.#deadlineListeners.splice(this.#deadlineListeners.indexOf(listener), 1);
  }

  /** xorshift32: the same seed, the same walk. */
  #next(): number {
    let x = this.#random;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.#random = x >>> 0;
    return this.#random / 4_294_967_296;
  }

  createAccount(): AccountState {
    const account: AccountState = {
      account_id: `acct-min-${this.accounts.size + 1}`,
      sequence: 0,
      events: [],
      orders: [],
      fills: [],
      positionSteps: 0,
      cash: 0,
      snapshot: 1,
      deadlineAt: null,
      deadlineTimer: null,
    };
    this.accounts.set(account.account_id, account);
    return account;
  }

  /** One step of the mark (down, still, up), pulled back toward where it started. */
  walk(): void {
    const draw = this.#next();
    const pull = (120_000 - this.markTicks) / 400;
    const move = draw < 0.35 - pull ? -1 : draw > 0.65 - pull ? 1 : 0;
    this.moveMarkTo(this.markTicks + move);
  }

  moveMarkTo(ticks: number): void {
    this.markTicks = ticks;
    for (const account of this.accounts.values()) {
      for (const order of account.orders)
        if (ACTIVE.has(order.status)) this.#match(account, order, true);
    }
  }

  isActive(order: OrderState): boolean {
    return ACTIVE.has(order.status);
  }

  #broken(sequence: number, type: string, data: Record<string, unknown>): Record<string, unknown> {
    if (this.breakEvery <= 0 || sequence % this.breakEvery !== 0) return data;
    const field = type === 'authoritative_status' ? 'to_state' : type === 'fill' ? 'fee' : null;
    if (field === null) return data;
    const { [field]: _, ...rest } = data;
    return rest;
  }

  #emit(account: AccountState, channel: string, type: string, data: unknown): number {
    account.sequence += 1;
    const event: VenueEvent = {
      sequence: account.sequence,
      channel,
      frame: {
        version: 1,
        channel,
        sequence: account.sequence,
        event_id: randomUUID(),
        type,
        occurred_at: iso(this.now()),
        data: this.#broken(
          account.sequence,
          type,
          this.additive
            ? {
                ...(data as Record<string, unknown>),
                reason: 'venue',
                actor: 'matching-engine',
                context: { shard: 1, note: 'additive' },
              }
            : (data as Record<string, unknown>),
        ),
        // Other events than the order event are "not shown": a field of its own on them.
        ...(this.ownShapes && channel !== 'orders' ? { partition: 'p-0' } : {}),
      },
    };
    account.events.push(event);
    if (account.events.length > 20_000) account.events.shift();
    for (const listener of this.#listeners) listener(account, event);
    return account.sequence;
  }

  #move(account: AccountState, order: OrderState, to: string): void {
    const from = order.status;
    order.status = to;
    order.updated_at = this.now();
    order.last_event_sequence = this.#emit(account, 'orders', 'authoritative_status', {
      entity_type: 'order',
      entity_id: order.order_id,
      from_state: from,
      to_state: to,
    });
  }

  place(
    account: AccountState,
    request: {
      request_id: string;
      client_order_id: string;
      side: 'buy' | 'sell';
      type: 'market' | 'limit';
      priceTicks: number | null;
      steps: number;
      time_in_force: string;
      post_only: boolean;
      reduce_only: boolean;
    },
  ): OrderState {
    const at = this.now();
    const order: OrderState = {
      ...request,
      order_id: `ord-min-${++this.#orderCounter}`,
      status: 'PENDING',
      filledSteps: 0,
      notionalTicks: 0,
      received_at: at,
      updated_at: at,
      last_event_sequence: null,
    };
    account.orders.push(order);
    return order;
  }

  /** The queued order goes to the book (after its 202 has been written). */
  submit(account: AccountState, order: OrderState): void {
    if (order.status !== 'PENDING') return;
    this.#move(account, order, 'SUBMITTED');
    // An event type the project does not know, on a channel it follows.
    if (this.additive) {
      this.#emit(account, 'orders', 'order.routed', { order_id: order.order_id, venue: 'L1' });
    }
    const crosses = this.#crosses(order);
    if (order.post_only && crosses) {
      this.#move(account, order, 'REJECTED');
      return;
    }
    if (order.type === 'market' || crosses) {
      this.#fill(account, order, order.steps, this.markTicks, false);
      return;
    }
    if (order.time_in_force === 'IOC') {
      this.#move(account, order, 'CANCELLED');
      return;
    }
    this.#move(account, order, 'OPEN');
  }

  #crosses(order: OrderState): boolean {
    if (order.priceTicks === null) return true;
    return order.side === 'buy'
      ? order.priceTicks >= this.markTicks
      : order.priceTicks <= this.markTicks;
  }

  #match(account: AccountState, order: OrderState, maker: boolean): void {
    if (order.status !== 'OPEN' && order.status !== 'PARTIALLY_FILLED') return;
    if (!this.#crosses(order) || order.priceTicks === null) return;
    this.#fill(account, order, order.steps - order.filledSteps, order.priceTicks, maker);
  }

  #fill(
    account: AccountState,
    order: OrderState,
    steps: number,
    ticks: number,
    maker: boolean,
  ): void {
    const fill: FillState = {
      fill_id: `fill-min-${++this.#fillCounter}`,
      order_id: order.order_id,
      side: order.side,
      steps,
      priceTicks: ticks,
      is_maker: maker,
      occurred_at: this.now(),
    };
    account.fills.push(fill);
    order.filledSteps += steps;
    order.notionalTicks += steps * ticks;
    const signed = order.side === 'buy' ? steps : -steps;
    account.positionSteps += signed;
    const notional = steps * STEP * ticks * TICK;
    account.cash -= (signed / steps) * notional + notional * 0.0002;
    account.snapshot += 1;
    // The fill payload is "not shown": this server adds a field of its own to it.
    const payload = this.fillView(fill);
    this.#emit(
      account,
      'fills',
      'fill',
      this.ownShapes ? { ...payload, liquidity: fill.is_maker ? 'maker' : 'taker' } : payload,
    );
    this.#move(account, order, order.filledSteps >= order.steps ? 'FILLED' : 'PARTIALLY_FILLED');
  }

  cancel(account: AccountState, order: OrderState): void {
    if (ACTIVE.has(order.status)) this.#move(account, order, 'CANCELLED');
  }

  cancelAll(account: AccountState, marketId: string | null): OrderState[] {
    const cancelled = account.orders.filter(
      (order) => ACTIVE.has(order.status) && (marketId === null || marketId === MARKET_ID),
    );
    for (const order of cancelled) this.#move(account, order, 'CANCELLED');
    return cancelled;
  }

  setDeadline(account: AccountState, timeoutSeconds: number): number | null {
    if (account.deadlineTimer !== null) clearTimeout(account.deadlineTimer);
    account.deadlineTimer = null;
    if (timeoutSeconds === 0) {
      account.deadlineAt = null;
      return null;
    }
    account.deadlineAt = this.now() + timeoutSeconds * 1000;
    account.deadlineTimer = setTimeout(() => {
      account.deadlineTimer = null;
      const deadline = account.deadlineAt ?? this.now();
      const cancelled = this.cancelAll(account, null).map((order) => order.order_id);
      if (this.ownShapes) this.#emit(account, 'risk', 'deadline.expired', { cancelled });
      else {
        this.#emit(account, 'risk', 'cancel_all_after.triggered', {
          deadline_at: iso(deadline),
          triggered_at: iso(this.now()),
          cancelled_order_ids: cancelled,
        });
      }
      account.deadlineAt = null;
      for (const listener of [...this.#deadlineListeners]) listener(account.account_id);
    }, timeoutSeconds * 1000);
    return account.deadlineAt;
  }

  orderView(order: OrderState): Record<string, unknown> {
    return {
      trading_mode: 'paper',
      request_id: order.request_id,
      order_id: order.order_id,
      client_order_id: order.client_order_id,
      market_id: MARKET_ID,
      route_id: ROUTE_ID,
      side: order.side,
      type: order.type,
      quantity: quantity(order.steps),
      price: order.priceTicks === null ? null : price(order.priceTicks),
      trigger_price: null,
      time_in_force: order.time_in_force,
      post_only: order.post_only,
      reduce_only: order.reduce_only,
      status: order.status,
      execution_stage: ACTIVE.has(order.status)
        ? order.status === 'PENDING'
          ? 'QUEUED'
          : 'WORKING'
        : 'TERMINAL',
      received_at: iso(order.received_at),
      updated_at: iso(order.updated_at),
      filled_quantity: quantity(order.filledSteps),
      average_fill_price:
        order.filledSteps === 0
          ? null
          : ((order.notionalTicks / order.filledSteps) * TICK).toFixed(2),
      last_event_sequence: order.last_event_sequence,
    };
  }

  fillView(fill: FillState): Record<string, unknown> {
    const notional = fill.steps * STEP * fill.priceTicks * TICK;
    return {
      fill_id: fill.fill_id,
      market_id: MARKET_ID,
      route_id: ROUTE_ID,
      side: fill.side,
      quantity: quantity(fill.steps),
      price: price(fill.priceTicks),
      fee: (notional * 0.0002).toFixed(6),
      notional: notional.toFixed(6),
      order_id: fill.order_id,
      is_maker: fill.is_maker,
      occurred_at: iso(fill.occurred_at),
    };
  }

  equity(account: AccountState): number {
    return START_BALANCE + account.cash + account.positionSteps * STEP * this.markTicks * TICK;
  }
}
