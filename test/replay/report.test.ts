import { PassThrough } from 'node:stream';
import { createContext, Script } from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoTimestamp } from '../../src/core/clock.ts';
import type { Fill } from '../../src/protocol/index.ts';
import {
  BucketedSeries,
  buildReport,
  createProgress,
  durationText,
  escapeHtml,
  formatTable,
  loadChartLibrary,
  percentText,
  REPORT_SCHEMA,
  type ReportInput,
  renderReportHtml,
  reportToJson,
  sharpeText,
  summaryFigures,
} from '../../src/replay/report/index.ts';
import { decimalNumber, type SeriesPoint } from '../../src/replay/report/series.ts';

const T0 = Date.UTC(2025, 0, 1);

function fill(index: number, side: 'buy' | 'sell', price: string, t: number): Fill {
  return {
    fill_id: `f${index}`,
    market_id: 'BTC-USD',
    route_id: 'svc-paper',
    side,
    quantity: '1',
    price,
    fee: '0.05',
    notional: price,
    order_id: `o${index}`,
    is_maker: true,
    occurred_at: isoTimestamp(t),
  };
}

function input(): ReportInput {
  const fills: Fill[] = [];
  const equity: { t: number; equity: string }[] = [];
  let balance = 1_000;
  for (let index = 0; index < 20; index++) {
    const t = T0 + index * 30_000;
    fills.push(fill(index, index % 2 === 0 ? 'buy' : 'sell', String(100 + (index % 7)), t));
    balance += (index % 5) - 2;
    equity.push({ t, equity: `${balance}.5` });
  }
  return {
    currency: 'USDC',
    startingBalance: '1000',
    startMs: T0,
    endMs: T0 + 600_000,
    fills,
    equity,
    metadata: {
      strategy: 'grid <maker>',
      parameters: { spread: '0.1', levels: 3, enabled: true },
      data: ['backtest-data/session-1'],
    },
  };
}

