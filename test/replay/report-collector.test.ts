import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isoTimestamp } from '../../src/core/clock.ts';
import { Big, toWire, ZERO } from '../../src/core/decimal.ts';
import type { Fill } from '../../src/protocol/index.ts';
import {
  buildReport,
  DEFAULT_SERIES_CAPACITY,
  fillsInTimeOrder,
  openReportCsv,
  quotient,
  ratio,
  ReportCollector,
  type ReportFiles,
  type ReportInput,
  reportSummary,
} from '../../src/replay/report/index.ts';
import { seededRandom } from '../../src/replay/search/random.ts';
import { computeStatistics, groupFigures, reconstructRoundTrips } from './reference-report.ts';

const T0 = Date.UTC(2025, 0, 1);
const MARKETS = ['BTC-USD', 'ETH-USD'];
const STRATEGIES = ['maker', 'taker'];

interface Run {
  readonly fills: Fill[];
  readonly strategies: Map<string, string>;
}

/** `count` fills on two markets by two strategies, positions pulled back through zero often. */
function fillsOf(count: number, seed: number, spacingMs: number): Run {
  const next = seededRandom(seed);
  const fills: Fill[] = [];
  const strategies = new Map<string, string>();
  const prices = [30_000, 2_000];
  const positions = [0, 0];
  for (let index = 0; index < count; index++) {
    const market = index % 2;
    prices[market] = prices[market]! + Math.round((next() - 0.5) * 20);
    const tenths = 1 + Math.floor(next() * 3);
    const quantity = `0.${tenths}`;
    const reduce = positions[market] !== 0 && next() < 0.75;
    const side = reduce ? (positions[market]! > 0 ? 'sell' : 'buy') : next() < 0.5 ? 'buy' : 'sell';
    positions[market] = positions[market]! + (side === 'buy' ? tenths : -tenths);
    const price = String(prices[market]);
    const fill: Fill = {
      fill_id: `f${index}`,
      market_id: MARKETS[market]!,
      route_id: 'svc-paper',
      side,
      quantity,
      price,
      fee: toWire(new Big(price).times(quantity).times('0.0002')),
      notional: toWire(new Big(price).times(quantity)),
      order_id: `o${index}`,
      is_maker: next() < 0.7,
      occurred_at: isoTimestamp(T0 + index * spacingMs),
    };
    fills.push(fill);
    strategies.set(fill.fill_id, STRATEGIES[Math.floor(next() * 2)]!);
  }
  return { fills, strategies };
}

/**
 * Equity every `intervalMs` over `durationMs`, a random walk with losing and winning periods;
 * with `flat`, that share of the samples repeats the one before (an account holding nothing).
 */
function equityOf(durationMs: number, intervalMs: number, seed: number, flat = 0) {
  const next = seededRandom(seed);
  const samples: { t: number; equity: string }[] = [];
  let cents = 1_000_000;
  for (let t = T0 + intervalMs; t <= T0 + durationMs; t += intervalMs) {
    if (next() >= flat) cents += Math.round((next() - 0.49) * 200);
    samples.push({ t, equity: toWire(new Big(cents).div(100)) });
  }
  return samples;
}

