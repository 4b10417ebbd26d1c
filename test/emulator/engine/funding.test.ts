/**
 * Funding on the emulator's virtual clock: at each funding time every open position is paid or
 * charged `position value at the mark × funding rate` (a long pays a positive rate), as a
 * `funding_payment` event, in the wallet and in the position's funding total.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDecimal } from '../../../src/core/decimal.ts';
import {
  DEFAULT_EMULATOR_CONFIG_INPUT,
  parseEmulatorConfig,
} from '../../../src/emulator/config.ts';
import {
  type FundingPaymentEvent,
  type Market,
  parseTimestamp,
  type TickerData,
} from '../../../src/protocol/index.ts';
import { SqliteStore } from '../../../src/emulator/store/sqlite-store.ts';
import { expectedFunding } from './funding-expected.ts';
import { marketOrder, openHarness, START } from './fixtures.ts';

const INTERVAL = 60_000;

function fundingOf(events: readonly { type: string }[]): FundingPaymentEvent[] {
  return events.filter((event): event is FundingPaymentEvent => event.type === 'funding_payment');
}

describe('funding', () => {
  it('charges a position held across three funding times exactly value × rate each time', () => {
    const config = parseEmulatorConfig({
      ...DEFAULT_EMULATOR_CONFIG_INPUT,
      seed: 'funding',
      latency: { submit_ms: 10 },
      simulation: { enabled: true, step_ms: 1000, funding_interval_ms: INTERVAL },
      markets: DEFAULT_EMULATOR_CONFIG_INPUT.markets.map((market) => ({
        ...market,
        simulation: { ...market.simulation, basis_volatility_bps: 20 },
      })),
    });
    const harness = openHarness({ config });
    const { exchange, clock } = harness;
    // Each ticker with the market's funding as GET /v1/markets/{id} shows it at that moment.
    const tickers: { at: number; data: TickerData; market: Market }[] = [];
    exchange.onTicker((marketId, data) => {
      if (marketId === 'BTC-PERP') {
        tickers.push({ at: clock.now(), data, market: exchange.getMarket('BTC-PERP') });
      }
    });
    exchange.start();
    const long = exchange.createAccount({ startingBalance: '100000' });
    const short = exchange.createAccount({ startingBalance: '100000' });
    exchange.placeOrder(long, marketOrder({ side: 'buy', quantity: '0.2', leverage: 5 }));
    exchange.placeOrder(
      short,
      marketOrder({ side: 'sell', quantity: '0.15', leverage: 5, margin_mode: 'cross' }),
    );
    for (let step = 0; step < 3 * 60 + 5; step++) clock.advanceBy(1000);

    const times = [START + INTERVAL, START + 2 * INTERVAL, START + 3 * INTERVAL];
    for (const [accountId, side] of [
      [long, 'long'],
      [short, 'short'],
    ] as const) {
      const payments = fundingOf(harness.eventsOf(accountId));
      expect(payments.map((event) => parseTimestamp(event.data.funding_time))).toEqual(times);
      let total = parseDecimal('0');
      for (const payment of payments) {
        const at = parseTimestamp(payment.data.funding_time)!;
        expect(payment.data.side).toBe(side);
        expect(payment.channel).toBe('account');
        // The rate published for this funding time (the market at the last ticker before it) ...
        const before = tickers.filter((ticker) => ticker.at < at).at(-1)!;
        expect(before.market.next_funding_time).toBe(payment.data.funding_time);
        expect(payment.data.funding_rate).toBe(before.market.funding_rate);
        // ... at the mark of the funding time.
        const atTime = tickers.filter((ticker) => ticker.at === at).at(-1)!;
        expect(payment.data.mark_price).toBe(atTime.data.mark_price);
        expect(payment.data.position_value).toBe(
          parseDecimal(payment.data.quantity).times(payment.data.mark_price).toFixed(),
        );
        expect(payment.data.amount).toBe(expectedFunding(payment));
        total = total.plus(payment.data.amount);
        expect(payment.data.position_funding_total).toBe(total.toFixed());
      }
      // Non-zero rates, and the sign convention: a long pays a positive rate, a short receives.
      expect(payments.every((payment) => !parseDecimal(payment.data.funding_rate).eq(0))).toBe(
        true,
      );
      for (const payment of payments) {
        const rateSign = Math.sign(Number(payment.data.funding_rate));
        expect(Math.sign(Number(payment.data.amount))).toBe(side === 'long' ? -rateSign : rateSign);
      }
    }
  });

  it('moves the wallet by the payment: equity changes by the amount at an unchanged mark', () => {
    const config = parseEmulatorConfig({
      ...DEFAULT_EMULATOR_CONFIG_INPUT,
      latency: { submit_ms: 10 },
      simulation: { enabled: false, funding_interval_ms: INTERVAL },
    });
    const harness = openHarness({ config });
    const { exchange, clock } = harness;
    const maker = exchange.createAccount({ startingBalance: '1000000' });
    const taker = exchange.createAccount({ startingBalance: '100000' });
    exchange.placeOrder(maker, marketOrder({ type: 'limit', price: '64000', side: 'sell' }));
    clock.advanceBy(10);
    exchange.placeOrder(taker, marketOrder({ side: 'buy', quantity: '0.1' }));
    clock.advanceBy(10);
    exchange.setFunding('BTC-PERP', '0.0001', START + INTERVAL);
    const before = parseDecimal(exchange.getAccount(taker).total_equity);
    clock.advanceBy(INTERVAL);
    // The driver publishes the next period: the time that passed is settled first.
    exchange.setFunding('BTC-PERP', '-0.0002', START + 2 * INTERVAL);
    const after = parseDecimal(exchange.getAccount(taker).total_equity);
    const [payment] = fundingOf(harness.eventsOf(taker));
    // 0.1 × 64000 × 0.0001 = 0.64, paid by the long.
    expect(payment!.data.amount).toBe('-0.64');
    expect(after.minus(before).toFixed()).toBe('-0.64');
    // The maker's short received it.
    expect(fundingOf(harness.eventsOf(maker))[0]!.data.amount).toBe('0.64');
    // Published again without the time moving on: nothing is settled twice.
    exchange.setFunding('BTC-PERP', '-0.0002', START + 2 * INTERVAL);
    expect(fundingOf(harness.eventsOf(taker))).toHaveLength(1);
    expect(exchange.getMarket('BTC-PERP')).toMatchObject({ funding_rate: '-0.0002' });
    expect(Object.keys(exchange.tickerOf('BTC-PERP')).sort()).toEqual([
      'data_status',
      'index_price',
      'last_price',
      'mark_price',
      'market_id',
    ]);
  });

  it("keeps a position's funding total across a restart on the same store", () => {
    const directory = mkdtempSync(join(tmpdir(), 'paperbot-funding-'));
    try {
      const path = join(directory, 'emulator.sqlite');
      const config = parseEmulatorConfig({
        ...DEFAULT_EMULATOR_CONFIG_INPUT,
        latency: { submit_ms: 10 },
        simulation: { enabled: false, funding_interval_ms: INTERVAL },
      });
      const first = new SqliteStore(path);
      const harness = openHarness({ config, store: first });
      const { exchange, clock } = harness;
      const maker = exchange.createAccount({ startingBalance: '1000000' });
      const taker = exchange.createAccount({ startingBalance: '100000' });
      exchange.placeOrder(maker, marketOrder({ type: 'limit', price: '64000', side: 'sell' }));
      clock.advanceBy(10);
      exchange.placeOrder(taker, marketOrder({ side: 'buy', quantity: '0.1' }));
      clock.advanceBy(10);
      exchange.setFunding('BTC-PERP', '0.0001', START + INTERVAL);
      clock.advanceBy(INTERVAL);
      exchange.setFunding('BTC-PERP', '0.0001', START + 2 * INTERVAL);
      exchange.stop();
      first.close();

      const second = new SqliteStore(path);
      const reopened = openHarness({ config, store: second, clock });
      reopened.exchange.setFunding('BTC-PERP', '0.0001', START + 2 * INTERVAL);
      clock.advanceBy(INTERVAL);
      reopened.exchange.setFunding('BTC-PERP', '0.0001', START + 3 * INTERVAL);
      const [payment] = fundingOf(reopened.eventsOf(taker));
      expect(payment!.data.amount).toBe('-0.64');
      expect(payment!.data.position_funding_total).toBe('-1.28');
      reopened.exchange.stop();
      second.close();
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
