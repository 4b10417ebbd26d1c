/**
 * Fills without a book (docs/backtesting.md, "Fills without a book"): a trades-only import,
 * through the real `paperbot import` and `paperbot backtest` processes, with an SMA strategy
 * whose entries, exits and stop-loss are market orders. Each fill is checked by hand against
 * the CSV: it happens at a recorded trade's time, at that trade's price plus (buy) or minus
 * (sell) the configured half-spread, rounded against the account to the tick.
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { BacktestReport } from '../../../src/replay/report/report.ts';
import { RISK, temporaryFolder } from './helpers.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const BIN = join(ROOT, 'bin/paperbot.js');
const MARKET = 'RW-PERP';
const START_MS = 1_767_225_600_000; // 2026-01-01T00:00:00Z
const TRADES = 600;
const TICK = 0.1;

interface CsvTrade {
  readonly time: number;
  /** Price in ticks. */
  readonly ticks: number;
  /** Quantity in steps of 0.001. */
  readonly steps: number;
}

interface Run {
  readonly code: number | null;
  readonly out: string;
  readonly err: string;
}

function paperbot(args: readonly string[]): Promise<Run> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: ROOT, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
      (error, out, err) => {
        const code =
          error === null ? 0 : typeof error.code === 'number' ? error.code : (error.code ?? null);
        done({ code: code as number | null, out, err });
      },
    );
  });
}

/** A seeded random walk of trades, one a second, in the binance-trades layout. */
function randomWalk(): { csv: string; trades: CsvTrade[] } {
  let state = 20_260_101;
  const next = (): number => {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    return state / 2 ** 32;
  };
  let ticks = 1000; // 100.0
  const trades: CsvTrade[] = [];
  const lines = ['id,price,qty,quote_qty,time,is_buyer_maker'];
  for (let index = 0; index < TRADES; index++) {
    ticks += Math.floor(next() * 7) - 3;
    const steps = 10 + Math.floor(next() * 190);
    const time = START_MS + index * 1000;
    const price = (ticks / 10).toFixed(1);
    const quantity = (steps / 1000).toFixed(3);
    lines.push(
      `${index + 1},${price},${quantity},${((ticks * steps) / 10_000).toFixed(4)},${time},${next() < 0.5}`,
    );
    trades.push({ time, ticks, steps });
  }
  return { csv: `${lines.join('\n')}\n`, trades };
}

function parseCsv(text: string): Record<string, string>[] {
  const [head, ...rows] = text.trim().split('\n');
  const names = head!.split(',');
  return rows.map((row) => {
    const cells = row.split(',');
    return Object.fromEntries(names.map((name, index) => [name, cells[index] ?? '']));
  });
}

let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let session: string;
let walk: ReturnType<typeof randomWalk>;

async function backtestWith(
  name: string,
  venue: Record<string, unknown>,
  params: Record<string, unknown> = {},
): Promise<{ run: Run; report: BacktestReport; fills: Record<string, string>[] }> {
  const config = join(folder.path, `${name}.yaml`);
  const csv = join(folder.path, `${name}-csv`);
  await writeFile(
    config,
    stringify({
      data: [session],
      seed: 7,
      strategies_dir: 'test/replay/backtest/fixtures',
      strategies: [{ id: 'sma', name: 'sma-taker', params: { marketId: MARKET, ...params } }],
      risk: RISK,
      venue,
      logging: { level: 'warn' },
    }),
  );
  const run = await paperbot(['backtest', '--config', config, '--json', '--csv', csv]);
  expect(run.code, run.err).toBe(0);
  const report = JSON.parse(run.out) as BacktestReport;
  const fills = parseCsv(await readFile(join(csv, 'fills.csv'), 'utf8'));
  return { run, report, fills };
}

/** The trade a fill happened on: the recorded trade at the fill's time. */
function tradeAt(time: string): CsvTrade {
  const t = Date.parse(time);
  const trade = walk.trades.find((candidate) => candidate.time === t);
  expect(trade, `no trade at ${time}`).toBeDefined();
  return trade!;
}

beforeAll(async () => {
  folder = await temporaryFolder('taker');
  walk = randomWalk();
  const file = join(folder.path, 'RWUSDT-trades.csv');
  await writeFile(file, walk.csv);
  session = join(folder.path, 'session');
  const imported = await paperbot([
    'import',
    '--out',
    session,
    '--market',
    MARKET,
    '--tick',
    String(TICK),
    '--step',
    '0.001',
    '--min-qty',
    '0.001',
    '--trades',
    file,
    '--trade-layout',
    'binance-trades',
  ]);
  expect(imported.code, imported.err).toBe(0);
}, 180_000);

