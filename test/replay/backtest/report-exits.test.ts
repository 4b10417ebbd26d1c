/**
 * The report names why each trade ended. A backtest of a recorded session with a strategy that
 * opens a bracket (its take-profit leg fires), then trades once by its own signal, then buys and
 * holds to the end: the trades say `bracket_take_profit`, `signal` and `end_of_data` (open,
 * marked to market) in the JSON, the CSV and the HTML; the summary's gross PnL is the trade
 * rows' realized gross plus the open trade's unrealized PnL; every intent is counted once; and
 * trade prices are on the market's tick.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { map, mergeMap, type Observable, of } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decimal, toWire } from '../../../src/core/decimal.ts';
import { resolveBacktestConfig } from '../../../src/replay/backtest/config.ts';
import { runBacktest } from '../../../src/replay/backtest/runner.ts';
import { formatBacktestSummary } from '../../../src/replay/backtest/summary.ts';
import { openReplaySource } from '../../../src/replay/backtest/sources.ts';
import { openRecording, readRecording } from '../../../src/replay/format/recording.ts';
import { openReportCsv } from '../../../src/replay/report/csv.ts';
import { renderReportHtml } from '../../../src/replay/report/html.ts';
import {
  bracket,
  defineStrategy,
  marketOrder,
  type OrderIntent,
} from '../../../src/runtime/strategy/index.ts';
import { marketMakerDocument, recordSession, temporaryFolder } from './helpers.ts';

let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let session: string;
let trades: { t: number; price: string }[];

beforeAll(async () => {
  folder = await temporaryFolder('report-exits');
  session = join(folder.path, 'session');
  await recordSession(session, { durationMs: 4 * 60_000, marketIds: ['BTC-PERP'] });
  trades = [];
  const reader = readRecording(await openRecording(session), { kinds: ['trade'] });
  for await (const batch of reader.batches()) {
    for (const record of batch) {
      if (record.k === 'trade') trades.push({ t: record.t, price: record.d.price });
    }
  }
}, 120_000);

afterAll(async () => {
  await folder.remove();
});

const Params = z.strictObject({
  stop: z.string(),
  profit: z.string(),
  buyAt: z.number(),
  sellAt: z.number(),
  holdAt: z.number(),
});

/** A bracket on the first trade; at `buyAt` and `sellAt` a trade by signal; at `holdAt` a buy held. */
const tour = defineStrategy({
  name: 'exit-tour',
  description: 'a bracket, a signal round trip, and a position held to the end',
  params: Params,
  create: (context, params) => {
    const quantity = '0.01';
    const steps: { at: number; intent: () => OrderIntent }[] = [
      {
        at: 0,
        intent: () =>
          bracket({
            entry: marketOrder({ marketId: 'BTC-PERP', side: 'buy', quantity }),
            stopLoss: { triggerPrice: params.stop },
            takeProfit: { triggerPrice: params.profit },
            triggerSource: 'last',
          }),
      },
      {
        at: params.buyAt,
        intent: () => marketOrder({ marketId: 'BTC-PERP', side: 'buy', quantity }),
      },
      {
        at: params.sellAt,
        intent: () => marketOrder({ marketId: 'BTC-PERP', side: 'sell', quantity }),
      },
      {
        at: params.holdAt,
        intent: () => marketOrder({ marketId: 'BTC-PERP', side: 'buy', quantity }),
      },
    ];
    let next = 0;
    return context.trades$('BTC-PERP').pipe(
      map(() => context.clock.now()),
      mergeMap((now): Observable<OrderIntent> => {
        const due: OrderIntent[] = [];
        while (next < steps.length && steps[next]!.at <= now) due.push(steps[next++]!.intent());
        return of(...due);
      }),
    );
  },
});