describe('the JSON report', () => {
  it('has the documented top-level shape and summary keys, in order', () => {
    const base = input();
    const report = buildReport(base);
    expect(Object.keys(report)).toEqual([
      'schema',
      'schema_version',
      'metadata',
      'currency',
      'range',
      'summary',
      'markets',
      'strategies',
      'trades',
      'fills',
      'lists',
      'files',
      'intents',
      'charts',
    ]);
    expect(report.schema).toBe(REPORT_SCHEMA);
    expect(Object.keys(report.summary)).toEqual([
      'starting_balance',
      'ending_equity',
      'net_pnl',
      'gross_pnl',
      'realized_gross_pnl',
      'unrealized_pnl',
      'gross_pnl_other',
      'fees',
      'funding',
      'return',
      'sharpe',
      'sortino',
      'sharpe_period_ms',
      'sharpe_periods',
      'sharpe_annualized',
      'sortino_annualized',
      'max_drawdown',
      'max_drawdown_amount',
      'max_drawdown_peak_at_ms',
      'max_drawdown_trough_at_ms',
      'trades',
      'winning_trades',
      'losing_trades',
      'open_trades',
      'win_rate',
      'realized_pnl',
      'average_trade_pnl',
      'average_trade_duration_ms',
      'fills',
      'traded_notional',
      'average_equity',
      'exposure',
      'turnover',
    ]);
    expect(report.metadata.parameters).toEqual({
      enabled: true,
      levels: 3,
      spread: '0.1',
    });
    expect(Object.keys(report.metadata.parameters)).toEqual(['enabled', 'levels', 'spread']);
    expect(report.metadata.run_at).toBeNull();
    expect(report.trades).toHaveLength(10);
    expect(report.summary.return).toMatch(/^-?\d+\.\d{6}$/);
    // Schema 3: no equity list (the chart has the run in buckets, --csv every sample); what
    // the lists hold is counted.
    expect(report).not.toHaveProperty('equity');
    expect(report.lists).toEqual({
      limit: 1_000,
      fills: 20,
      fills_omitted: 0,
      trades: 10,
      trades_omitted: 0,
      equity_samples: report.lists.equity_samples,
    });
    expect(report.lists.equity_samples).toBe(base.equity.length);
    expect(report.files).toBeNull();
    // Every fill, in time order, with the same types as the input (decimals as strings).
    expect(report.fills).toHaveLength(20);
    expect(report.fills[0]).toEqual({
      t: T0,
      occurred_at: isoTimestamp(T0),
      fill_id: 'f0',
      order_id: 'o0',
      strategy_id: null,
      market_id: 'BTC-USD',
      side: 'buy',
      quantity: '1',
      price: '100',
      fee: '0.05',
      is_maker: true,
    });
    expect(report.markets).toEqual([
      {
        market_id: 'BTC-USD',
        fills: 20,
        traded_notional: report.summary.traded_notional,
        fees: '1',
        trades: 10,
        winning_trades: report.summary.winning_trades,
        losing_trades: report.summary.losing_trades,
        open_trades: 0,
        win_rate: report.summary.win_rate,
        realized_pnl: report.summary.realized_pnl,
        final_position: '0',
        funding: '0',
      },
    ]);
    // Each trade 30 s long, MAE and MFE within the trip's own prices (no price series given).
    expect(report.trades.map((trade) => trade.duration_ms)).toEqual(Array(10).fill(30_000));
    expect(report.summary.average_trade_duration_ms).toBe(30_000);
    expect(report.trades[0]).toMatchObject({ entry_price: '100', exit_price: '101' });
    expect(report.trades[0]).toMatchObject({ mae: '0.000000', mfe: '0.010000' });
  });

  it('attributes fills to strategies and names a skipped strategy', () => {
    const base = input();
    const report = buildReport({
      ...base,
      fillStrategies: new Map(
        base.fills.map((fill, index) => [fill.fill_id, index < 4 ? 'early' : 'late']),
      ),
      strategies: [
        { id: 'early', name: 'grid', markets: ['BTC-USD'], missingMarkets: [] },
        { id: 'late', name: 'grid', markets: [], missingMarkets: [] },
        { id: 'gone', name: 'grid', markets: ['DOGE-USD'], missingMarkets: ['DOGE-USD'] },
      ],
    });
    expect(
      report.strategies.map((strategy) => [
        strategy.strategy_id,
        strategy.status,
        strategy.fills,
        strategy.trades,
        strategy.missing_markets,
      ]),
    ).toEqual([
      ['early', 'ran', 4, 2, []],
      ['late', 'ran', 16, 8, []],
      ['gone', 'skipped', 0, 0, ['DOGE-USD']],
    ]);
    expect(report.fills[5]!.strategy_id).toBe('late');
    const page = renderReportHtml(report);
    expect(page).toContain('Strategy gone (grid) was skipped: the data has no DOGE-USD.');
  });

  it('measures MAE and MFE against the price series while a trip is open', () => {
    const prices = new BucketedSeries();
    // Trip 1 (buy at 100, sell at 101) runs T0..T0+30 s: the price dips to 95 and peaks at 104.
    prices.add(T0 + 5_000, '95');
    prices.add(T0 + 10_000, '104');
    prices.add(T0 + 200_000, '50');
    const report = buildReport({
      ...input(),
      marketSeries: new Map([
        ['BTC-USD', { price: prices.points(), buyOrders: [], sellOrders: [] }],
      ]),
    });
    expect(report.trades[0]).toMatchObject({ direction: 'long', mae: '0.050000', mfe: '0.040000' });
  });

  it('is byte-identical for identical input, HTML included (property over parameter order)', () => {
    const base = input();
    const json = reportToJson(buildReport(base));
    const html = renderReportHtml(buildReport(base));
    fc.assert(
      fc.property(
        fc.shuffledSubarray(Object.entries(base.metadata!.parameters!), {
          minLength: 3,
        }),
        (entries) => {
          const shuffled = {
            ...base,
            metadata: {
              ...base.metadata,
              parameters: Object.fromEntries(entries),
            },
          };
          expect(reportToJson(buildReport(shuffled))).toBe(json);
          expect(renderReportHtml(buildReport(shuffled))).toBe(html);
        },
      ),
      { numRuns: 10 },
    );
  });

  it('refuses bad input with every problem listed', () => {
    expect(() => buildReport({ ...input(), startingBalance: '-1', endMs: 0 })).toThrow(
      expect.objectContaining({
        code: 'INVALID_REPORT_INPUT',
        details: {
          problems: [
            { path: 'startingBalance', message: 'must be positive' },
            { path: 'endMs', message: 'must be an integer not before startMs' },
          ],
        },
      }),
    );
  });
});

