/**
 * The report as one self-contained HTML page: summary, equity and drawdown charts, trades. The
 * charts are drawn by TradingView's lightweight-charts, whose standalone production build is
 * inlined from node_modules, so the page works offline and loads nothing from the network.
 *
 * The page is a pure function of the report: the same report gives the same bytes. The charts
 * plot equity as JavaScript numbers (drawing only); every figure in the tables is the report's
 * decimal string.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { PaperbotError } from '../../core/errors.ts';
import type { BacktestReport, ReportSummary } from './report.ts';

/** At most this many points per chart; longer curves are bucketed (see `chartPoints`). */
export const MAX_CHART_POINTS = 4_000;
/** Trades listed in the page; the JSON report always has them all. */
export const MAX_TRADE_ROWS = 5_000;

let chartLibrary: string | null = null;

/** The standalone production build of lightweight-charts, read once. */
export function loadChartLibrary(): string {
  if (chartLibrary !== null) return chartLibrary;
  const require = createRequire(import.meta.url);
  const packageDirectory = dirname(require.resolve('lightweight-charts/package.json'));
  const source = readFileSync(
    join(packageDirectory, 'dist', 'lightweight-charts.standalone.production.js'),
    'utf8',
  );
  // Inside a <script> element these sequences would end or change the script's parsing.
  if (/<\/script|<!--/i.test(source)) {
    throw new PaperbotError(
      'REPORT_CHART_LIBRARY',
      'the chart library contains a sequence that cannot be inlined in a script element',
    );
  }
  chartLibrary = source;
  return source;
}

export function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

/** JSON that is safe as the text of a <script type="application/json"> element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replaceAll('<', '\\u003c')
    .replaceAll('\u2028', '\\u2028')
    .replaceAll('\u2029', '\\u2029');
}

export interface ChartPoints {
  /** [seconds since the epoch, equity] */
  readonly equity: readonly (readonly [number, string])[];
  /** [seconds since the epoch, drawdown fraction] */
  readonly drawdown: readonly (readonly [number, string])[];
}

/**
 * Chart points, one per bucket: the chart's time axis is in whole seconds, so samples are
 * grouped into buckets of at least one second (longer when there would be more than
 * `MAX_CHART_POINTS`); each bucket shows its last equity and its deepest drawdown.
 */
export function chartPoints(report: BacktestReport, maxPoints = MAX_CHART_POINTS): ChartPoints {
  const samples = report.equity;
  if (samples.length === 0) return { equity: [], drawdown: [] };
  const first = samples[0]!.t;
  const span = samples.at(-1)!.t - first;
  const bucketSeconds = Math.max(1, Math.ceil(span / 1000 / maxPoints));
  const bucketMs = bucketSeconds * 1000;
  const equity: [number, string][] = [];
  const drawdown: [number, string][] = [];
  let currentBucket = Number.NaN;
  for (const sample of samples) {
    const bucket = Math.floor(sample.t / bucketMs);
    const seconds = bucket * bucketSeconds;
    if (bucket !== currentBucket) {
      currentBucket = bucket;
      equity.push([seconds, sample.equity]);
      drawdown.push([seconds, sample.drawdown]);
      continue;
    }
    equity[equity.length - 1] = [seconds, sample.equity];
    // Drawdowns are fixed-point strings with the same number of places: longer or, at equal
    // length, lexicographically larger means deeper.
    const deepest = drawdown[drawdown.length - 1]![1];
    if (
      sample.drawdown.length > deepest.length ||
      (sample.drawdown.length === deepest.length && sample.drawdown > deepest)
    ) {
      drawdown[drawdown.length - 1] = [seconds, sample.drawdown];
    }
  }
  return { equity, drawdown };
}

const SUMMARY_ROWS: readonly (readonly [keyof ReportSummary, string, string])[] = [
  ['starting_balance', 'Starting balance', 'Equity at the start.'],
  ['ending_equity', 'Ending equity', 'The last equity sample.'],
  ['net_pnl', 'Net PnL', 'Ending equity minus starting balance (fees included).'],
  ['gross_pnl', 'Gross PnL', 'Net PnL plus fees.'],
  ['fees', 'Fees', 'Sum of fill fees (negative: rebates).'],
  ['return', 'Return', 'Net PnL / starting balance.'],
  ['sharpe', 'Sharpe ratio', 'Annualized, from per-period returns, no risk-free rate.'],
  ['max_drawdown', 'Max drawdown', 'Largest fall from a running peak, as a fraction of it.'],
  ['max_drawdown_amount', 'Max drawdown (amount)', 'Largest fall from a running peak.'],
  ['trades', 'Trades', 'Closed round trips (flat to flat).'],
  ['win_rate', 'Win rate', 'Closed trips with net PnL > 0 / closed trips.'],
  ['average_trade_pnl', 'Average trade PnL', 'Net PnL of closed trips / their number.'],
  ['open_trades', 'Open trades', 'Round trips still open at the end.'],
  ['fills', 'Fills', 'Number of fills.'],
  ['traded_notional', 'Traded notional', 'Sum of price × quantity over fills.'],
  ['exposure', 'Exposure', 'Share of time with any position open.'],
  ['turnover', 'Turnover', 'Traded notional / time-weighted average equity.'],
];