describe('the report collector', () => {
  it('gives the figures of the whole-list computation, digit for digit', () => {
    const durationMs = 6 * 60 * 60_000;
    const run = fillsOf(3_000, 7, 7_000);
    const input: ReportInput = {
      currency: 'USDC',
      startingBalance: '10000',
      startMs: T0,
      endMs: T0 + durationMs + 500,
      fills: run.fills,
      equity: equityOf(durationMs, 1_000, 11),
      fillStrategies: run.strategies,
      strategies: STRATEGIES.map((id) => ({ id, name: id, markets: [], missingMarkets: [] })),
    };
    const report = buildReport(input, { sharpePeriodMs: 60_000 });

    // The reference: the statistics computed over the lists held whole, as before schema 3.
    const statistics = computeStatistics(input, { sharpePeriodMs: 60_000 });
    const closed = statistics.roundTrips.filter((trip) => trip.closedAt !== null);
    // No prices in this input: open trips are not marked (nothing unrealized); the realized
    // gross is every trip's, open ones' closed part included.
    const expected = reportSummary({
      ...statistics,
      realizedGrossPnl: statistics.roundTrips.reduce((sum, trip) => sum.plus(trip.grossPnl), ZERO),
      unrealizedPnl: ZERO,
      averageTradeDurationMs: Math.round(
        closed.reduce((sum, trip) => sum + trip.closedAt! - trip.openedAt, 0) / closed.length,
      ),
    });
    expect(report.summary).toEqual(expected);
    // Flat stretches (most samples repeat the one before, peaks included): the same digits.
    const flatInput = { ...input, equity: equityOf(durationMs, 1_000, 13, 0.9) };
    const flatStatistics = computeStatistics(flatInput, { sharpePeriodMs: 60_000 });
    const flatClosed = flatStatistics.roundTrips.filter((trip) => trip.closedAt !== null);
    const flatReport = buildReport(flatInput, { sharpePeriodMs: 60_000 });
    expect(flatReport.summary).toEqual(
      reportSummary({
        ...flatStatistics,
        realizedGrossPnl: flatStatistics.roundTrips.reduce(
          (sum, trip) => sum.plus(trip.grossPnl),
          ZERO,
        ),
        unrealizedPnl: ZERO,
        averageTradeDurationMs: Math.round(
          flatClosed.reduce((sum, trip) => sum + trip.closedAt! - trip.openedAt, 0) /
            flatClosed.length,
        ),
      }),
    );
    expect(flatReport.summary.max_drawdown).not.toBe('0');
    // The run exercises every figure: periods with losses, trades both ways.
    expect(report.summary.sharpe_periods).toBe(360);
    expect(report.summary.sharpe).not.toBeNull();
    expect(report.summary.sortino).not.toBeNull();
    expect(report.summary.trades).toBeGreaterThan(100);
    expect(report.summary.losing_trades).toBeGreaterThan(0);

    const ordered = fillsInTimeOrder(input.fills);
    const group = (keep: (fill: Fill) => boolean) => {
      const figures = groupFigures(ordered.filter(keep));
      return {
        fills: figures.fills,
        traded_notional: toWire(figures.tradedNotional),
        fees: toWire(figures.fees),
        trades: figures.trades,
        winning_trades: figures.winningTrades,
        losing_trades: figures.losingTrades,
        open_trades: figures.openTrades,
        win_rate: figures.winRate === null ? null : ratio(figures.winRate),
        realized_pnl: quotient(figures.realizedPnl),
      };
    };
    for (const market of report.markets) {
      expect(market).toMatchObject(group((fill) => fill.market_id === market.market_id));
    }
    expect(report.markets.map((market) => market.market_id)).toEqual(MARKETS);
    for (const strategy of report.strategies) {
      expect(strategy).toMatchObject(
        group((fill) => run.strategies.get(fill.fill_id) === strategy.strategy_id),
      );
    }

    // Trades in the order they opened, as the whole-list reconstruction has them.
    const trips = reconstructRoundTrips(input.fills);
    expect(report.lists.trades).toBe(trips.length);
    expect(report.trades).toHaveLength(Math.min(trips.length, 1_000));
    report.trades.forEach((trade, index) => {
      const trip = trips[index]!;
      expect([trade.market_id, trade.opened_at_ms, trade.closed_at_ms, trade.net_pnl]).toEqual([
        trip.marketId,
        trip.openedAt,
        trip.closedAt,
        quotient(trip.netPnl),
      ]);
    });
  });

  it('lists the first and last fills and trades, counts what it left out, and writes every one to CSV', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'paperbot-collector-'));
    const csv = openReportCsv(folder);
    const run = fillsOf(500, 3, 1_000);
    const input: ReportInput = {
      currency: 'USDC',
      startingBalance: '10000',
      startMs: T0,
      endMs: T0 + 500_000,
      fills: run.fills,
      equity: [],
    };
    const collector = new ReportCollector({
      currency: 'USDC',
      startingBalance: '10000',
      startMs: T0,
      markets: MARKETS,
      listLimit: 40,
      files: csv,
    });
    for (const fill of run.fills) collector.fill(fill);
    const report = collector.finish(input.endMs);
    csv.close();
    const ids = report.fills.map((fill) => fill.fill_id);
    expect(ids).toEqual([
      ...run.fills.slice(0, 40).map((fill) => fill.fill_id),
      ...run.fills.slice(-40).map((fill) => fill.fill_id),
    ]);
    const trips = reconstructRoundTrips(run.fills);
    expect(report.lists).toEqual({
      limit: 40,
      fills: 500,
      fills_omitted: 420,
      trades: trips.length,
      trades_omitted: trips.length - 40,
      equity_samples: 0,
    });
    expect(report.trades.map((trade) => trade.opened_at_ms)).toEqual(
      trips.slice(0, 40).map((trip) => trip.openedAt),
    );
    // The same run through buildReport gives the same figures.
    expect(report.summary).toEqual(buildReport(input).summary);

    // The files have every fill (in order) and every trade; the report names them.
    expect(report.files).toEqual(csv.paths);
    const rows = async (path: string) =>
      (await readFile(path, 'utf8')).trimEnd().split('\n').slice(1);
    expect((await rows(csv.paths.fills)).map((line) => line.split(',')[1])).toEqual(
      run.fills.map((fill) => fill.fill_id),
    );
    const trades = await rows(csv.paths.trades);
    // Columns: market_id, direction, status, exit_reason, opened_at, ...
    expect(trades.map((line) => Number(Date.parse(line.split(',')[4]!))).sort()).toEqual(
      trips.map((trip) => trip.openedAt).sort(),
    );
    await rm(folder, { recursive: true, force: true });
  });

  it('hands every fill, trade and sample on while holding a bounded state', () => {
    let fills = 0;
    let trades = 0;
    let samples = 0;
    const files: ReportFiles = {
      paths: { fills: 'fills.csv', trades: 'trades.csv', equity: 'equity.csv' },
      fill: () => fills++,
      trade: () => trades++,
      equity: () => samples++,
    };
    const collector = new ReportCollector({
      currency: 'USDC',
      startingBalance: '10000',
      startMs: T0,
      markets: MARKETS,
      strategies: STRATEGIES.map((id) => ({ id, name: id, markets: [], missingMarkets: [] })),
      files,
    });
    // 20,000 fills and 100,000 equity samples (a sample a second: 28 hours): twenty times the
    // listed fills and 160 times the chart's buckets, so every bound is reached many times over.
    const FILLS = 20_000;
    const SAMPLES = 100_000;
    const run = fillsOf(FILLS, 5, 5_000);
    const held: number[] = [];
    let nextFill = 0;
    let cents = 1_000_000;
    for (let index = 1; index <= SAMPLES; index++) {
      const t = T0 + index * 1_000;
      while (nextFill < FILLS && T0 + nextFill * 2_000 <= t) {
        const fill = run.fills[nextFill++]!;
        collector.fill(fill, run.strategies.get(fill.fill_id));
        if (index % 97 === 0) collector.price(fill.market_id, t, fill.price);
      }
      cents += (index * 7919) % 201 === 0 ? -150 : (index % 3) - 1;
      collector.equity(t, String(cents / 100));
      if (index % 4_000 === 0) held.push(collector.heldEntries());
    }
    const report = collector.finish(T0 + SAMPLES * 1_000);

    // Held entries: bucketed series of at most DEFAULT_SERIES_CAPACITY buckets (equity,
    // drawdown, six per market), one open trip per market and strategy, the listed fills and
    // trades, whatever the length of the run.
    const bound = DEFAULT_SERIES_CAPACITY * (2 + 6 * MARKETS.length) + 3 * 1_000 + 20;
    expect(Math.max(...held)).toBeLessThanOrEqual(bound);
    expect(report.fills).toHaveLength(2_000);
    expect(report.trades.length).toBeLessThanOrEqual(1_000);
    expect(report.charts.equity.length).toBeLessThanOrEqual(DEFAULT_SERIES_CAPACITY);
    // The chart still spans the whole run.
    expect(report.charts.equity[0]![0]).toBe(T0);
    expect(report.charts.equity.at(-1)![0]).toBe(T0 + SAMPLES * 1_000);

    // Every fill, trade and sample went on to the files.
    expect([fills, trades, samples]).toEqual([FILLS, report.lists.trades, SAMPLES]);
    expect(report.summary.fills).toBe(FILLS);
    expect(report.files).toEqual(files.paths);
  }, 60_000);
});
