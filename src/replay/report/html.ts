/**
 * The report as one self-contained HTML page: summary, equity and drawdown, per-strategy and
 * per-market tables, each market's price with the fills and the orders placed, its position,
 * and the trades. Styles come from `style.ts` and the charts from `charts.ts`, which other pages
 * share.
 *
 * The page is a pure function of the report: the same report gives the same bytes. The charts
 * plot the report's bounded series (`report.charts`) as JavaScript numbers (drawing only); every
 * figure in the tables is the report's decimal string, formatted by `format.ts` as on the
 * terminal.
 */
import { isoTimestamp } from '../../core/clock.ts';
import { type ChartSpec, chartScripts, scriptJson } from './charts.ts';
import {
  exitReasonText,
  GROUP_HEADS,
  groupCells,
  intentLines,
  skippedStrategyNotes,
  summaryFigures,
} from './figures.ts';
import { durationText, percentText } from './format.ts';
import type { BacktestReport, ReportGap } from './report.ts';
import { REPORT_STYLE } from './style.ts';

/** Trades listed in the page; the JSON report always has them all. */
export const MAX_TRADE_ROWS = 5_000;

export function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

/** A self-contained page's opening lines, up to its title heading: the report's and the sweep's. */
export function pageHead(title: string): string[] {
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title>`,
    `<style>${REPORT_STYLE}</style>`,
    '</head>',
    '<body>',
    `<h1>${escapeHtml(title)}</h1>`,
  ];
}

function cell(value: string | number | null, className = ''): string {
  const attribute = className === '' ? '' : ` class="${className}"`;
  return value === null
    ? '<td class="none">n/a</td>'
    : `<td${attribute}>${escapeHtml(String(value))}</td>`;
}

function headRow(heads: readonly string[]): string {
  return `<tr>${heads.map((head) => `<th>${escapeHtml(head)}</th>`).join('')}</tr>`;
}

function summaryTable(report: BacktestReport): string {
  const rows = summaryFigures(report).map(
    (figure) =>
      `<tr><th title="${escapeHtml(figure.help)}">${escapeHtml(figure.label)}</th>${cell(figure.text)}</tr>`,
  );
  return `<table class="summary">${rows.join('')}</table>`;
}

function strategiesTable(report: BacktestReport): string {
  if (report.strategies.length === 0) return '<p>No strategies listed.</p>';
  const rows = report.strategies.map(
    (strategy) =>
      `<tr>${cell(strategy.strategy_id, 'text')}${cell(strategy.name, 'text')}${cell(strategy.markets.join(', ') || 'all', 'text')}${cell(strategy.status, 'text')}${groupCells(
        strategy,
      )
        .map((value) => cell(value))
        .join('')}</tr>`,
  );
  return `<table class="strategies">${headRow(['Strategy', 'Plugin', 'Markets', 'Status', ...GROUP_HEADS])}${rows.join('')}</table>`;
}

function marketsTable(report: BacktestReport): string {
  if (report.markets.length === 0) return '<p>No markets.</p>';
  const rows = report.markets.map(
    (market) =>
      `<tr>${cell(market.market_id, 'text')}${groupCells(market)
        .map((value) => cell(value))
        .join('')}${cell(market.final_position)}${cell(market.funding)}</tr>`,
  );
  return `<table class="markets">${headRow(['Market', ...GROUP_HEADS, 'Final position', 'Funding'])}${rows.join('')}</table>`;
}

/** The data's gaps, one row each (the JSON report has the order ids). */
function gapsTable(gaps: readonly ReportGap[]): string {
  const rows = gaps.map(
    (gap) =>
      `<tr>${[
        cell(gap.market_id ?? 'every market'),
        cell(gap.stream),
        cell(isoTimestamp(gap.start_ms)),
        cell(gap.end_ms === null ? (gap.suspended ? 'none came' : '') : isoTimestamp(gap.end_ms)),
        cell(gap.suspended ? 'yes' : 'no'),
        cell(gap.restarted_queues.count),
        cell(gap.unfilled_takers.count),
        cell(gap.reason),
      ].join('')}</tr>`,
  );
  return [
    '<table>',
    headRow([
      'Market',
      'Stream',
      'Start',
      'End (next snapshot)',
      'Suspended',
      'Queues restarted',
      'Takers unfilled',
      'Reason',
    ]),
    ...rows,
    '</table>',
  ].join('\n');
}

function tradesTable(report: BacktestReport): string {
  if (report.trades.length === 0) return '<p>No trades.</p>';
  const header = headRow([
    '#',
    'Market',
    'Direction',
    'Opened',
    'Closed',
    'Exit reason',
    'Duration',
    'Quantity',
    'Entry',
    'Exit',
    'Mark',
    'MAE',
    'MFE',
    'Gross PnL',
    'Unrealized',
    'Fees',
    'Funding',
    'Net PnL',
  ]);
  const rows = report.trades.slice(0, MAX_TRADE_ROWS).map((trade, index) => {
    const result =
      trade.closed_at === null
        ? 'open'
        : trade.net_pnl.startsWith('-')
          ? 'loss'
          : /^0(?:\.0*)?$/.test(trade.net_pnl)
            ? 'even'
            : 'win';
    return `<tr class="${result}">${cell(index + 1)}${cell(trade.market_id, 'text')}${cell(trade.direction, 'text')}${cell(trade.opened_at, 'text')}${cell(trade.closed_at ?? 'open', 'text')}${cell(exitReasonText(trade.exit_reason), 'text')}${cell(durationText(trade.duration_ms))}${cell(trade.opened_quantity)}${cell(trade.entry_price)}${cell(trade.exit_price)}${cell(trade.mark_price)}${cell(percentText(trade.mae))}${cell(percentText(trade.mfe))}${cell(trade.gross_pnl)}${cell(trade.unrealized_pnl)}${cell(trade.fees)}${cell(trade.funding)}${cell(trade.net_pnl, 'pnl')}</tr>`;
  });
  const shown = Math.min(report.trades.length, MAX_TRADE_ROWS);
  const more =
    report.lists.trades > shown
      ? `<p>The first ${shown} of ${report.lists.trades} trades; --csv writes every one.</p>`
      : '';
  return `<table class="trades">${header}${rows.join('')}</table>${more}`;
}

/** Chart name, element id and spec of every chart on the page, in page order. */
export function reportChartSpecs(report: BacktestReport): { name: string; spec: ChartSpec }[] {
  const charts = report.charts;
  const range = [report.range.start_ms, report.range.end_ms] as const;
  const specs: { name: string; spec: ChartSpec }[] = [
    {
      name: 'equity',
      spec: { range, series: [{ kind: 'line', color: '#1e63d6', points: charts.equity }] },
    },
    {
      name: 'drawdown',
      spec: {
        percent: true,
        negate: true,
        range,
        series: [{ kind: 'area', color: '#c62828', points: charts.drawdown }],
      },
    },
  ];
  for (const market of charts.markets) {
    specs.push({
      name: `price:${market.market_id}`,
      spec: {
        range,
        series: [
          { kind: 'line', color: '#555555', title: 'mark', points: market.price },
          { kind: 'points', color: '#8fb8f0', title: 'buy orders', points: market.buy_orders },
          { kind: 'points', color: '#f0a8a8', title: 'sell orders', points: market.sell_orders },
          { kind: 'points', color: '#1e63d6', title: 'buys', points: market.buy_fills },
          { kind: 'points', color: '#c62828', title: 'sells', points: market.sell_fills },
        ],
      },
    });
    specs.push({
      name: `position:${market.market_id}`,
      spec: { range, series: [{ kind: 'steps', color: '#6a3fb5', points: market.position }] },
    });
  }
  return specs;
}

function chartId(name: string): string {
  return `chart-${name.replace(/[^A-Za-z0-9_-]/g, '-')}`;
}

const PAGE_SCRIPT = `
(function () {
  var charts = JSON.parse(document.getElementById('report-charts').textContent);
  charts.forEach(function (entry) {
    window.PaperbotCharts.draw(entry.name, document.getElementById(entry.id), entry.spec);
  });
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
    `${report.range.start} to ${report.range.end} (${durationText(report.range.duration_ms)})`,
    `currency ${report.currency}`,
    parameters ? `parameters: ${parameters}` : '',
    report.metadata.data.length > 0 ? `data: ${report.metadata.data.join(', ')}` : '',
    report.metadata.run_at ? `run at ${report.metadata.run_at}` : '',
  ].filter((part) => part !== '');
  const notes = skippedStrategyNotes(report);
  const specs = reportChartSpecs(report).map((entry) => ({ ...entry, id: chartId(entry.name) }));
  const marketSections = report.charts.markets.map(
    (market) =>
      `<h3>${escapeHtml(market.market_id)}</h3>` +
      '<p class="legend"><span>grey line: mark price</span><span>dark blue dots: buys</span><span>red dots: sells</span><span>light dots: orders placed (limit price)</span></p>' +
      `<div id="${chartId(`price:${market.market_id}`)}" class="chart"></div>` +
      `<p class="legend">Position (long positive)</p><div id="${chartId(`position:${market.market_id}`)}" class="chart small"></div>`,
  );
  return [
    ...pageHead(title),
    `<p class="meta">${meta.map(escapeHtml).join('<br>')}</p>`,
    ...notes.map((note) => `<p class="notice">${escapeHtml(note)}</p>`),
    '<h2>Summary</h2>',
    summaryTable(report),
    '<h2>Equity</h2>',
    `<div id="${chartId('equity')}" class="chart"></div>`,
    '<h2>Drawdown</h2>',
    `<div id="${chartId('drawdown')}" class="chart"></div>`,
    '<h2>Strategies</h2>',
    strategiesTable(report),
    '<h2>Markets</h2>',
    marketsTable(report),
    ...marketSections,
    '<h2>Trades</h2>',
    tradesTable(report),
    ...(report.intents === null
      ? []
      : [
          '<h2>Intents</h2>',
          `<p class="meta">${intentLines(report.intents).map(escapeHtml).join('<br>')}</p>`,
        ]),
    ...(report.gaps === undefined ? [] : ['<h2>Data gaps</h2>', gapsTable(report.gaps)]),
    `<p class="meta">${report.lists.fills} fills; the JSON report (--json) lists the first and last ${report.lists.limit}, and --csv writes every one with the trades and the equity curve.</p>`,
    `<script type="application/json" id="report-charts">${scriptJson(specs)}</script>`,
    chartScripts(),
    `<script>${PAGE_SCRIPT}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
