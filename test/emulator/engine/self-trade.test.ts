/**
 * Self-trade prevention: an account's incoming order never trades with its own resting order;
 * the configured policy cancels the incoming order, the resting one, or both, each ending
 * CANCELLED with `error.code` SELF_TRADE_PREVENTED.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_EMULATOR_CONFIG_INPUT,
  parseEmulatorConfig,
  type SelfTradePrevention,
} from '../../../src/emulator/config.ts';
import { ExchangeError } from '../../../src/emulator/engine/errors.ts';
import { EngineIdentifiers } from '../../../src/emulator/engine/identifiers.ts';
import { KIND_FILL } from '../../../src/emulator/engine/wire.ts';
import type { Fill } from '../../../src/protocol/index.ts';
import { openHarness, request, statusPath, testConfig } from './fixtures.ts';

function harnessWith(policy?: SelfTradePrevention) {
  return openHarness({
    config: testConfig(policy === undefined ? {} : { self_trade_prevention: policy }),
  });
}

/** A market maker quoting 64000 / 64001, then re-quoting a bid that crosses its own ask. */
function crossOwnQuotes(policy?: SelfTradePrevention) {
  const harness = harnessWith(policy);
  const { exchange } = harness;
  const maker = exchange.createAccount({ startingBalance: '1000000' });
  const bid = exchange.placeOrder(maker, request({ side: 'buy', price: '63999', quantity: '0.1' }));
  const ask = exchange.placeOrder(
    maker,
    request({ side: 'sell', price: '64001', quantity: '0.1' }),
  );
  harness.settle();
  const crossing = exchange.placeOrder(
    maker,
    request({ side: 'buy', price: '64002', quantity: '0.1' }),
  );
  harness.settle();
  const order = (id: string) => exchange.getOrder(maker, id);
  return {
    harness,
    maker,
    bid: order(bid.order_id),
    ask: order(ask.order_id),
    crossing: order(crossing.order_id),
    fills: exchange.listFills(maker, { limit: 500 }).data,
  };
}

describe('self-trade prevention', () => {
  it('by default cancels the incoming order and leaves the resting one (Binance EXPIRE_TAKER)', () => {
    const { harness, maker, ask, crossing, fills } = crossOwnQuotes();
    expect(fills).toEqual([]);
    expect(ask.status).toBe('OPEN');
    expect(crossing.status).toBe('CANCELLED');
    expect(crossing.filled_quantity).toBe('0');
    expect(crossing.error).toMatchObject({ code: 'SELF_TRADE_PREVENTED' });
    expect(statusPath(harness.eventsOf(maker), crossing.order_id)).toEqual([
      'null>PENDING',
      'PENDING>SUBMITTED',
      'SUBMITTED>CANCELLED',
    ]);
  });

  it('cancel_resting cancels the resting order; the incoming one rests', () => {
    const { harness, maker, ask, crossing, fills } = crossOwnQuotes('cancel_resting');
    expect(fills).toEqual([]);
    expect(ask.status).toBe('CANCELLED');
    expect(ask.error).toMatchObject({ code: 'SELF_TRADE_PREVENTED' });
    expect(crossing.status).toBe('OPEN');
    expect(statusPath(harness.eventsOf(maker), ask.order_id)).toEqual([
      'null>PENDING',
      'PENDING>SUBMITTED',
      'SUBMITTED>OPEN',
      'OPEN>CANCELLED',
    ]);
    const book = harness.exchange.getBook('BTC-PERP', 5);
    expect(book.bids[0]).toMatchObject({ price: '64002' });
    expect(book.asks).toEqual([]);
  });

  it('cancel_both cancels both orders', () => {
    const { ask, crossing, bid, fills } = crossOwnQuotes('cancel_both');
    expect(fills).toEqual([]);
    expect(ask.status).toBe('CANCELLED');
    expect(crossing.status).toBe('CANCELLED');
    expect(bid.status).toBe('OPEN');
    expect(ask.error).toMatchObject({ code: 'SELF_TRADE_PREVENTED' });
    expect(crossing.error).toMatchObject({ code: 'SELF_TRADE_PREVENTED' });
  });

  it("trades with other accounts ahead of the account's own order, then applies the policy", () => {
    for (const policy of ['cancel_incoming', 'cancel_resting'] as const) {
      const harness = harnessWith(policy);
      const { exchange } = harness;
      const other = exchange.createAccount({ startingBalance: '1000000' });
      const self = exchange.createAccount({ startingBalance: '1000000' });
      exchange.placeOrder(other, request({ side: 'sell', price: '64000', quantity: '0.1' }));
      const own = exchange.placeOrder(
        self,
        request({ side: 'sell', price: '64001', quantity: '0.1' }),
      );
      exchange.placeOrder(other, request({ side: 'sell', price: '64002', quantity: '0.1' }));
      harness.settle();
      const taker = exchange.placeOrder(
        self,
        request({ side: 'buy', price: '64002', quantity: '0.3' }),
      );
      harness.settle();
      const fills = exchange.listFills(self, { limit: 500 }).data;
      const after = exchange.getOrder(self, taker.order_id);
      if (policy === 'cancel_incoming') {
        // One fill at 64000 from the other account, then the rest is cancelled at its own ask.
        expect(fills.map((fill) => [fill.price, fill.is_maker])).toEqual([['64000', false]]);
        expect(after).toMatchObject({ status: 'CANCELLED', filled_quantity: '0.1' });
        expect(exchange.getOrder(self, own.order_id).status).toBe('OPEN');
      } else {
        // Its own ask is cancelled and matching goes on to the other account's 64002.
        expect(fills.map((fill) => [fill.price, fill.is_maker]).sort()).toEqual([
          ['64000', false],
          ['64002', false],
        ]);
        expect(after).toMatchObject({ status: 'PARTIALLY_FILLED', filled_quantity: '0.2' });
        expect(exchange.getOrder(self, own.order_id).status).toBe('CANCELLED');
      }
    }
  });

  it('refuses an unknown policy with its path', () => {
    expect(() =>
      parseEmulatorConfig({ ...DEFAULT_EMULATOR_CONFIG_INPUT, self_trade_prevention: 'decrement' }),
    ).toThrow(/self_trade_prevention/);
  });
});

