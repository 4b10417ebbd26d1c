/**
 * The one JSON document the dashboard page draws: the bot's `/status` document, its recent
 * activity, and figures derived for the page (an order's age and distance from the mark, each
 * strategy's own orders). Built on demand from what is already in memory; nothing is read from
 * the venue or the journal.
 */
import { isDecimalString, parseDecimal, toWire } from '../../core/decimal.ts';
import type { KernelStatus } from '../../runtime/kernel/index.ts';
import { sessionPnl } from '../bot/status-view.ts';
import type { ActivitySnapshot } from './activity.ts';

export interface DashboardStrategyConfig {
  readonly id: string;
  readonly name: string;
  readonly params: unknown;
}

/** The bot's `/status` document as the dashboard reads it (`BotStatusDocument` fits). */
export interface DashboardStatus extends KernelStatus {
  readonly bot: {
    readonly pid: number;
    readonly startedAt: string | null;
    readonly journal: string;
    readonly venue: {
      readonly baseUrl: string;
      readonly embedded: boolean;
      readonly accountId: string;
    };
  };
  readonly pnl: {
    readonly session: string | null;
    readonly unrealized: string | null;
  };
  /** The venue key's state (`VenueKeyStatus`); absent where nothing watches it. */
  readonly venueKey?: {
    readonly state: string;
    readonly reason: string | null;
    readonly expiresAt: string | null;
  } | null;
}

export interface SnapshotInput {
  readonly now: number;
  readonly status: DashboardStatus | null;
  readonly activity: ActivitySnapshot;
  readonly strategies: readonly DashboardStrategyConfig[];
  readonly readOnly: boolean;
  readonly notifications: unknown;
  /** The risk gate's trading day: when it began and the equity then and now. */
  readonly day: {
    readonly dayStartedAt: number;
    readonly dayStartEquity: string | null;
    readonly lastEquity: string | null;
  } | null;
}

/** (price - mark) / mark in percent, four decimals; null when either is unknown. */
export function distanceFromMark(price: string | null, mark: string | undefined): string | null {
  if (price === null || mark === undefined || !isDecimalString(price) || !isDecimalString(mark)) {
    return null;
  }
  const markValue = parseDecimal(mark);
  if (markValue.eq(0)) return null;
  return toWire(parseDecimal(price).minus(markValue).div(markValue).times(100).round(4));
}

export function buildSnapshot(input: SnapshotInput) {
  const { status, activity, now } = input;
  const openOrders = (status?.openOrders ?? []).map((order) => {
    const received = order.received_at === null ? null : Date.parse(order.received_at);
    return {
      orderId: order.order_id,
      clientOrderId: order.client_order_id,
      marketId: order.market_id,
      side: order.side,
      type: order.type,
      price: order.price,
      quantity: order.quantity,
      filled: order.filled_quantity,
      status: order.status,
      ageMs: received === null ? null : Math.max(0, now - received),
      distancePercent: distanceFromMark(order.price, activity.marks[order.market_id]),
    };
  });
  const strategies = input.strategies.map((strategy) => {
    const running = status?.strategies.find((candidate) => candidate.id === strategy.id);
    const prefix = `${strategy.id}:`;
    return {
      id: strategy.id,
      name: strategy.name,
      state: running?.status ?? 'not started',
      params: strategy.params,
      openOrders: openOrders.filter((order) => order.clientOrderId?.startsWith(prefix) === true)
        .length,
      fills: activity.fillCounts[strategy.id] ?? 0,
      pnl: activity.strategyPnl[strategy.id] ?? null,
      lastIntent: activity.lastIntents[strategy.id] ?? null,
    };
  });
  return {
    now,
    readOnly: input.readOnly,
    bot: status?.bot ?? null,
    trading: {
      state: status?.tradingState ?? null,
      reason: status?.tradingReason ?? null,
      since: activity.tradingSince,
      mayTrade: status?.mayTrade ?? false,
    },
    stream: activity.stream,
    routes: activity.routes,
    reconciled: status?.reconciled ?? false,
    deadman: status?.deadman ?? null,
    intents: {
      unknown: status?.unknownIntents ?? 0,
      unresolved: status?.unresolvedIntents ?? 0,
      counters: status?.counters ?? null,
    },
    account: status?.account ?? null,
    pnl: status?.pnl ?? null,
    today:
      input.day === null
        ? null
        : {
            since: input.day.dayStartedAt,
            pnl: sessionPnl(input.day.dayStartEquity, input.day.lastEquity),
          },
    equity: activity.equity,
    positions: status?.positions ?? [],
    openOrders,
    waitingExits: status?.waitingExits ?? [],
    fills: activity.fills,
    recentIntents: activity.intents,
    notices: activity.notices,
    reconciliation: activity.reconciliation,
    strategies,
    notifications: input.notifications,
    venueKey: status?.venueKey ?? null,
  };
}

export type DashboardSnapshot = ReturnType<typeof buildSnapshot>;
