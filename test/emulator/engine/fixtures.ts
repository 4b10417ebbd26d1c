/** Shared set-up for the engine tests: an Exchange on a VirtualClock with strict event checks. */
import { VirtualClock } from '../../../src/core/clock.ts';
import {
  DEFAULT_EMULATOR_CONFIG_INPUT,
  type EmulatorConfig,
  type EmulatorConfigInput,
  parseEmulatorConfig,
} from '../../../src/emulator/config.ts';
import { Exchange } from '../../../src/emulator/engine/exchange.ts';
import { MemoryStore } from '../../../src/emulator/store/memory-store.ts';
import type { Store } from '../../../src/emulator/store/store.ts';
import {
  Order,
  type OrderRequest,
  type OrderRequestInput,
  PrivateEvent,
} from '../../../src/protocol/index.ts';

export const START = Date.UTC(2025, 0, 6, 0, 0, 0);
export const SUBMIT_MS = 10;

/** The default markets with the simulation off: books empty, prices at their initial values. */
export function testConfig(overrides: Partial<EmulatorConfigInput> = {}): EmulatorConfig {
  return parseEmulatorConfig({
    ...DEFAULT_EMULATOR_CONFIG_INPUT,
    latency: { submit_ms: SUBMIT_MS },
    simulation: { enabled: false },
    ...overrides,
  });
}

export interface Harness {
  readonly exchange: Exchange;
  readonly clock: VirtualClock;
  readonly store: Store;
  /** Every private event, in delivery order, parsed with the strict protocol schema. */
  readonly events: { accountId: string; event: PrivateEvent }[];
  eventsOf(accountId: string): PrivateEvent[];
  /** Lets pending submissions run. */
  settle(): void;
}

export function openHarness(
  options: { config?: EmulatorConfig; store?: Store; clock?: VirtualClock } = {},
): Harness {
  const clock = options.clock ?? new VirtualClock(START);
  const store = options.store ?? new MemoryStore();
  const exchange = Exchange.open({ clock, config: options.config ?? testConfig(), store });
  const events: { accountId: string; event: PrivateEvent }[] = [];
  exchange.onPrivateEvent((accountId, event) => {
    events.push({ accountId, event: PrivateEvent.parse(event) });
  });
  return {
    exchange,
    clock,
    store,
    events,
    eventsOf: (accountId) =>
      events.filter((entry) => entry.accountId === accountId).map((entry) => entry.event),
    settle: () => clock.advanceBy(SUBMIT_MS),
  };
}

let counter = 0;

/** A parsed order request with defaults (limit GTC buy 0.1 BTC-PERP at 64000, leverage 10). */
export function request(fields: Partial<OrderRequestInput> = {}): OrderRequest {
  counter += 1;
  const base: OrderRequest = {
    request_id: `request-${counter.toString().padStart(6, '0')}`,
    client_order_id: `client-${counter}`,
    market_id: 'BTC-PERP',
    side: 'buy',
    type: 'limit',
    quantity: '0.1',
    price: '64000',
    leverage: 10,
    time_in_force: 'GTC',
    post_only: false,
    reduce_only: false,
    margin_mode: 'isolated',
  };
  const merged = { ...base, ...fields } as OrderRequest;
  if (merged.type === 'market' && fields.price === undefined) delete merged.price;
  return merged;
}

export function marketOrder(fields: Partial<OrderRequestInput> = {}): OrderRequest {
  return request({ type: 'market', max_slippage_percent: '1', ...fields });
}

/** Checks an order against the strict wire schema and returns it. */
export function wireOrder(order: unknown): Order {
  return Order.parse(order);
}

export function statusPath(events: PrivateEvent[], orderId: string): string[] {
  return events
    .filter((event) => event.type === 'authoritative_status' && event.data.entity_id === orderId)
    .map((event) =>
      event.type === 'authoritative_status'
        ? `${event.data.from_state ?? 'null'}>${event.data.to_state}`
        : '',
    );
}

/** Resting liquidity from a dedicated user account: returns its id. */
export function provideLiquidity(
  harness: Harness,
  levels: { side: 'buy' | 'sell'; price: string; quantity: string; market?: string }[],
  startingBalance = '100000000',
): string {
  const maker = harness.exchange.createAccount({ startingBalance });
  for (const level of levels) {
    harness.exchange.placeOrder(
      maker,
      request({
        side: level.side,
        price: level.price,
        quantity: level.quantity,
        market_id: level.market ?? 'BTC-PERP',
        margin_mode: level.market === 'SOL-PERP' ? 'cross' : 'isolated',
      }),
    );
  }
  harness.settle();
  return maker;
}