afterAll(async () => {
  await folder.remove();
});

describe('the taker model on an imported trade file', () => {
  it('fills market orders and the stop at the next trade, within the half-spread', async () => {
    const { report, fills, run } = await backtestWith('taker', {
      fill_model: { taker: { half_spread_bps: '5' } },
    });
    expect(report.fill_models).toEqual({ [MARKET]: 'taker' });
    expect(fills.length).toBeGreaterThan(10);
    expect(report.summary.fills).toBe(fills.length);
    for (const fill of fills) {
      const trade = tradeAt(fill.occurred_at!);
      // Half-spread of 5 bps: a buy at ceil(price * 1.0005), a sell at floor(price * 0.9995).
      const expected =
        fill.side === 'buy'
          ? Math.ceil((trade.ticks * 10_005) / 10_000)
          : Math.floor((trade.ticks * 9_995) / 10_000);
      expect(Math.round(Number(fill.price) / TICK), `${fill.side} at ${fill.occurred_at}`).toBe(
        expected,
      );
      const offset = Math.abs(Number(fill.price) - trade.ticks * TICK);
      expect(offset).toBeLessThanOrEqual((trade.ticks * TICK * 5) / 10_000 + TICK);
      expect(fill.is_maker).toBe('false');
    }
    // Entries, exits by signal and by the stop all traded.
    const reasons = new Set(report.trades.map((trade) => trade.exit_reason));
    expect(reasons.has('signal')).toBe(true);
    expect(reasons.has('bracket_stop_loss')).toBe(true);
    expect(run.err).not.toContain('found nothing to trade against');
  }, 180_000);

  it('fills at the trade after the one the order was sent on', async () => {
    const { fills } = await backtestWith('next', {});
    // The strategy's signals, recomputed from the CSV: the price crossing its 10-trade SMA.
    const crossings = new Set<number>();
    let above: boolean | null = null;
    walk.trades.forEach((trade, index) => {
      if (index < 9) return;
      const window = walk.trades.slice(index - 9, index + 1);
      const sum = window.reduce((total, item) => total + item.ticks, 0);
      const nowAbove = trade.ticks * window.length > sum;
      if (above !== null && nowAbove !== above) crossings.add(index);
      above = nowAbove;
    });
    let stopTicks = 0;
    for (const fill of fills) {
      const index = walk.trades.findIndex((trade) => trade.time === Date.parse(fill.occurred_at!));
      expect(index).toBeGreaterThan(0);
      const sentOn = walk.trades[index - 1]!;
      // No half-spread: the trade's price exactly.
      expect(Math.round(Number(fill.price) / TICK)).toBe(walk.trades[index]!.ticks);
      if (fill.side === 'buy') {
        // An entry: sent on the crossing just before the trade it filled on.
        expect(crossings.has(index - 1), `buy at ${fill.occurred_at}`).toBe(true);
        // The fixture's stop: 0.3% under the signal's price, rounded up to the tick (a sell's).
        stopTicks = Math.ceil((sentOn.ticks * 997) / 1000);
      } else {
        // An exit: on a crossing, or the stop that the trade before reached.
        const stopped = sentOn.ticks <= stopTicks;
        expect(crossings.has(index - 1) || stopped, `sell at ${fill.occurred_at}`).toBe(true);
      }
    }
  }, 180_000);

  it('takes at most the configured share of each trade; the rest is cancelled', async () => {
    const { fills, report } = await backtestWith(
      'cap',
      { fill_model: { taker: { max_volume_share: '0.1' } } },
      { quantity: '0.5' },
    );
    expect(fills.length).toBeGreaterThan(0);
    for (const fill of fills) {
      const trade = tradeAt(fill.occurred_at!);
      const cap = Math.floor(trade.steps / 10);
      expect(Math.round(Number(fill.quantity) * 1000)).toBeLessThanOrEqual(cap);
    }
    // Every entry is cut to its trade's share, below the 0.5 asked.
    expect(fills.every((fill) => Number(fill.quantity) < 0.5)).toBe(true);
    expect(report.summary.fills).toBe(fills.length);
  }, 180_000);

  it('names the model of each market in the summary', async () => {
    const config = join(folder.path, 'summary.yaml');
    await writeFile(
      config,
      stringify({
        data: [session],
        seed: 7,
        strategies_dir: 'test/replay/backtest/fixtures',
        strategies: [{ id: 'sma', name: 'sma-taker', params: { marketId: MARKET } }],
        risk: RISK,
        logging: { level: 'warn' },
      }),
    );
    const run = await paperbot(['backtest', '--config', config]);
    expect(run.code, run.err).toBe(0);
    expect(run.out).toContain('Fill model: RW-PERP taker.');
    const fills = /\bFills\W+(\d+)/.exec(run.out);
    expect(fills, run.out).not.toBeNull();
    expect(Number(fills![1])).toBeGreaterThan(10);
  }, 180_000);

  it('says in the summary and in one warning when orders found nothing to trade against', async () => {
    const config = join(folder.path, 'book.yaml');
    await writeFile(
      config,
      stringify({
        data: [session],
        seed: 7,
        strategies_dir: 'test/replay/backtest/fixtures',
        strategies: [{ id: 'sma', name: 'sma-taker', params: { marketId: MARKET } }],
        risk: RISK,
        // The book model on data without a book: nothing to take.
        venue: { fill_model: { model: 'book' } },
        logging: { level: 'warn' },
      }),
    );
    const run = await paperbot(['backtest', '--config', config]);
    expect(run.code, run.err).toBe(0);
    expect(run.out).toMatch(
      /\d+ orders found nothing to trade against \(RW-PERP\): no recorded liquidity/,
    );
    const warnings = run.err
      .split('\n')
      .filter((line) => line.includes('found nothing to trade against'));
    expect(warnings).toHaveLength(1);
    const warning = JSON.parse(warnings[0]!) as { count: number; markets: string[] };
    expect(warning.count).toBeGreaterThan(0);
    expect(warning.markets).toEqual([MARKET]);
  }, 180_000);

  it('fills at the next candle open on a candles import', async () => {
    // A random walk of one-minute candles: each becomes four trades (open, low/high, close).
    let state = 42;
    const next = (): number => {
      state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
      return state / 2 ** 32;
    };
    const lines = ['timestamp,open,high,low,close,volume'];
    const opens = new Map<number, number>();
    let open = 1000;
    for (let index = 0; index < 240; index++) {
      const close = open + Math.floor(next() * 9) - 4;
      const high = Math.max(open, close) + Math.floor(next() * 3);
      const low = Math.min(open, close) - Math.floor(next() * 3);
      const time = START_MS + index * 60_000;
      opens.set(time, open);
      const text = (ticks: number): string => (ticks / 10).toFixed(1);
      lines.push(`${time},${text(open)},${text(high)},${text(low)},${text(close)},1.000`);
      open = close;
    }
    const file = join(folder.path, 'candles.csv');
    await writeFile(file, `${lines.join('\n')}\n`);
    const candleSession = join(folder.path, 'candle-session');
    const imported = await paperbot([
      'import',
      '--out',
      candleSession,
      '--market',
      MARKET,
      '--tick',
      '0.1',
      '--step',
      '0.001',
      '--min-qty',
      '0.001',
      '--candles',
      file,
      '--candle-interval',
      '60000',
    ]);
    expect(imported.code, imported.err).toBe(0);
    const config = join(folder.path, 'candles.yaml');
    const csv = join(folder.path, 'candles-csv');
    await writeFile(
      config,
      stringify({
        data: [candleSession],
        seed: 7,
        strategies_dir: 'test/replay/backtest/fixtures',
        strategies: [{ id: 'sma', name: 'sma-taker', params: { marketId: MARKET, period: 8 } }],
        risk: RISK,
        logging: { level: 'warn' },
      }),
    );
    const run = await paperbot(['backtest', '--config', config, '--json', '--csv', csv]);
    expect(run.code, run.err).toBe(0);
    const report = JSON.parse(run.out) as BacktestReport;
    expect(report.fill_models).toEqual({ [MARKET]: 'taker' });
    const fills = parseCsv(await readFile(join(csv, 'fills.csv'), 'utf8'));
    expect(fills.length).toBeGreaterThan(4);
    for (const fill of fills) {
      // Signals come on any of a candle's four trades; the fill waits for the next open.
      const t = Date.parse(fill.occurred_at!);
      expect(opens.has(t), `${fill.side} at ${fill.occurred_at} is not a candle's open`).toBe(true);
      expect(Math.round(Number(fill.price) / TICK)).toBe(opens.get(t));
    }
  }, 180_000);
});