describe('a report that names exits', () => {
  it('labels each trade with its exit reason, marks the open one, and reconciles', async () => {
    const first = trades[0]!;
    const early = trades.filter(
      (trade) => trade.t > first.t + 2_000 && trade.t <= first.t + 60_000,
    );
    const high = early.map((trade) => decimal(trade.price)).reduce((a, b) => (a.gt(b) ? a : b));
    const params = {
      stop: toWire(decimal(first.price).times('0.5').round(0)),
      profit: toWire(high),
      buyAt: first.t + 90_000,
      sellAt: first.t + 120_000,
      holdAt: first.t + 150_000,
    };
    const loaded = await resolveBacktestConfig(marketMakerDocument([session]));
    const source = await openReplaySource(loaded.config.data, { cache: 'off' });
    const csvFolder = join(folder.path, 'csv');
    const csv = openReportCsv(csvFolder);
    const result = await runBacktest({
      config: loaded.config,
      strategies: [{ id: 'tour', name: 'exit-tour', definition: tour, rawParams: params, params }],
      source,
      reportFiles: csv,
    });
    csv.close();
    const report = result.report;
    expect(report.schema_version).toBe(4);

    // Why each trade ended, in the JSON.
    expect(
      report.trades.map((trade) => [trade.status, trade.exit_reason, trade.direction]),
    ).toEqual([
      ['closed', 'bracket_take_profit', 'long'],
      ['closed', 'signal', 'long'],
      ['open', 'end_of_data', 'long'],
    ]);
    const [bracketTrade, signalTrade, openTrade] = report.trades;
    expect(bracketTrade!.exit_price).not.toBeNull();
    expect(decimal(bracketTrade!.exit_price!).gte(decimal(params.profit).minus(50))).toBe(true);
    expect(signalTrade).toMatchObject({ mark_price: null, unrealized_pnl: '0' });

    // The open trade is marked to market at the end: its PnL is more than its fee.
    expect(openTrade!.closed_at).toBeNull();
    expect(openTrade!.mark_price).not.toBeNull();
    const unrealized = decimal(openTrade!.mark_price!)
      .minus(decimal(openTrade!.entry_price))
      .times('0.01');
    expect(decimal(openTrade!.unrealized_pnl).eq(unrealized)).toBe(true);
    expect(
      decimal(openTrade!.net_pnl).eq(
        decimal(openTrade!.gross_pnl).plus(unrealized).minus(decimal(openTrade!.fees)),
      ),
    ).toBe(true);

    // The summary reconciles with the rows: gross = Σ rows' gross + Σ rows' unrealized.
    const sum = (pick: (trade: (typeof report.trades)[number]) => string) =>
      report.trades.reduce((total, trade) => total.plus(decimal(pick(trade))), decimal(0));
    const summary = report.summary;
    expect(decimal(summary.realized_gross_pnl).eq(sum((trade) => trade.gross_pnl))).toBe(true);
    expect(decimal(summary.unrealized_pnl).eq(sum((trade) => trade.unrealized_pnl))).toBe(true);
    expect(decimal(summary.gross_pnl_other).eq(0)).toBe(true);
    expect(
      decimal(summary.gross_pnl).eq(
        decimal(summary.realized_gross_pnl).plus(decimal(summary.unrealized_pnl)),
      ),
    ).toBe(true);
    expect(decimal(summary.net_pnl).eq(sum((trade) => trade.net_pnl))).toBe(true);

    // Every intent once: 4 from the strategy, the bracket's entry and its fired leg released.
    const intents = report.intents!;
    expect(intents.from_strategies).toEqual({ bracket: 1, place: 3 });
    expect(intents.released).toEqual({
      bracket_entry: 1,
      bracket_stop_loss: 0,
      bracket_take_profit: 1,
      stop: 0,
      take_profit: 0,
      trailing: 0,
    });
    expect(intents.outcomes).toEqual({
      accepted: 5,
      denied: 0,
      rejected: 0,
      unknown: 0,
      held: 1,
      unanswered: 0,
    });
    expect(intents.total).toBe(6);
    const text = formatBacktestSummary(result);
    expect(text).toContain(
      'intents 6 = 4 from strategies (bracket 1, place 3) + 2 released by the runtime (bracket entries 1, bracket take-profit legs 1)',
    );
    expect(text).toContain(
      'answered: accepted 5, denied 0, rejected 0, unknown 0, held as emulated exits 1, unanswered at the end 0',
    );
    expect(text).toMatch(/Gross PnL\s+-?[\d.]+ \w+ = realized -?[\d.]+ \+ unrealized -?[\d.]+/);

    // Prices on the market's tick (0.5) in every trade.
    for (const trade of report.trades) {
      for (const price of [trade.entry_price, trade.exit_price, trade.mark_price]) {
        if (price !== null) expect(decimal(price).mod('0.5').eq(0), price).toBe(true);
      }
    }

    // The CSV and the HTML say the same.
    const rows = (await readFile(join(csvFolder, 'trades.csv'), 'utf8')).trimEnd().split('\n');
    const heads = rows[0]!.split(',');
    const reasonColumn = heads.indexOf('exit_reason');
    const statusColumn = heads.indexOf('status');
    expect(reasonColumn).toBeGreaterThan(0);
    expect(rows.slice(1).map((row) => row.split(',')[reasonColumn])).toEqual([
      'bracket_take_profit',
      'signal',
      'end_of_data',
    ]);
    expect(rows.slice(1).map((row) => row.split(',')[statusColumn])).toEqual([
      'closed',
      'closed',
      'open',
    ]);
    const html = renderReportHtml(report);
    expect(html).toContain('<th>Exit reason</th>');
    expect(html).toContain('<td class="text">bracket take-profit</td>');
    expect(html).toContain('<td class="text">open at end of data</td>');
    expect(html).toContain('<h2>Intents</h2>');
  }, 120_000);
});