function cell(value: string | number | null): string {
  return value === null ? '<td class="none">n/a</td>' : `<td>${escapeHtml(String(value))}</td>`;
}

function summaryTable(report: BacktestReport): string {
  const summary = report.summary;
  const rows = SUMMARY_ROWS.map(
    ([key, label, help]) =>
      `<tr><th title="${escapeHtml(help)}">${escapeHtml(label)}</th>${cell(summary[key])}</tr>`,
  );
  rows.push(
    `<tr><th>Sharpe period</th><td>${summary.sharpe_period_ms} ms, ${summary.sharpe_periods} periods, ×${escapeHtml(summary.sharpe_annualization)}</td></tr>`,
  );
  return `<table class="summary">${rows.join('')}</table>`;
}

function tradesTable(report: BacktestReport): string {
  if (report.trades.length === 0) return '<p>No trades.</p>';
  const header =
    '<tr><th>#</th><th>Market</th><th>Direction</th><th>Opened</th><th>Closed</th><th>Quantity</th><th>Entry</th><th>Exit</th><th>Gross PnL</th><th>Fees</th><th>Net PnL</th></tr>';
  const rows = report.trades.slice(0, MAX_TRADE_ROWS).map((trade, index) => {
    const result =
      trade.closed_at === null
        ? 'open'
        : trade.net_pnl.startsWith('-')
          ? 'loss'
          : /^0(?:\.0*)?$/.test(trade.net_pnl)
            ? 'even'
            : 'win';
    return `<tr class="${result}">${cell(index + 1)}${cell(trade.market_id)}${cell(trade.direction)}${cell(trade.opened_at)}${cell(trade.closed_at)}${cell(trade.opened_quantity)}${cell(trade.entry_price)}${cell(trade.exit_price)}${cell(trade.gross_pnl)}${cell(trade.fees)}${cell(trade.net_pnl)}</tr>`;
  });
  const more =
    report.trades.length > MAX_TRADE_ROWS
      ? `<p>${MAX_TRADE_ROWS} of ${report.trades.length} trades shown; the JSON report lists them all.</p>`
      : '';
  return `<table class="trades">${header}${rows.join('')}</table>${more}`;
}

const STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #1a1a1a; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; }
table { border-collapse: collapse; } th, td { padding: 3px 10px; border-bottom: 1px solid #e5e5e5; }
th { text-align: left; font-weight: 600; } td { font-variant-numeric: tabular-nums; text-align: right; }
.summary th { cursor: help; } .none { color: #999; }
.trades tr.loss td:last-child { color: #c62828; } .trades tr.win td:last-child { color: #2e7d32; }
.chart { height: 320px; max-width: 1100px; } .meta { color: #555; }
`;

const CHART_SCRIPT = `
(function () {
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var charts = window.LightweightCharts;
  function draw(id, points, seriesType, options, transform) {
    var element = document.getElementById(id);
    if (!charts || points.length === 0) { element.textContent = 'No data.'; return null; }
    var chart = charts.createChart(element, {
      autoSize: true,
      layout: { background: { color: '#ffffff' }, textColor: '#333333' },
      timeScale: { timeVisible: true, secondsVisible: true },
    });
    var series = chart.addSeries(seriesType, options);
    series.setData(points.map(function (point) { return { time: point[0], value: transform(point[1]) }; }));
    chart.timeScale().fitContent();
    return chart;
  }
  draw('equity-chart', data.equity, charts && charts.LineSeries, { color: '#1e63d6', lineWidth: 2 },
    function (value) { return Number(value); });
  draw('drawdown-chart', data.drawdown, charts && charts.AreaSeries,
    { lineColor: '#c62828', topColor: 'rgba(198,40,40,0.35)', bottomColor: 'rgba(198,40,40,0.05)',
      invertFilledArea: true, priceFormat: { type: 'percent' } },
    function (value) { return -Number(value) * 100; });
})();
`;

/** Renders the report as a self-contained HTML page. */
export function renderReportHtml(report: BacktestReport): string {
  const title = report.metadata.strategy
    ? `Backtest: ${report.metadata.strategy}`
    : 'Backtest report';
  const parameters = Object.entries(report.metadata.parameters)
    .map(([name, value]) => `${name}=${String(value)}`)
    .join(', ');
  const meta = [
    `${report.range.start} to ${report.range.end}`,
    `currency ${report.currency}`,
    parameters ? `parameters: ${parameters}` : '',
    report.metadata.data.length > 0 ? `data: ${report.metadata.data.join(', ')}` : '',
    report.metadata.run_at ? `run at ${report.metadata.run_at}` : '',
  ].filter((part) => part !== '');
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title>`,
    `<style>${STYLE}</style>`,
    '</head>',
    '<body>',
    `<h1>${escapeHtml(title)}</h1>`,
    `<p class="meta">${meta.map(escapeHtml).join('<br>')}</p>`,
    '<h2>Summary</h2>',
    summaryTable(report),
    '<h2>Equity</h2>',
    '<div id="equity-chart" class="chart"></div>',
    '<h2>Drawdown (%)</h2>',
    '<div id="drawdown-chart" class="chart"></div>',
    '<h2>Trades</h2>',
    tradesTable(report),
    `<script type="application/json" id="report-data">${scriptJson(chartPoints(report))}</script>`,
    `<script>${loadChartLibrary()}</script>`,
    `<script>${CHART_SCRIPT}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
