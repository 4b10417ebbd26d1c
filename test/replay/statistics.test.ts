import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoTimestamp } from '../../src/core/clock.ts';
import { Big, parseDecimal, sumDecimals, toWire, ZERO } from '../../src/core/decimal.ts';
import type { Fill } from '../../src/protocol/index.ts';
import { type ReportInput, reportInputProblems } from '../../src/replay/report/index.ts';
import {
  averageEquity,
  computeStatistics,
  exposure,
  maxDrawdown,
  parseSamples,
  positionsFromFills,
  reconstructRoundTrips,
  sharpeRatio,
} from './reference-report.ts';

const T0 = Date.UTC(2025, 0, 1);

function fill(
  index: number,
  marketId: string,
  side: 'buy' | 'sell',
  quantity: string,
  price: string,
  fee: string,
  t: number,
): Fill {
  return {
    fill_id: `f${index}`,
    market_id: marketId,
    route_id: 'svc-paper',
    side,
    quantity,
    price,
    fee,
    notional: toWire(parseDecimal(price).times(parseDecimal(quantity))),
    order_id: `o${index}`,
    is_maker: false,
    occurred_at: isoTimestamp(t),
  };
}

const fillsArbitrary = fc
  .array(
    fc.record({
      market: fc.constantFrom('BTC-USD', 'ETH-USD'),
      side: fc.constantFrom('buy' as const, 'sell' as const),
      quantity: fc.integer({ min: 1, max: 40 }).map((tenths) => toWire(new Big(tenths).div(10))),
      price: fc.integer({ min: 90, max: 110 }).map(String),
      fee: fc.constantFrom('0', '0.05', '0.1', '-0.01'),
      gap: fc.integer({ min: 0, max: 3 }),
    }),
    { maxLength: 40 },
  )
  .map((rows) => {
    let t = T0;
    return rows.map((row, index) => {
      t += row.gap * 1_000;
      return fill(index, row.market, row.side, row.quantity, row.price, row.fee, t);
    });
  });

const positiveEquity = fc.array(fc.integer({ min: 1, max: 1_000_000 }), {
  maxLength: 60,
});

function samplesOf(values: readonly number[], stepMs = 60_000) {
  return values.map((value, index) => ({
    t: T0 + (index + 1) * stepMs,
    equity: String(value),
  }));
}

