/**
 * One-cancels-other through the emulator itself (property): whatever the prices, a bracket's
 * stop-loss and take-profit never both release an order, and once one has, the other is
 * cancelled. Prices come from fast-check, on one source or split across the mark and the last
 * trade, with the entry filling at an arbitrary point.
 */
import fc from 'fast-check';
import { ReplaySubject, Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../src/core/clock.ts';
import { decimal, toWire } from '../../../src/core/decimal.ts';
import type { Book, PublicTrade } from '../../../src/protocol/index.ts';
import { ExitEmulator } from '../../../src/runtime/exits/emulator.ts';
import type { StampedIntent } from '../../../src/runtime/intents.ts';
import { bracket, marketOrder, type Ticker } from '../../../src/runtime/strategy/index.ts';
import {
  TEST_START_TIME,
  testMarket,
  testOrder,
  testPosition,
  testTicker,
  testTrade,
} from '../../../src/runtime/testing/fixtures.ts';

const silent = { debug() {}, info() {}, warn() {}, error() {} };

describe('OCO in the emulator (property)', () => {
  it('never releases both legs of a bracket', () => {
    const price = fc
      .integer({ min: 800, max: 1200 })
      .map((tenths) => toWire(decimal(tenths).div(10)));
    fc.assert(
      fc.property(
        fc.array(fc.record({ price, onTrade: fc.boolean() }), { minLength: 1, maxLength: 40 }),
        fc.nat({ max: 40 }),
        fc.constantFrom<'mark' | 'last'>('mark', 'last'),
        fc.integer({ min: 1, max: 19 }),
        fc.integer({ min: 1, max: 19 }),
        (ticks, fillAt, source, stopBelow, profitAbove) => {
          const tickers = new ReplaySubject<Ticker>(1);
          const trades = new Subject<PublicTrade>();
          const clock = new VirtualClock(TEST_START_TIME);
          const emulator = new ExitEmulator({
            clock,
            marketData: {
              markets: () => [testMarket()],
              ticker$: () => tickers,
              trades$: () => trades,
              book$: () => new Subject<Book>(),
            },
            store: null,
            logger: silent,
            positions: () => [
              testPosition({
                market_id: 'BTC-PERP',
                side: 'long',
                quantity: '1',
                entry_price: '100',
              }),
            ],
          });
          const releases: StampedIntent[] = [];
          emulator.releases$.subscribe((release) => releases.push(release));
          const stamped: StampedIntent = {
            strategyId: 'alpha',
            sequence: 1,
            requestId: 'alpha:e:1',
            clientOrderId: null,
            intent: bracket({
              entry: marketOrder({ marketId: 'BTC-PERP', side: 'buy', quantity: '1' }),
              stopLoss: { triggerPrice: toWire(decimal(100 - stopBelow)) },
              takeProfit: { triggerPrice: toWire(decimal(100 + profitAbove)) },
              triggerSource: source,
            }),
            emittedAt: clock.now(),
          };
          emulator.take(stamped);
          ticks.forEach((tick, index) => {
            if (index === fillAt) {
              emulator.onOrder(
                testOrder({
                  order_id: 'o-1',
                  market_id: 'BTC-PERP',
                  client_order_id: 'alpha:e:1',
                  status: 'FILLED',
                  filled_quantity: '1',
                }),
              );
            }
            clock.advanceBy(1_000);
            if (tick.onTrade) {
              trades.next(
                testTrade({ market_id: 'BTC-PERP', price: tick.price, trade_id: `t${index}` }),
              );
            } else {
              tickers.next(testTicker({ market_id: 'BTC-PERP', mark_price: tick.price }));
            }
          });
          const legs = releases.filter((release) => release.requestId !== 'alpha:e:1');
          expect(legs.length).toBeLessThanOrEqual(1);
          const states = emulator.exitsOf('alpha').map((exit) => exit.state);
          if (legs.length === 1) expect([...states].sort()).toEqual(['cancelled', 'triggered']);
          else
            expect(states.every((state) => state === 'pending' || state === 'waiting')).toBe(true);
          emulator.stop();
        },
      ),
    );
  });
});
