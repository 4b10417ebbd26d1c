/**
 * Reads of the exchange: public market data (routes, markets, book, trades, candles, tickers)
 * and an account's private data (account, positions, orders, fills, events, readiness), pages
 * with their cursors, and the wire objects built from the working state (with `wire.ts`).
 * Reads change nothing; orders the account no longer keeps in memory come from the store's
 * order archive.
 */
import {
  type Account,
  type Book,
  type Candle,
  type CandleInterval,
  type EventsPage,
  type FillPage,
  type Market,
  type Order,
  type OrderPage,
  type OrderStatus,
  type Position,
  type PositionPage,
  type PublicTrade,
  type Route,
  type RouteReadiness,
  type TickerData,
  type VenueAccount,
} from '../../protocol/index.ts';
import type { OrderRecord } from '../store/store.ts';
import { formatMoney } from './fixed.ts';
import type { Accounting } from './accounting.ts';
import type { CandleBar } from './candles.ts';
import type { EngineContext } from './context.ts';
import { ExchangeError, invalidRequest } from './errors.ts';
import { BUY, SELL } from './order-book.ts';
import type { SeededPast } from './seeded-past.ts';
import {
  type AccountState,
  type HeldOrder,
  type MarketRuntime,
  OrderState,
  type PositionState,
  ROUTE_ID,
  SETTLEMENT_ASSET,
  type TradeEntry,
} from './state.ts';
import {
  accountToWire,
  KIND_ORDER,
  KIND_PAST_TRADE,
  KIND_TRADE,
  orderRecordToWire,
  orderToWire,
  positionToWire,
} from './wire.ts';

export interface OrderListQuery {
  readonly limit: number;
  readonly cursor?: string | undefined;
  readonly market_id?: string | undefined;
  readonly route_id?: string | undefined;
  readonly status?: OrderStatus | undefined;
}

export interface FillListQuery {
  readonly limit: number;
  readonly cursor?: string | undefined;
  readonly market_id?: string | undefined;
  readonly route_id?: string | undefined;
}

export interface PositionListQuery {
  readonly limit: number;
  readonly cursor?: string | undefined;
}

export const ROUTE_CAPABILITIES = {
  order_types: ['market', 'limit'],
  time_in_force: ['GTC', 'IOC'],
  post_only: true,
  reduce_only: true,
  attached_exits: false,
  amendment: 'cancel_replace',
  batch_atomicity: 'non_atomic',
  cancel_all_after: 'supported',
} as const;

function encodeCursor(ordinal: number): string {
  return `c${ordinal.toString(36)}`;
}

function decodeCursor(cursor: string | undefined): number | undefined {
  if (cursor === undefined) return undefined;
  const match = /^c([0-9a-z]{1,11})$/.exec(cursor);
  const value = match ? Number.parseInt(match[1]!, 36) : Number.NaN;
  if (!Number.isSafeInteger(value)) {
    throw invalidRequest([
      { type: 'value_error', loc: ['query', 'cursor'], msg: 'Unknown or malformed cursor' },
    ]);
  }
  return value;
}

export class Reads {
  constructor(
    private readonly context: EngineContext,
    private readonly accounting: Accounting,
  ) {}

  // ---------------------------------------------------------------- public data

  listRoutes(): Route[] {
    return [this.routeWire()];
  }

  listMarkets(): Market[] {
    return this.context.markets.map((market) => this.marketWire(market));
  }

  getMarket(marketId: string): Market {
    return this.marketWire(this.context.marketOf(marketId));
  }

  getBook(marketId: string, depth: number): Book {
    const context = this.context;
    const market = context.marketOf(marketId);
    const level = (view: { priceTicks: number; steps: number; orderCount: number }) => ({
      price: market.tick.format(view.priceTicks),
      quantity: market.step.format(view.steps),
      order_count: view.orderCount,
    });
    return {
      market_id: market.id,
      route_id: ROUTE_ID,
      market_structure: 'order_book',
      sequence: null,
      checksum: null,
      bids: market.book.depth(BUY, depth).map(level),
      asks: market.book.depth(SELL, depth).map(level),
      oracle: null,
      observed_at: context.timestamp(context.clock.now()),
    };
  }

  /** Newest first. */
  listTrades(marketId: string, limit: number): PublicTrade[] {
    const context = this.context;
    const market = context.marketOf(marketId);
    const trades: PublicTrade[] = [];
    for (let index = market.trades.length - 1; index >= 0 && trades.length < limit; index--) {
      trades.push(tradeToWire(context, market, market.trades[index]!, KIND_TRADE));
    }
    return trades;
  }

  /** Oldest first; only intervals that saw a trade. */
  listCandles(marketId: string, interval: CandleInterval, limit: number): Candle[] {
    const context = this.context;
    const market = context.marketOf(marketId);
    return market.candles
      .latest(interval, limit)
      .map((bar) => candleToWire(context, market, interval, bar));
  }

