import { PassThrough } from 'node:stream';
import { createContext, Script } from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoTimestamp } from '../../src/core/clock.ts';
import type { Fill } from '../../src/protocol/index.ts';
import {
  buildReport,
  chartPoints,
  createProgress,
  escapeHtml,
  formatTable,
  loadChartLibrary,
  REPORT_SCHEMA,
  type ReportInput,
  renderReportHtml,
  reportToJson,
} from '../../src/replay/report/index.ts';

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
    const report = buildReport(input());
    expect(Object.keys(report)).toEqual([
      'schema',
      'schema_version',
      'metadata',
      'currency',
      'range',
      'summary',
      'trades',
      'equity',
    ]);
    expect(report.schema).toBe(REPORT_SCHEMA);
    expect(Object.keys(report.summary)).toEqual([
      'starting_balance',
      'ending_equity',
      'net_pnl',
      'gross_pnl',
      'fees',
      'return',
      'sharpe',
      'sharpe_period_ms',
      'sharpe_periods',
      'sharpe_annualization',
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
    expect(report.equity[0]).toEqual({
      t: T0,
      equity: '998.5',
      drawdown: '0.001500',
    });
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
    expect(scripts).toHaveLength(2);
    for (const source of scripts) expect(() => new Script(source)).not.toThrow();
    const data = html.match(/<script type="application\/json" id="report-data">(.*?)<\/script>/)!;
    expect(JSON.parse(data[1]!)).toEqual(chartPoints(buildReport(input())));
  });

  it('draws both charts with the report data (chart script run against a fake library)', () => {
    const [, chartScript] = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(
      (match) => match[1]!,
    );
    const json = html.match(
      /<script type="application\/json" id="report-data">(.*?)<\/script>/,
    )![1]!;
    const calls: {
      element: string;
      type: string;
      data: { time: number; value: number }[];
    }[] = [];
    const element = (id: string) => ({
      id,
      textContent: id === 'report-data' ? json : '',
    });
    const library = {
      LineSeries: 'line',
      AreaSeries: 'area',
      createChart: (target: { id: string }) => ({
        addSeries: (type: string) => ({
          setData: (data: { time: number; value: number }[]) =>
            calls.push({ element: target.id, type, data }),
        }),
        timeScale: () => ({ fitContent: () => undefined }),
      }),
    };
    const context = createContext({
      document: { getElementById: element },
      window: { LightweightCharts: library },
    });
    new Script(chartScript!).runInContext(context);
    const points = chartPoints(buildReport(input()));
    expect(calls.map((call) => [call.element, call.type])).toEqual([
      ['equity-chart', 'line'],
      ['drawdown-chart', 'area'],
    ]);
    expect(calls[0]!.data).toEqual(
      points.equity.map(([time, value]) => ({ time, value: Number(value) })),
    );
    expect(calls[1]!.data).toEqual(
      points.drawdown.map(([time, value]) => ({
        time,
        value: -Number(value) * 100,
      })),
    );
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
    expect(scripts).toHaveLength(3);
  });

  it('buckets chart points by whole seconds, keeping the deepest drawdown of a bucket', () => {
    const report = buildReport({
      ...input(),
      equity: [
        { t: T0 + 100, equity: '1000' },
        { t: T0 + 400, equity: '900' },
        { t: T0 + 900, equity: '950' },
        { t: T0 + 1_200, equity: '960' },
      ],
    });
    expect(chartPoints(report)).toEqual({
      equity: [
        [T0 / 1000, '950'],
        [T0 / 1000 + 1, '960'],
      ],
      drawdown: [
        [T0 / 1000, '0.100000'],
        [T0 / 1000 + 1, '0.040000'],
      ],
    });
    const many = buildReport({
      ...input(),
      equity: Array.from({ length: 10_000 }, (_, index) => ({
        t: T0 + index * 1_000,
        equity: String(1_000 + (index % 13)),
      })),
    });
    const points = chartPoints(many, 1_000);
    expect(points.equity.length).toBeLessThanOrEqual(1_000);
    const times = points.equity.map(([time]) => time);
    expect(times).toEqual([...new Set(times)].sort((a, b) => a - b));
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
