/**
 * The sweep's comparison report (`paperbot backtest --sweep ... --report FILE`): one row per
 * grid cell with its parameters, headline figures and equity curve, in a table sortable by any
 * column (click a head; numbers sort as numbers). Styles are the report's (`style.ts`); the
 * curves are small inline SVG lines, one per row, drawn from each cell's bounded equity series.
 * A pure function of its input: the same sweep gives the same bytes.
 */
import { scriptJson } from './charts.ts';
import { percentText, periodText, ratioText } from './format.ts';
import { escapeHtml, pageHead } from './html.ts';
import type { ChartPoint } from './report.ts';

export interface SweepCellFigures {
  readonly currency: string;
  readonly net_pnl: string;
  readonly return: string;
  readonly sharpe: string | null;
  readonly sortino: string | null;
  readonly sharpe_period_ms: number;
  readonly max_drawdown: string;
  readonly fees: string;
  readonly trades: number;
  readonly win_rate: string | null;
  readonly fills: number;
  /** The cell's equity curve, bounded (`series.ts`). */
  readonly equity: readonly ChartPoint[];
}

export interface SweepReportRow {
  /** Swept name to value, as given on the command line. */
  readonly parameters: Readonly<Record<string, string>>;
  readonly figures: SweepCellFigures | null;
  /** Why the cell failed; null when it ran. */
  readonly error: string | null;
}

export interface SweepReportInput {
  readonly title: string;
  readonly axes: readonly string[];
  readonly rows: readonly SweepReportRow[];
}

const SPARK_WIDTH = 160;
const SPARK_HEIGHT = 36;

/**
 * The curve as an SVG polyline in the box (drawing only). Every row shares one vertical scale
 * (`low`, `high`), so curves compare at a glance.
 */
export function sparkline(points: readonly ChartPoint[], low: number, high: number): string {
  if (points.length === 0) return '';
  const values = points.map((point) => Number(point[1]));
  const times = points.map((point) => point[0]);
  const first = times[0]!;
  const span = Math.max(1, times.at(-1)! - first);
  const range = high - low || 1;
  const coordinates = points.map((_, index) => {
    const x = ((times[index]! - first) / span) * (SPARK_WIDTH - 2) + 1;
    const y = SPARK_HEIGHT - 1 - ((values[index]! - low) / range) * (SPARK_HEIGHT - 2);
    return `${x.toFixed(1)},${y.toFixed(1)}`;
  });
  const rising = values.at(-1)! >= values[0]!;
  return `<svg class="spark" width="${SPARK_WIDTH}" height="${SPARK_HEIGHT}" viewBox="0 0 ${SPARK_WIDTH} ${SPARK_HEIGHT}" role="img" aria-label="equity curve"><polyline fill="none" stroke="${rising ? '#2e7d32' : '#c62828'}" stroke-width="1.5" points="${coordinates.join(' ')}"/></svg>`;
}

interface Column {
  readonly head: string;
  /** Shown text and the value sorted on (a number when the column is numeric). */
  readonly cell: (row: SweepReportRow) => { text: string; sort: string | number | null };
}

function figureColumn(
  head: string,
  pick: (figures: SweepCellFigures) => string | number | null,
  show: (value: string | number | null) => string,
): Column {
  return {
    head,
    cell: (row) => {
      const value = row.figures === null ? null : pick(row.figures);
      return {
        text: row.figures === null ? '' : show(value),
        sort: value === null ? null : Number(value),
      };
    },
  };
}

function columns(input: SweepReportInput): Column[] {
  const first = input.rows.find((row) => row.figures !== null)?.figures;
  const currency = first?.currency ?? '';
  const period =
    first === undefined || first === null ? '' : ` (per ${periodText(first.sharpe_period_ms)})`;
  const plain = (value: string | number | null) => (value === null ? 'n/a' : String(value));
  const percent = (value: string | number | null) =>
    percentText(value === null ? null : String(value));
  const ratio = (value: string | number | null) => ratioText(value === null ? null : String(value));
  return [
    ...input.axes.map((axis): Column => ({
      head: axis,
      cell: (row) => {
        const text = row.parameters[axis] ?? '';
        const numeric = Number(text);
        return { text, sort: text !== '' && Number.isFinite(numeric) ? numeric : text };
      },
    })),
    figureColumn(`Net PnL (${currency})`, (f) => f.net_pnl, plain),
    figureColumn('Return', (f) => f.return, percent),
    figureColumn(`Sharpe${period}`, (f) => f.sharpe, ratio),
    figureColumn(`Sortino${period}`, (f) => f.sortino, ratio),
    figureColumn('Max drawdown', (f) => f.max_drawdown, percent),
    figureColumn(`Fees (${currency})`, (f) => f.fees, plain),
    figureColumn('Trades', (f) => f.trades, plain),
    figureColumn('Win rate', (f) => f.win_rate, percent),
    figureColumn('Fills', (f) => f.fills, plain),
    {
      head: 'Status',
      cell: (row) => {
        const text = row.error === null ? 'ok' : `error: ${row.error}`;
        return { text, sort: text };
      },
    },
  ];
}

const SORT_SCRIPT = `
(function () {
  document.querySelectorAll('table.sortable').forEach(function (table) {
    var heads = table.querySelectorAll('thead th');
    heads.forEach(function (head, column) {
      if (!head.hasAttribute('aria-sort')) return;
      head.addEventListener('click', function () {
        var ascending = head.getAttribute('aria-sort') !== 'ascending';
        heads.forEach(function (other) { if (other.hasAttribute('aria-sort')) other.setAttribute('aria-sort', 'none'); });
        head.setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = JSON.parse(a.cells[column].getAttribute('data-sort'));
          var y = JSON.parse(b.cells[column].getAttribute('data-sort'));
          if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
          var order = typeof x === 'number' && typeof y === 'number' ? x - y : String(x) < String(y) ? -1 : String(x) > String(y) ? 1 : 0;
          return ascending ? order : -order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  });
})();
`;

export function renderSweepHtml(input: SweepReportInput): string {
  const table = columns(input);
  const equityValues = input.rows.flatMap((row) =>
    (row.figures?.equity ?? []).map((point) => Number(point[1])),
  );
  const low = Math.min(...equityValues);
  const high = Math.max(...equityValues);
  const head = `<thead><tr>${table.map((column) => `<th aria-sort="none">${escapeHtml(column.head)}</th>`).join('')}<th>Equity (one scale for all rows)</th></tr></thead>`;
  const body = input.rows.map((row, index) => {
    const cells = table.map((column) => {
      const { text, sort } = column.cell(row);
      const numeric = typeof sort === 'number' ? '' : ' class="text"';
      return `<td${numeric} data-sort="${escapeHtml(scriptJson(Number.isNaN(sort) ? null : sort))}">${escapeHtml(text)}</td>`;
    });
    const curve = row.figures === null ? '' : sparkline(row.figures.equity, low, high);
    return `<tr data-cell="${index}">${cells.join('')}<td>${curve}</td></tr>`;
  });
  return [
    ...pageHead(input.title),
    `<p class="meta">${input.rows.length} cells. Click a column head to sort by it. Sharpe and Sortino are per period, as in each run's report.</p>`,
    `<table class="sortable sweep">${head}<tbody>${body.join('')}</tbody></table>`,
    `<script>${SORT_SCRIPT}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