  /**
   * The live trades followed by the seeded past's (before the exchange opened), newest first:
   * what the trades endpoint serves. `listTrades` alone is the live engine's.
   */
  listTradesWithPast(marketId: string, limit: number, past: SeededPast): PublicTrade[] {
    const trades = this.listTrades(marketId, limit);
    if (trades.length >= limit) return trades;
    const context = this.context;
    const market = context.marketOf(marketId);
    const before = market.trades.length > 0 ? market.trades[0]!.at : Number.POSITIVE_INFINITY;
    for (const trade of past.trades(market, limit - trades.length, before)) {
      trades.push(tradeToWire(context, market, trade, KIND_PAST_TRADE));
    }
    return trades;
  }

  /**
   * The seeded past's candles followed by the live ones, oldest first: what the candles endpoint
   * serves. A bucket that holds both (an hour the exchange opened in) is one candle.
   */
  listCandlesWithPast(
    marketId: string,
    interval: CandleInterval,
    limit: number,
    past: SeededPast,
  ): Candle[] {
    const context = this.context;
    const market = context.marketOf(marketId);
    // One more than served: if the live series holds more than `limit`, the past is not reached.
    const live = market.candles.latest(interval, limit + 1);
    let bars: CandleBar[] = [...live];
    if (live.length <= limit) {
      const firstLive = live[0];
      const earlier = past
        .candles(market, interval, limit - live.length + 1, Number.POSITIVE_INFINITY)
        .filter((bar) => firstLive === undefined || bar.openTime <= firstLive.openTime);
      const shared = earlier[earlier.length - 1];
      if (firstLive !== undefined && shared?.openTime === firstLive.openTime) {
        earlier[earlier.length - 1] = {
          openTime: shared.openTime,
          open: shared.open,
          high: Math.max(shared.high, firstLive.high),
          low: Math.min(shared.low, firstLive.low),
          close: firstLive.close,
          volumeSteps: shared.volumeSteps + firstLive.volumeSteps,
        };
        bars = [...earlier, ...live.slice(1)];
      } else {
        bars = [...earlier, ...live];
      }
    }
    return bars
      .slice(Math.max(0, bars.length - limit))
      .map((bar) => candleToWire(context, market, interval, bar));
  }

  tickerOf(marketId: string): TickerData {
    return this.tickerWire(this.context.marketOf(marketId));
  }

  // ---------------------------------------------------------------- private data

  getAccount(accountId: string): Account {
    return this.accountWire(this.context.accountOf(accountId));
  }

  /** The account's `total_equity` as `getAccount` writes it, without the rest of the object. */
  totalEquity(accountId: string): string {
    return formatMoney(this.accounting.totalEquity(this.context.accountOf(accountId)));
  }

  listVenueAccounts(accountId: string): VenueAccount[] {
    const account = this.context.accountOf(accountId);
    const wire = this.accountWire(account);
    return [
      {
        account_id: account.id,
        route_id: ROUTE_ID,
        settlement_asset: SETTLEMENT_ASSET,
        capital_location: this.context.config.route.capital_location,
        account_value: wire.total_equity,
        available: wire.available,
        in_positions: wire.in_positions,
        unrealized_pnl: wire.unrealized_pnl,
        observed_at: wire.observed_at,
        source: 'emulator-ledger',
        data_status: wire.data_status,
      },
    ];
  }

  listPositions(accountId: string, query: PositionListQuery): PositionPage {
    const account = this.context.accountOf(accountId);
    const after = decodeCursor(query.cursor) ?? 0;
    const positions = [...account.positions.values()]
      .filter((position) => position.ordinal > after)
      .sort((a, b) => a.ordinal - b.ordinal);
    const page = positions.slice(0, query.limit);
    const hasMore = positions.length > page.length;
    const last = page[page.length - 1];
    return {
      data: page.map((position) => this.positionWire(position)),
      page: {
        next_cursor: hasMore && last !== undefined ? encodeCursor(last.ordinal) : null,
        has_more: hasMore,
      },
    };
  }

  getPositionById(accountId: string, positionId: string): Position {
    const position = this.context.accountOf(accountId).positionsById.get(positionId);
    if (position === undefined) throw this.context.positionNotFound(positionId);
    return this.positionWire(position);
  }