describe('round trips', () => {
  it('conserve quantity and fees, and realize sell minus buy notional (property)', () => {
    fc.assert(
      fc.property(fillsArbitrary, (fills) => {
        const trips = reconstructRoundTrips(fills);
        for (const marketId of ['BTC-USD', 'ETH-USD']) {
          const own = fills.filter((item) => item.market_id === marketId);
          const ownTrips = trips.filter((trip) => trip.marketId === marketId);
          const net = sumDecimals(
            own.map((item) =>
              item.side === 'buy' ? parseDecimal(item.quantity) : parseDecimal(item.quantity).neg(),
            ),
          );
          const traded = sumDecimals(own.map((item) => parseDecimal(item.quantity)));
          const opened = sumDecimals(ownTrips.map((trip) => trip.openedQuantity));
          const closed = sumDecimals(ownTrips.map((trip) => trip.closedQuantity));
          expect(opened.plus(closed).eq(traded)).toBe(true);
          expect(opened.minus(closed).eq(net.abs())).toBe(true);
          // At most one trip per market is still open, and only when the position is not flat.
          const open = ownTrips.filter((trip) => trip.closedAt === null);
          expect(open.length).toBe(net.eq(0) ? 0 : 1);
          for (const trip of ownTrips.filter((item) => item.closedAt !== null)) {
            expect(trip.openedQuantity.eq(trip.closedQuantity)).toBe(true);
          }
          if (net.eq(0)) {
            const sells = own.filter((item) => item.side === 'sell');
            const buys = own.filter((item) => item.side === 'buy');
            const notional = (items: Fill[]) =>
              sumDecimals(items.map((item) => parseDecimal(item.price).times(item.quantity)));
            const gross = sumDecimals(ownTrips.map((trip) => trip.grossPnl));
            expect(gross.eq(notional(sells).minus(notional(buys)))).toBe(true);
          }
        }
        const fees = sumDecimals(fills.map((item) => parseDecimal(item.fee)));
        expect(sumDecimals(trips.map((trip) => trip.fees)).eq(fees)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('splits a fill that crosses zero between the closing and the opening trip', () => {
    const fills = [
      fill(1, 'BTC-USD', 'buy', '1', '100', '0.3', T0),
      fill(2, 'BTC-USD', 'sell', '3', '110', '0.9', T0 + 1_000),
      fill(3, 'BTC-USD', 'buy', '2', '105', '0.6', T0 + 2_000),
    ];
    const [long, short] = reconstructRoundTrips(fills);
    expect(long).toMatchObject({
      direction: 'long',
      openedAt: T0,
      closedAt: T0 + 1_000,
    });
    expect(toWire(long!.grossPnl)).toBe('10');
    expect(toWire(long!.fees)).toBe('0.6');
    expect(toWire(long!.netPnl)).toBe('9.4');
    expect(short).toMatchObject({
      direction: 'short',
      openedAt: T0 + 1_000,
      closedAt: T0 + 2_000,
    });
    expect(toWire(short!.openedQuantity)).toBe('2');
    expect(toWire(short!.grossPnl)).toBe('10');
    expect(toWire(short!.fees)).toBe('1.2');
    expect(short!.fillIds).toEqual(['f2', 'f3']);
  });

  it('matches closing quantity against the oldest lots first', () => {
    const fills = [
      fill(1, 'ETH-USD', 'buy', '1', '100', '0', T0),
      fill(2, 'ETH-USD', 'buy', '1', '120', '0', T0 + 1),
      fill(3, 'ETH-USD', 'sell', '1', '130', '0', T0 + 2),
    ];
    const [trip] = reconstructRoundTrips(fills);
    expect(trip!.closedAt).toBeNull();
    // FIFO: the lot at 100 is closed first, realizing 30 (average cost would say 20).
    expect(toWire(trip!.grossPnl)).toBe('30');
    expect(toWire(trip!.entryPrice)).toBe('110');
    expect(toWire(trip!.exitPrice!)).toBe('130');
  });
});

describe('drawdown', () => {
  it('is between 0 and 1 for positive equity, 0 when equity never falls (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), positiveEquity, (start, values) => {
        const drawdown = maxDrawdown(new Big(start), parseSamples(samplesOf(values)), T0);
        expect(drawdown.fraction.gte(0)).toBe(true);
        expect(drawdown.fraction.lt(1)).toBe(true);
        expect(drawdown.amount.gte(0)).toBe(true);
        const sorted = [...values].sort((a, b) => a - b).filter((value) => value >= start);
        const rising = maxDrawdown(new Big(start), parseSamples(samplesOf(sorted)), T0);
        expect(rising.fraction.eq(0)).toBe(true);
        expect(rising.peakAt).toBeNull();
      }),
      { numRuns: 300 },
    );
  });

  it('measures from the running peak, starting balance included', () => {
    const drawdown = maxDrawdown(
      new Big(100),
      parseSamples(samplesOf([120, 90, 150, 135, 160])),
      T0,
    );
    expect(toWire(drawdown.fraction)).toBe('0.25');
    expect(toWire(drawdown.amount)).toBe('30');
    expect(drawdown.peakAt).toBe(T0 + 60_000);
    expect(drawdown.troughAt).toBe(T0 + 120_000);
  });
});

describe('Sharpe ratio', () => {
  it('is null for constant equity, and for fewer than two returns', () => {
    const constant = parseSamples(samplesOf([100, 100, 100, 100]));
    expect(sharpeRatio(new Big(100), constant, T0, T0 + 300_000, 60_000).ratio).toBeNull();
    const short = parseSamples(samplesOf([101]));
    expect(sharpeRatio(new Big(100), short, T0, T0 + 119_999, 60_000)).toMatchObject({
      ratio: null,
      periods: 1,
    });
  });

  it('does not change when every amount is scaled (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 50, max: 150 }), {
          minLength: 3,
          maxLength: 30,
        }),
        fc.integer({ min: 2, max: 1_000 }),
        (values, scale) => {
          const end = T0 + (values.length + 1) * 60_000;
          const base = sharpeRatio(new Big(100), parseSamples(samplesOf(values)), T0, end, 60_000);
          const scaled = sharpeRatio(
            new Big(100 * scale),
            parseSamples(samplesOf(values.map((value) => value * scale))),
            T0,
            end,
            60_000,
          );
          expect(scaled.ratio === null).toBe(base.ratio === null);
          if (base.ratio && scaled.ratio) {
            expect(scaled.ratio.minus(base.ratio).abs().lt('1e-20')).toBe(true);
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it('follows the documented formula on a worked example, per period', () => {
    // Per-minute returns +10%, -10%, +10%: mean 1/30, sample stdev sqrt(0.08/3 / 2), so
    // 0.288675... per minute; downside deviation sqrt(0.01/3), so Sortino 0.57735... per minute.
    const samples = parseSamples(samplesOf([110, 99, 108.9]));
    const result = sharpeRatio(new Big(100), samples, T0, T0 + 180_000, 60_000);
    const returns = [new Big('0.1'), new Big('-0.1'), new Big('0.1')];
    const mean = sumDecimals(returns).div(3);
    const deviation = sumDecimals(returns.map((value) => value.minus(mean).pow(2)))
      .div(2)
      .sqrt();
    expect(result.periods).toBe(3);
    expect(result.ratio!.minus(mean.div(deviation)).abs().lt('1e-24')).toBe(true);
    expect(result.ratio!.toFixed(4)).toBe('0.2887');
    expect(result.sortino!.toFixed(4)).toBe('0.5774');
    // Three minutes say nothing about a year: no annualized copies.
    expect(result.annualizedRatio).toBeNull();
    expect(result.annualizedSortino).toBeNull();
    expect(result.annualization.toFixed(2)).toBe(new Big(525_600).sqrt().toFixed(2));
  });

  it('annualizes only runs of at least 30 days', () => {
    const day = 86_400_000;
    const values = Array.from({ length: 30 }, (_, index) => 100 + (index % 3) - index / 10);
    const samples = values.map((value, index) => ({
      t: T0 + (index + 1) * day,
      equity: String(value),
    }));
    const short = sharpeRatio(new Big(100), parseSamples(samples), T0, T0 + 30 * day - 1, day);
    expect(short.ratio).not.toBeNull();
    expect(short.annualizedRatio).toBeNull();
    const long = sharpeRatio(new Big(100), parseSamples(samples), T0, T0 + 30 * day, day);
    expect(long.annualizedRatio!.eq(long.ratio!.times(new Big(365).sqrt()))).toBe(true);
    expect(long.annualizedSortino!.eq(long.sortino!.times(new Big(365).sqrt()))).toBe(true);
  });

  it('has no Sortino without a losing period', () => {
    const rising = parseSamples(samplesOf([101, 103, 104]));
    const result = sharpeRatio(new Big(100), rising, T0, T0 + 180_000, 60_000);
    expect(result.ratio).not.toBeNull();
    expect(result.sortino).toBeNull();
  });
});

describe('exposure and average equity', () => {
  it('counts time with any position open, within the range', () => {
    const d = (text: string) => parseDecimal(text);
    const positions = [
      { t: T0 - 5_000, marketId: 'A', quantity: d('1') },
      { t: T0 + 2_000, marketId: 'A', quantity: d('0') },
      { t: T0 + 4_000, marketId: 'B', quantity: d('-2') },
      { t: T0 + 5_000, marketId: 'A', quantity: d('1') },
      { t: T0 + 6_000, marketId: 'B', quantity: d('0') },
      { t: T0 + 7_000, marketId: 'A', quantity: d('0') },
    ];
    expect(toWire(exposure(positions, T0, T0 + 10_000)!)).toBe('0.5');
    expect(exposure(positions, T0, T0)).toBeNull();
  });

  it('is a share between 0 and 1 (property)', () => {
    fc.assert(
      fc.property(fillsArbitrary, fc.integer({ min: 1, max: 200_000 }), (fills, length) => {
        const share = exposure(positionsFromFills(fills), T0, T0 + length)!;
        expect(share.gte(0) && share.lte(1)).toBe(true);
      }),
    );
  });

  it('weights equity by the time it held', () => {
    const samples = parseSamples([
      { t: T0 + 1_000, equity: '200' },
      { t: T0 + 3_000, equity: '50' },
    ]);
    // 100 for 1 s, 200 for 2 s, 50 for 1 s over 4 s.
    expect(toWire(averageEquity(new Big(100), samples, T0, T0 + 4_000))).toBe('137.5');
  });
});

describe('computeStatistics', () => {
  const input: ReportInput = {
    currency: 'USDC',
    startingBalance: '1000',
    startMs: T0,
    endMs: T0 + 10_000,
    fills: [
      fill(1, 'BTC-USD', 'buy', '2', '100', '0.2', T0 + 1_000),
      fill(2, 'BTC-USD', 'sell', '2', '105', '0.21', T0 + 3_000),
      fill(3, 'BTC-USD', 'sell', '1', '104', '0.1', T0 + 5_000),
      fill(4, 'BTC-USD', 'buy', '1', '106', '0.1', T0 + 6_000),
    ],
    equity: [
      { t: T0 + 1_000, equity: '999.8' },
      { t: T0 + 3_000, equity: '1009.59' },
      { t: T0 + 5_000, equity: '1009.49' },
      { t: T0 + 6_000, equity: '1007.39' },
    ],
  };

  it('computes every statistic of a worked example', () => {
    const statistics = computeStatistics(input);
    expect(toWire(statistics.netPnl)).toBe('7.39');
    expect(toWire(statistics.fees)).toBe('0.61');
    expect(toWire(statistics.grossPnl)).toBe('8');
    expect(toWire(statistics.returnFraction)).toBe('0.00739');
    expect(statistics.trades).toBe(2);
    expect(statistics.winningTrades).toBe(1);
    expect(statistics.losingTrades).toBe(1);
    expect(toWire(statistics.winRate!)).toBe('0.5');
    expect(toWire(statistics.realizedPnl)).toBe('7.39');
    expect(toWire(statistics.tradedNotional)).toBe('620');
    // Positions open 1 s..3 s and 5 s..6 s of 10 s.
    expect(toWire(statistics.exposure!)).toBe('0.3');
    expect(statistics.sharpe.ratio).toBeNull();
    expect(toWire(statistics.drawdown.amount)).toBe('2.2');
  });

  it('uses given positions for exposure instead of rebuilding them', () => {
    const statistics = computeStatistics({
      ...input,
      positions: [
        { t: T0, marketId: 'BTC-USD', quantity: '1' },
        { t: T0 + 2_500, marketId: 'BTC-USD', quantity: '0' },
      ],
    });
    expect(toWire(statistics.exposure!)).toBe('0.25');
  });

  it('reports every input problem at once', () => {
    const problems = reportInputProblems({
      ...input,
      startingBalance: '0',
      endMs: T0 - 1,
      fills: [{ ...input.fills[0]!, quantity: 'x', side: 'long' }],
      equity: [
        { t: T0 + 5, equity: '1' },
        { t: T0 + 1, equity: '2' },
      ],
    });
    expect(problems.map((problem) => problem.path)).toEqual([
      'startingBalance',
      'endMs',
      'fills.0.quantity',
      'fills.0.side',
      'equity.1.t',
    ]);
  });

  it('has no trades, no win rate and no exposure without fills', () => {
    const statistics = computeStatistics({ ...input, fills: [], equity: [] });
    expect(statistics).toMatchObject({
      trades: 0,
      winRate: null,
      averageTradePnl: null,
    });
    expect(statistics.netPnl.eq(ZERO)).toBe(true);
    expect(statistics.exposure!.eq(0)).toBe(true);
    expect(statistics.turnover!.eq(0)).toBe(true);
  });
});
