import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDecimal, sumDecimals } from '../../../src/core/decimal.ts';
import {
  DEFAULT_EMULATOR_CONFIG_INPUT,
  parseEmulatorConfig,
} from '../../../src/emulator/config.ts';
import { ExchangeError } from '../../../src/emulator/engine/errors.ts';
import type { Fill, Order } from '../../../src/protocol/index.ts';
import { openHarness, request } from './fixtures.ts';

const Command = fc.oneof(
  fc.record({
    kind: fc.constant('limit' as const),
    account: fc.nat(1),
    side: fc.constantFrom('buy' as const, 'sell' as const),
    offsetTicks: fc.integer({ min: -40, max: 40 }),
    steps: fc.integer({ min: 1, max: 400 }),
    leverage: fc.integer({ min: 1, max: 50 }),
    cross: fc.boolean(),
    ioc: fc.boolean(),
    reduceOnly: fc.boolean(),
    postOnly: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('market' as const),
    account: fc.nat(1),
    side: fc.constantFrom('buy' as const, 'sell' as const),
    steps: fc.integer({ min: 1, max: 400 }),
    leverage: fc.integer({ min: 1, max: 50 }),
  }),
  fc.record({ kind: fc.constant('cancel' as const), account: fc.nat(1), pick: fc.nat() }),
  fc.record({ kind: fc.constant('cancelAll' as const), account: fc.nat(1) }),
  fc.record({
    kind: fc.constant('amend' as const),
    account: fc.nat(1),
    pick: fc.nat(),
    steps: fc.integer({ min: 1, max: 400 }),
  }),
  fc.record({
    kind: fc.constant('close' as const),
    account: fc.nat(1),
    percent: fc.integer({ min: 1, max: 100 }),
  }),
  fc.record({ kind: fc.constant('mark' as const), movePercent: fc.integer({ min: -8, max: 8 }) }),
  fc.record({
    kind: fc.constant('wait' as const),
    milliseconds: fc.integer({ min: 0, max: 4_000 }),
  }),
);