const Command = fc.oneof(
  fc.record({
    kind: fc.constant('limit' as const),
    account: fc.nat(1),
    side: fc.constantFrom('buy' as const, 'sell' as const),
    offsetTicks: fc.integer({ min: -6, max: 6 }),
    steps: fc.integer({ min: 1, max: 50 }),
    ioc: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('market' as const),
    account: fc.nat(1),
    side: fc.constantFrom('buy' as const, 'sell' as const),
    steps: fc.integer({ min: 1, max: 80 }),
  }),
  fc.record({ kind: fc.constant('cancel' as const), account: fc.nat(1), pick: fc.nat() }),
  fc.record({ kind: fc.constant('wait' as const), milliseconds: fc.integer({ min: 0, max: 30 }) }),
);

describe('self-trade prevention, property', () => {
  it('over random order streams from two accounts, no fill has the same account on both sides', () => {
    let executions = 0;
    let prevented = 0;
    fc.assert(
      fc.property(
        fc.array(Command, { minLength: 10, maxLength: 80 }),
        fc.constantFrom<SelfTradePrevention>('cancel_incoming', 'cancel_resting', 'cancel_both'),
        (commands, policy) => {
          const config = parseEmulatorConfig({
            ...DEFAULT_EMULATOR_CONFIG_INPUT,
            seed: 'stp',
            latency: { submit_ms: 5 },
            simulation: { enabled: false },
            self_trade_prevention: policy,
          });
          const harness = openHarness({ config });
          const { exchange, clock } = harness;
          const accounts = [
            exchange.createAccount({ startingBalance: '10000000' }),
            exchange.createAccount({ startingBalance: '10000000' }),
          ];
          const placed: string[][] = [[], []];
          for (const command of commands) {
            try {
              if (command.kind === 'limit') {
                const order = exchange.placeOrder(
                  accounts[command.account]!,
                  request({
                    side: command.side,
                    price: String(64000 + command.offsetTicks * 0.5),
                    quantity: (command.steps / 1000).toFixed(3),
                    time_in_force: command.ioc ? 'IOC' : 'GTC',
                    leverage: 5,
                    margin_mode: 'cross',
                  }),
                );
                placed[command.account]!.push(order.order_id);
              } else if (command.kind === 'market') {
                exchange.placeOrder(
                  accounts[command.account]!,
                  request({
                    type: 'market',
                    side: command.side,
                    quantity: (command.steps / 1000).toFixed(3),
                    max_slippage_percent: '1',
                    leverage: 5,
                    margin_mode: 'cross',
                  }),
                );
              } else if (command.kind === 'cancel') {
                const ids = placed[command.account]!;
                if (ids.length > 0) {
                  exchange.cancelOrder(
                    accounts[command.account]!,
                    ids[command.pick % ids.length]!,
                    'cancel',
                  );
                }
              } else {
                clock.advanceBy(command.milliseconds);
              }
            } catch (error) {
              // Refusals (not enough margin, nothing to reduce) are part of a random stream.
              if (!(error instanceof ExchangeError)) throw error;
            }
          }
          clock.advanceBy(10);
          // The simulation is off, so every execution is between two user orders: its two fills
          // are consecutive identifiers, the taker's first.
          const identifiers = new EngineIdentifiers('stp');
          const fills: { fill: Fill; account: number; ordinal: number }[] = [];
          accounts.forEach((accountId, account) => {
            for (const fill of exchange.listFills(accountId, { limit: 500 }).data) {
              fills.push({
                fill,
                account,
                ordinal: identifiers.counterOf(KIND_FILL, fill.fill_id),
              });
            }
          });
          fills.sort((a, b) => a.ordinal - b.ordinal);
          expect(fills.length % 2).toBe(0);
          for (let index = 0; index < fills.length; index += 2) {
            const taker = fills[index]!;
            const maker = fills[index + 1]!;
            expect([taker.fill.is_maker, maker.fill.is_maker]).toEqual([false, true]);
            expect(maker.fill.price).toBe(taker.fill.price);
            expect(maker.fill.quantity).toBe(taker.fill.quantity);
            expect(maker.account).not.toBe(taker.account);
            executions += 1;
          }
          for (const [account, ids] of placed.entries()) {
            for (const id of ids) {
              const order = exchange.getOrder(accounts[account]!, id);
              if (order.error?.code === 'SELF_TRADE_PREVENTED') {
                expect(order.status).toBe('CANCELLED');
                prevented += 1;
              }
            }
          }
        },
      ),
      { numRuns: 150, seed: 30 },
    );
    // The streams did cross: executions between the accounts and self-trades prevented.
    expect(executions).toBeGreaterThan(100);
    expect(prevented).toBeGreaterThan(50);
  });
});