  /** Newest first. */
  listOrders(accountId: string, query: OrderListQuery): OrderPage {
    const account = this.context.accountOf(accountId);
    const before = decodeCursor(query.cursor) ?? Number.MAX_SAFE_INTEGER;
    const data: Order[] = [];
    let hasMore = false;
    let lastOrdinal = 0;
    if (query.route_id === undefined || query.route_id === ROUTE_ID) {
      // Up to the newest released order memory misses some; the archive has them all there.
      const archive = this.context.archive;
      const floor = archive === null ? 0 : account.orders.releasedUpTo;
      const orders = account.orders.list;
      for (let index = orders.length - 1; index >= 0; index--) {
        const order = orders[index]!;
        if (order.ordinal <= floor) break;
        if (order.released || order.ordinal >= before) continue;
        if (query.market_id !== undefined && order.market.id !== query.market_id) continue;
        if (query.status !== undefined && order.status !== query.status) continue;
        if (data.length === query.limit) {
          hasMore = true;
          break;
        }
        data.push(this.orderWire(order));
        lastOrdinal = order.ordinal;
      }
      if (archive !== null && floor > 0 && !hasMore) {
        const records = archive.listOrders(account.id, {
          limit: query.limit - data.length + 1,
          beforeOrdinal: Math.min(before, floor + 1),
          ...(query.market_id === undefined ? {} : { marketId: query.market_id }),
          ...(query.status === undefined ? {} : { status: query.status }),
        });
        for (const record of records) {
          const wire = this.recordWire(record);
          if (wire === null) continue;
          if (data.length === query.limit) {
            hasMore = true;
            break;
          }
          data.push(wire);
          lastOrdinal = record.ordinal;
        }
      }
    }
    return {
      data,
      page: { next_cursor: hasMore ? encodeCursor(lastOrdinal) : null, has_more: hasMore },
    };
  }

  getOrder(accountId: string, orderId: string): Order {
    const order = this.orderOf(this.context.accountOf(accountId), orderId);
    return order instanceof OrderState ? this.orderWire(order) : order;
  }

  /** The order as held in memory (active or recently ended), or undefined; no wire object. */
  heldOrder(accountId: string, orderId: string): HeldOrder | undefined {
    const account = this.context.accountOf(accountId);
    return account.orders.find(orderId, this.context.identifiers.counterOf(KIND_ORDER, orderId));
  }

  /** The latest order carrying that client id (an amendment's new order keeps it). */
  getOrderByClientId(accountId: string, clientOrderId: string): Order {
    const account = this.context.accountOf(accountId);
    const order = account.orders.byClientId.get(clientOrderId);
    if (order !== undefined) return this.orderWire(order);
    const record = this.context.releasedOrderByClientId(account, clientOrderId);
    const wire = record === undefined ? null : this.recordWire(record);
    if (wire === null) {
      throw new ExchangeError('ORDER_NOT_FOUND', `no order with client id ${clientOrderId}`, {
        client_order_id: clientOrderId,
      });
    }
    return wire;
  }

  /** The order in memory, or the wire object of one the archive keeps (always terminal). */
  orderOf(account: AccountState, orderId: string): OrderState | Order {
    const context = this.context;
    const order = account.orders.find(orderId, context.identifiers.counterOf(KIND_ORDER, orderId));
    if (order !== undefined) return order;
    const record =
      context.archive !== null && account.orders.releasedUpTo > 0
        ? context.archive.findOrder(account.id, orderId)
        : undefined;
    const wire = record === undefined ? null : this.recordWire(record);
    if (wire === null) {
      throw new ExchangeError('ORDER_NOT_FOUND', `order ${orderId} not found`, {
        order_id: orderId,
      });
    }
    return wire;
  }

  /** Newest first. */
  listFills(accountId: string, query: FillListQuery): FillPage {
    const account = this.context.accountOf(accountId);
    if (query.route_id !== undefined && query.route_id !== ROUTE_ID) {
      return { data: [], page: { next_cursor: null, has_more: false } };
    }
    const before = decodeCursor(query.cursor);
    const records = this.context.store.listFills(account.id, {
      limit: query.limit + 1,
      ...(before === undefined ? {} : { beforeOrdinal: before }),
      ...(query.market_id === undefined ? {} : { marketId: query.market_id }),
    });
    const page = records.slice(0, query.limit);
    const hasMore = records.length > page.length;
    const last = page[page.length - 1];
    return {
      data: page.map((record) => record.fill),
      page: {
        next_cursor: hasMore && last !== undefined ? encodeCursor(last.ordinal) : null,
        has_more: hasMore,
      },
    };
  }

  listEvents(accountId: string, afterSequence: number, limit: number): EventsPage {
    const account = this.context.accountOf(accountId, true);
    const events = this.context.store.listEvents(account.id, afterSequence, limit + 1);
    const data = events.slice(0, limit);
    const last = data[data.length - 1];
    return {
      data,
      has_more: events.length > data.length,
      next_after_sequence: last === undefined ? afterSequence : last.sequence,
    };
  }

  lastSequence(accountId: string): number {
    return this.context.accountOf(accountId, true).sequence;
  }