describe('exchange properties', () => {
  it('keeps balances non-negative, sequences increasing and order quantities conserved', () => {
    const seen = { fills: 0, liquidations: 0, orders: 0 };
    fc.assert(
      fc.property(
        fc.array(Command, { minLength: 10, maxLength: 60, size: 'medium' }),
        fc.nat(),
        (commands, seed) => {
          const config = parseEmulatorConfig({
            ...DEFAULT_EMULATOR_CONFIG_INPUT,
            seed,
            latency: { submit_ms: 5 },
            simulation: { enabled: true, step_ms: 1000 },
          });
          const harness = openHarness({ config });
          const { exchange, clock } = harness;
          exchange.start();
          const accounts = [
            exchange.createAccount({ startingBalance: '2000' }),
            exchange.createAccount({ startingBalance: '50000' }),
          ];
          const lastSequence = new Map<string, number>();
          exchange.onPrivateEvent((accountId, event) => {
            expect(event.sequence).toBe((lastSequence.get(accountId) ?? 0) + 1);
            lastSequence.set(accountId, event.sequence);
          });
          const attempt = (action: () => unknown) => {
            try {
              action();
            } catch (error) {
              if (!(error instanceof ExchangeError)) throw error;
            }
          };
          for (const command of commands) {
            const markTicks = exchange.markTicks('BTC-PERP');
            switch (command.kind) {
              case 'limit': {
                const price = Math.max(1, markTicks + command.offsetTicks) / 2;
                attempt(() =>
                  exchange.placeOrder(
                    accounts[command.account]!,
                    request({
                      side: command.side,
                      price: String(price),
                      quantity: String(command.steps / 1000),
                      leverage: command.leverage,
                      margin_mode: command.cross ? 'cross' : 'isolated',
                      time_in_force: command.ioc ? 'IOC' : 'GTC',
                      reduce_only: command.reduceOnly,
                      post_only: command.postOnly && !command.ioc,
                    }),
                  ),
                );
                break;
              }
              case 'market':
                attempt(() =>
                  exchange.placeOrder(
                    accounts[command.account]!,
                    request({
                      type: 'market',
                      price: null,
                      side: command.side,
                      quantity: String(command.steps / 1000),
                      leverage: command.leverage,
                      max_slippage_percent: '1',
                    }),
                  ),
                );
                break;
              case 'cancel':
              case 'amend': {
                const account = accounts[command.account]!;
                const orders = exchange.listOrders(account, { limit: 200 }).data;
                const order = orders[command.pick % Math.max(1, orders.length)];
                if (order === undefined) break;
                if (command.kind === 'cancel') {
                  attempt(() => exchange.cancelOrder(account, order.order_id, 'cancel-request'));
                } else {
                  attempt(() =>
                    exchange.amendOrder(account, order.order_id, {
                      request_id: `amend-${clock.now()}-${command.pick}`,
                      quantity: String(command.steps / 1000),
                    }),
                  );
                }
                break;
              }
              case 'cancelAll':
                exchange.cancelAll(accounts[command.account]!, 'cancel-all-request');
                break;
              case 'close': {
                const account = accounts[command.account]!;
                const position = exchange.listPositions(account, { limit: 10 }).data[0];
                if (position === undefined) break;
                attempt(() =>
                  exchange.closePosition(account, position.position_id, {
                    request_id: `close-${clock.now()}`,
                    client_order_id: `close-${clock.now()}-${command.percent}`,
                    quantity_percent: String(command.percent),
                    max_slippage_percent: '1',
                  }),
                );
                break;
              }
              case 'mark': {
                const mark = Math.max(2, Math.round(markTicks * (1 + command.movePercent / 100)));
                exchange.setReferencePrices('BTC-PERP', mark, mark);
                break;
              }
              case 'wait':
                clock.advanceBy(command.milliseconds);
                break;
            }
          }
          clock.advanceBy(100);
          exchange.stop();

          for (const account of accounts) {
            const summary = exchange.getAccount(account);
            const wallet = parseDecimal(summary.total_equity).minus(
              parseDecimal(summary.unrealized_pnl),
            );
            expect(wallet.gte(0)).toBe(true);
            expect(parseDecimal(summary.available).gte(0)).toBe(true);
            expect(parseDecimal(summary.in_positions).gte(0)).toBe(true);

            const fills: Fill[] = [];
            let cursor: string | undefined;
            do {
              const page = exchange.listFills(account, { limit: 200, cursor });
              fills.push(...page.data);
              cursor = page.page.next_cursor ?? undefined;
            } while (cursor !== undefined);
            const orders: Order[] = [];
            cursor = undefined;
            do {
              const page = exchange.listOrders(account, { limit: 200, cursor });
              orders.push(...page.data);
              cursor = page.page.next_cursor ?? undefined;
            } while (cursor !== undefined);
            for (const order of orders) {
              const filled = sumDecimals(
                fills
                  .filter((fill) => fill.order_id === order.order_id)
                  .map((fill) => parseDecimal(fill.quantity)),
              );
              expect(filled.eq(parseDecimal(order.filled_quantity))).toBe(true);
              expect(filled.lte(parseDecimal(order.quantity!))).toBe(true);
            }
            seen.fills += fills.length;
            seen.orders += orders.length;
            seen.liquidations += fills.filter((fill) => fill.order_id === null).length;
            const events = exchange.listEvents(account, 0, 200).data;
            expect(events.map((event) => event.sequence)).toEqual(
              events.map((_event, index) => index + 1),
            );
          }
        },
      ),
      { numRuns: 40 },
    );
    // The generated runs did exercise trading, not only refusals.
    expect(seen.orders).toBeGreaterThan(200);
    expect(seen.fills).toBeGreaterThan(100);
    expect(seen.liquidations).toBeGreaterThan(0);
  });
});