describe('the HTML report', () => {
  const html = renderReportHtml(buildReport(input()));

  it('is self-contained: the chart library inline, nothing loaded from the network', () => {
    const library = loadChartLibrary();
    expect(html.includes(library)).toBe(true);
    // Our own markup, without the library (whose attribution logo links to its authors).
    const own = html.replace(library, '');
    expect(own).not.toMatch(/<script[^>]+src=/i);
    expect(own).not.toMatch(/<link[^>]+href=/i);
    expect(own).not.toMatch(/https?:\/\//);
    expect(own.length).toBeLessThan(100_000);
  });

  it('holds scripts that compile', () => {
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((match) => match[1]!);
    expect(scripts).toHaveLength(3);
    for (const source of scripts) expect(() => new Script(source)).not.toThrow();
    const data = html.match(/<script type="application\/json" id="report-charts">(.*?)<\/script>/)!;
    const specs = JSON.parse(data[1]!) as { name: string; id: string }[];
    expect(specs.map((spec) => spec.name)).toEqual([
      'equity',
      'drawdown',
      'price:BTC-USD',
      'position:BTC-USD',
    ]);
    for (const spec of specs) expect(html).toContain(`<div id="${spec.id}" class="chart`);
  });

  it('draws every chart with the report data (chart scripts run against a fake library)', () => {
    const [, setupScript, pageScript] = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(
      (match) => match[1]!,
    );
    const json = html.match(
      /<script type="application\/json" id="report-charts">(.*?)<\/script>/,
    )![1]!;
    const calls: { element: string; type: string; data: { time: number; value: number }[] }[] = [];
    const fitted: string[] = [];
    const element = (id: string) => ({ id, textContent: id === 'report-charts' ? json : '' });
    const library = {
      LineSeries: 'line',
      BaselineSeries: 'baseline',
      createChart: (target: { id: string }) => ({
        addSeries: (type: string) => ({
          setData: (data: { time: number; value: number }[]) =>
            calls.push({ element: target.id, type, data }),
        }),
        timeScale: () => ({
          fitContent: () => fitted.push(target.id),
          subscribeSizeChange: () => undefined,
        }),
      }),
    };
    const window: Record<string, unknown> = { LightweightCharts: library };
    const context = createContext({ document: { getElementById: element }, window, Math, JSON });
    new Script(setupScript!).runInContext(context);
    new Script(pageScript!).runInContext(context);
    const report = buildReport(input());
    expect(
      calls.filter((call) => call.element === 'chart-equity').map((call) => call.type),
    ).toEqual(['line', 'line']);
    // The second series is whitespace: it stretches the time axis over the whole run.
    expect(calls.filter((call) => call.element === 'chart-price-BTC-USD').at(-1)!.data).toEqual([
      { time: Math.floor(report.range.start_ms / 1000) },
      { time: Math.floor(report.range.end_ms / 1000) },
    ]);
    expect(calls.find((call) => call.element === 'chart-equity')!.data).toEqual(
      report.charts.equity.map(([t, value]) => ({
        time: Math.floor(t / 1000),
        value: Number(value),
      })),
    );
    expect(calls.find((call) => call.element === 'chart-drawdown')).toMatchObject({
      type: 'baseline',
      data: report.charts.drawdown.map(([t, value]) => ({
        time: Math.floor(t / 1000),
        value: -Number(value) * 100,
      })),
    });
    expect(new Set(fitted)).toEqual(
      new Set(['chart-equity', 'chart-drawdown', 'chart-price-BTC-USD', 'chart-position-BTC-USD']),
    );
    expect(Object.keys(window.paperbotCharts as object)).toHaveLength(4);
  });

  it('escapes text from the input', () => {
    expect(html).toContain('Backtest: grid &lt;maker&gt;');
    expect(html).not.toContain('grid <maker>');
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe(
      '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;',
    );
  });

  it('embeds chart data that cannot close its script element', () => {
    const report = buildReport({
      ...input(),
      metadata: { strategy: '</script><script>alert(1)</script>' },
    });
    const page = renderReportHtml(report);
    const scripts = page.match(/<\/script>/g) ?? [];
    expect(scripts).toHaveLength(4);
  });

  it('charts the whole run in a bounded number of points, whatever its length', () => {
    const samples = Array.from({ length: 10_000 }, (_, index) => ({
      t: T0 + index * 1_000,
      equity: String(1_000 + (index % 13)),
    }));
    const report = buildReport({ ...input(), endMs: samples.at(-1)!.t, equity: samples });
    for (const line of [report.charts.equity, report.charts.drawdown]) {
      expect(line.length).toBeLessThanOrEqual(600);
      expect(line[0]![0]).toBe(T0);
      expect(line.at(-1)![0]).toBe(samples.at(-1)!.t);
      const seconds = line.map(([t]) => Math.floor(t / 1000));
      expect(seconds).toEqual([...new Set(seconds)].sort((a, b) => a - b));
    }
    // The deepest drawdown of the run survives the bucketing.
    const deepest = Math.max(...report.charts.drawdown.map(([, value]) => Number(value)));
    expect(String(deepest)).toBe(String(Number(report.summary.max_drawdown)));
  });
});

describe('decimal numbers', () => {
  it('reads a decimal string exactly as Number does (property)', () => {
    const decimal = fc
      .tuple(
        fc.constantFrom('', '-', '+', ' '),
        fc.stringMatching(/^[0-9]{0,18}$/),
        fc.constantFrom('', '.'),
        fc.stringMatching(/^[0-9]{0,18}$/),
      )
      .map((parts) => parts.join(''));
    const text = fc.oneof(
      decimal,
      fc.string({ maxLength: 20 }),
      fc.double().map(String),
      fc.constantFrom('.', '-.', '5.', '.5', '-0', '1e5', '1.2.3', 'Infinity', '0x10'),
    );
    fc.assert(
      fc.property(text, (value) => {
        expect(Object.is(decimalNumber(value), Number(value))).toBe(true);
      }),
      { numRuns: 20_000 },
    );
  });
});

describe('bucketed series', () => {
  it('keeps at most its capacity, the extremes, the first and last times (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: -1e6, max: 1e6 })),
          {
            minLength: 1,
            maxLength: 400,
          },
        ),
        fc.integer({ min: 2, max: 40 }),
        (steps, capacity) => {
          const series = new BucketedSeries(capacity);
          let t = T0;
          const values: number[] = [];
          for (const [gap, value] of steps) {
            t += gap;
            series.add(t, String(value));
            values.push(value);
          }
          const points = series.points();
          expect(points.length).toBeLessThanOrEqual(capacity);
          expect(points[0]!.first).toBe(T0 + steps[0]![0]);
          expect(points.at(-1)!.last).toBe(t);
          expect(points.at(-1)!.close).toBe(String(values.at(-1)));
          expect(Math.min(...points.map((point) => Number(point.low)))).toBe(Math.min(...values));
          expect(Math.max(...points.map((point) => Number(point.high)))).toBe(Math.max(...values));
          expect(points.reduce((sum, point) => sum + point.count, 0)).toBe(values.length);
          const seconds = points.map((point) => Math.floor(point.last / 1000));
          expect(new Set(seconds).size).toBe(seconds.length);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('equals the samples grouped by its final bucket width, reused buckets included (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.integer({ min: 0, max: 3_000 }), fc.integer({ min: -1e6, max: 1e6 })),
          { minLength: 1, maxLength: 600 },
        ),
        fc.integer({ min: 2, max: 12 }),
        (steps, capacity) => {
          const series = new BucketedSeries(capacity);
          const samples: { t: number; value: number }[] = [];
          let t = T0;
          for (const [gap, value] of steps) {
            t += gap;
            series.add(t, String(value));
            samples.push({ t, value });
          }
          // Times never go back here, so each sample sits in the bucket of its own time.
          const width = series.bucketWidthMs;
          const expected = new Map<number, SeriesPoint>();
          for (const sample of samples) {
            const key = Math.floor(sample.t / width);
            const text = String(sample.value);
            const point = expected.get(key);
            expected.set(
              key,
              point === undefined
                ? { first: sample.t, last: sample.t, low: text, high: text, close: text, count: 1 }
                : {
                    first: point.first,
                    last: sample.t,
                    low: sample.value < Number(point.low) ? text : point.low,
                    high: sample.value > Number(point.high) ? text : point.high,
                    close: text,
                    count: point.count + 1,
                  },
            );
          }
          expect(series.points()).toEqual([...expected.values()]);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('text tables', () => {
  it('pads columns and right-aligns numbers', () => {
    expect(
      formatTable(
        ['name', 'value'],
        [
          ['alpha', '1.5'],
          ['b', '-20'],
        ],
      ),
    ).toBe(['name   value', '-----  -----', 'alpha    1.5', 'b        -20'].join('\n'));
  });
});

describe('progress', () => {
  function fakeTerminal(isTTY: boolean) {
    const stream = new PassThrough() as PassThrough & {
      isTTY: boolean;
      columns: number;
    };
    stream.isTTY = isTTY;
    stream.columns = 80;
    let written = '';
    stream.on('data', (chunk: Buffer) => {
      written += chunk.toString();
    });
    return {
      stream: stream as unknown as NodeJS.WriteStream,
      written: () => written,
    };
  }

  it('draws nothing when stdout is not a terminal', () => {
    const terminal = fakeTerminal(true);
    const progress = createProgress({
      total: 10,
      label: 'replay',
      output: terminal.stream,
      stdoutIsTerminal: false,
    });
    progress.update(5);
    progress.stop();
    expect(progress.visible).toBe(false);
    expect(terminal.written()).toBe('');
  });

  it('draws a bar on a terminal', () => {
    const terminal = fakeTerminal(true);
    const progress = createProgress({
      total: 10,
      label: 'replay',
      unit: 'events',
      output: terminal.stream,
      stdoutIsTerminal: true,
    });
    progress.update(10);
    progress.stop();
    expect(progress.visible).toBe(true);
    expect(terminal.written()).toContain('10/10 events');
  });
});

describe('the number format people read', () => {
  it('shows fractions as percentages, keeping small ones readable', () => {
    expect(percentText('0.1234')).toBe('12.34%');
    expect(percentText('0.5')).toBe('50.00%');
    expect(percentText('0.000047')).toBe('0.0047%');
    expect(percentText('0.00008')).toBe('0.008%');
    expect(percentText('0.0009')).toBe('0.09%');
    expect(percentText('-0.000123456')).toBe('-0.0123%');
    expect(percentText('0')).toBe('0%');
    expect(percentText(null)).toBe('n/a');
  });

  it('names the Sharpe period and the annualized copy only when there is one', () => {
    expect(sharpeText('0.068512', null, 60_000)).toBe('0.0685 per 1 min');
    expect(sharpeText('0.1', '1.91', 86_400_000)).toBe('0.1000 per 1 d (1.9100 annualized)');
    expect(sharpeText(null, null, 60_000)).toBe('n/a');
    expect(durationText(334_000)).toBe('5m 34s');
    expect(durationText(3_600_520)).toBe('1h 00m');
    expect(durationText(850)).toBe('850 ms');
  });

  it('is the same on the terminal summary and in the HTML page', () => {
    const report = buildReport(input());
    const page = renderReportHtml(report);
    for (const figure of summaryFigures(report)) {
      expect(page).toContain(`<td>${escapeHtml(figure.text)}</td>`);
    }
    expect(summaryFigures(report).find((figure) => figure.label === 'Return')!.text).toBe(
      percentText(report.summary.return),
    );
  });
});