  routesReadiness(accountId: string): RouteReadiness[] {
    const context = this.context;
    context.accountOf(accountId);
    const health = context.routeHealth;
    const enabled = health !== 'disabled';
    const reasons: string[] = [];
    if (health !== 'ready') reasons.push(`route health is ${health}`);
    return [
      {
        route_id: ROUTE_ID,
        ready: health === 'ready',
        health,
        order_submission_enabled: enabled,
        reasons,
        observed_at: context.timestamp(context.clock.now()),
      },
    ];
  }

  // ---------------------------------------------------------------- wire objects

  orderWire(order: OrderState): Order {
    return orderToWire(order, this.context.format);
  }

  /** Null for an order of a market no longer configured (`restore` skips those too). */
  private recordWire(record: OrderRecord): Order | null {
    const market = this.context.marketsById.get(record.market_id);
    return market === undefined ? null : orderRecordToWire(record, market, this.context.format);
  }

  private accountWire(account: AccountState): Account {
    const context = this.context;
    return accountToWire(
      account.id,
      account.snapshotVersion,
      context.instantNow(),
      this.accounting.figures(account),
      context.format,
    );
  }

  private positionWire(position: PositionState): Position {
    return positionToWire(this.accounting.capturePosition(position, null), this.context.format);
  }

  private routeWire(): Route {
    const context = this.context;
    const route = context.config.route;
    return {
      route_id: ROUTE_ID,
      provider: route.provider,
      environment: route.environment,
      network: route.network,
      market_structure: 'order_book',
      settlement_asset: SETTLEMENT_ASSET,
      capital_location: route.capital_location,
      capabilities: {
        ...ROUTE_CAPABILITIES,
        order_types: [...ROUTE_CAPABILITIES.order_types],
        time_in_force: [...ROUTE_CAPABILITIES.time_in_force],
      },
      order_submission_enabled: context.routeHealth !== 'disabled',
      health: context.routeHealth,
      observed_at: context.timestamp(context.clock.now()),
    };
  }

  private marketWire(market: MarketRuntime): Market {
    const context = this.context;
    const config = market.config;
    const traded = market.tradeCount > 0;
    let openInterest = 0;
    for (const position of market.positions) openInterest += position.steps;
    return {
      market_id: market.id,
      display_name: config.display_name,
      base_asset: config.base_asset,
      quote_asset: config.quote_asset,
      category: config.category,
      status: config.status,
      routes: [ROUTE_ID],
      preferred_route_id: ROUTE_ID,
      price_tick: market.tick.text,
      quantity_step: market.step.text,
      minimum_quantity: config.minimum_quantity,
      minimum_notional: config.minimum_notional,
      maximum_leverage: config.maximum_leverage,
      margin_modes: [...config.margin_modes],
      order_types: ['market', 'limit'],
      mark_price: market.tick.format(market.markTicks),
      index_price: market.tick.format(market.indexTicks),
      last_price: market.lastTradeTicks === null ? null : market.tick.format(market.lastTradeTicks),
      funding_rate: market.fundingRate,
      next_funding_time: context.timestamp(market.nextFundingTime),
      volume_24h: traded ? market.step.format(market.volume.totalAt(context.clock.now())) : null,
      open_interest: traded ? market.step.format(openInterest) : null,
      observed_at: context.timestamp(market.observedAt),
      data_status: market.dataStatus,
    };
  }

  tickerWire(market: MarketRuntime): TickerData {
    return {
      market_id: market.id,
      mark_price: market.tick.format(market.markTicks),
      index_price: market.tick.format(market.indexTicks),
      last_price: market.lastTradeTicks === null ? null : market.tick.format(market.lastTradeTicks),
      data_status: market.dataStatus,
    };
  }
}

/** A trade of the market's tape (`KIND_TRADE`) or of its seeded past (`KIND_PAST_TRADE`). */
function tradeToWire(
  context: EngineContext,
  market: MarketRuntime,
  trade: TradeEntry,
  kind: number,
): PublicTrade {
  return {
    trade_id: context.format.uuid(kind, trade.ordinal),
    market_id: market.id,
    route_id: ROUTE_ID,
    price: market.tick.format(trade.priceTicks),
    quantity: market.step.format(trade.steps),
    side: trade.side,
    occurred_at: context.timestamp(trade.at),
  };
}

function candleToWire(
  context: EngineContext,
  market: MarketRuntime,
  interval: CandleInterval,
  bar: CandleBar,
): Candle {
  return {
    market_id: market.id,
    route_id: ROUTE_ID,
    interval,
    open_time: context.timestamp(bar.openTime),
    open: market.tick.format(bar.open),
    high: market.tick.format(bar.high),
    low: market.tick.format(bar.low),
    close: market.tick.format(bar.close),
    volume: market.step.format(bar.volumeSteps),
  };
}
