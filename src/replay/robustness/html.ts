/**
 * The robustness report's page, sibling of the backtest report (its stylesheet and head):
 * walk-forward (a table of folds and the stitched equity, out-of-sample against in-sample),
 * the bootstrap's histograms and percentiles, the sensitivity heatmap and the look-ahead
 * verdict, each with a line on what it can and cannot tell. Charts are inline SVG; a pure
 * function of the report.
 */
import { isoTimestamp } from '../../core/clock.ts';
import { escapeHtml, pageHead } from '../report/html.ts';
import type { Distribution } from './bootstrap.ts';
import type { RobustnessReport } from './report.ts';

const WIDTH = 720;
const HEIGHT = 220;

function number(value: number | null, digits = 4): string {
  return value === null || !Number.isFinite(value) ? '—' : String(Number(value.toFixed(digits)));
}

function percent(value: number): string {
  return `${Number((value * 100).toPrecision(3))} %`;
}

function lineChart(
  series: readonly {
    name: string;
    colour: string;
    points: readonly (readonly [number, number])[];
  }[],
): string {
  const all = series.flatMap((entry) => entry.points);
  if (all.length === 0) return '<p class="none">no runs to draw</p>';
  const times = all.map((point) => point[0]);
  const values = all.map((point) => point[1]);
  const [t0, t1] = [Math.min(...times), Math.max(...times)];
  const [v0, v1] = [Math.min(...values, 0), Math.max(...values, 0)];
  const x = (t: number) => (((t - t0) / (t1 - t0 || 1)) * (WIDTH - 20) + 10).toFixed(1);
  const y = (v: number) => (HEIGHT - 10 - ((v - v0) / (v1 - v0 || 1)) * (HEIGHT - 20)).toFixed(1);
  const lines = series.map(
    (entry) =>
      `<polyline fill="none" stroke="${entry.colour}" stroke-width="1.5" points="${entry.points.map(([t, v]) => `${x(t)},${y(v)}`).join(' ')}"/>`,
  );
  const legend = series
    .map((entry) => `<span style="color:${entry.colour}">━ ${escapeHtml(entry.name)}</span>`)
    .join('');
  return `<svg width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="equity"><line x1="10" x2="${WIDTH - 10}" y1="${y(0)}" y2="${y(0)}" stroke="#ccc"/>${lines.join('')}</svg><p class="legend">${legend}</p>`;
}

function histogram(
  distribution: Distribution,
  label: string,
  format: (v: number) => string,
): string {
  const { counts, low, high } = distribution.histogram;
  const peak = Math.max(...counts, 1);
  const bar = (WIDTH - 20) / counts.length;
  const bars = counts.map((count, index) => {
    const height = (count / peak) * (HEIGHT - 40);
    return `<rect x="${(10 + index * bar).toFixed(1)}" y="${(HEIGHT - 25 - height).toFixed(1)}" width="${(bar - 1).toFixed(1)}" height="${height.toFixed(1)}" fill="#5c6bc0"><title>${count}</title></rect>`;
  });
  return `<svg width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${escapeHtml(label)}">${bars.join('')}<text x="10" y="${HEIGHT - 8}" font-size="11">${escapeHtml(format(low))}</text><text x="${WIDTH - 10}" y="${HEIGHT - 8}" font-size="11" text-anchor="end">${escapeHtml(format(high))}</text></svg>`;
}

function distributionTable(
  rows: readonly { name: string; d: Distribution; format: (v: number) => string; actual: number }[],
): string {
  const head =
    '<tr><th>Figure</th><th>Backtest</th><th>Mean</th><th>p5</th><th>p25</th><th>Median</th><th>p75</th><th>p95</th><th>95 % interval</th></tr>';
  const body = rows.map(({ name, d, format, actual }) => {
    const cells = [
      actual,
      d.mean,
      d.percentiles.p5,
      d.percentiles.p25,
      d.percentiles.p50,
      d.percentiles.p75,
      d.percentiles.p95,
    ].map((value) => `<td>${escapeHtml(format(value))}</td>`);
    return `<tr><td class="text">${escapeHtml(name)}</td>${cells.join('')}<td>${escapeHtml(`${format(d.confidence_interval[0])} … ${format(d.confidence_interval[1])}`)}</td></tr>`;
  });
  return `<table class="bootstrap">${head}${body.join('')}</table>`;
}

/** A grid value and the best cell's: equal as text (choices) or as numbers (`6` and `6.0`). */
function sameValue(value: string, best: string): boolean {
  return value === best || (value.trim() !== '' && Number(value) === Number(best));
}

function heatColour(value: number | null, low: number, high: number): string {
  if (value === null) return '#eeeeee';
  const share = high === low ? 0.5 : (value - low) / (high - low);
  // Red (low) through white to green (high).
  const red = share < 0.5 ? 255 : Math.round(255 - (share - 0.5) * 2 * 180);
  const green = share > 0.5 ? 255 : Math.round(75 + share * 2 * 180);
  const blue = Math.round(255 - Math.abs(share - 0.5) * 2 * 180);
  return `rgb(${red},${green},${blue})`;
}

function heatmap(report: RobustnessReport): string {
  const sensitivity = report.sensitivity;
  if (sensitivity === null) {
    return '<p class="none">Sensitivity needs two search dimensions.</p>';
  }
  const values = sensitivity.scores.flat().filter((value): value is number => value !== null);
  const [low, high] = [Math.min(...values), Math.max(...values)];
  const head = `<tr><th>${escapeHtml(sensitivity.rows.name)} ↓ ${escapeHtml(sensitivity.columns.name)} →</th>${sensitivity.columns.values.map((value) => `<th>${escapeHtml(value)}</th>`).join('')}</tr>`;
  const body = sensitivity.rows.values.map((rowValue, row) => {
    const cells = sensitivity.columns.values.map((columnValue, column) => {
      const score = sensitivity.scores[row]![column]!;
      const best =
        sameValue(rowValue, sensitivity.best[0]) && sameValue(columnValue, sensitivity.best[1]);
      const mark = best ? ' style="outline:2px solid #1a1a1a"' : '';
      return `<td data-score="${score ?? ''}"${mark}><span style="display:block;background:${heatColour(score, low, high)}">${escapeHtml(number(score))}</span></td>`;
    });
    return `<tr><th>${escapeHtml(rowValue)}</th>${cells.join('')}</tr>`;
  });
  return `<table class="heatmap">${head}${body.join('')}</table>`;
}

function lookahead(report: RobustnessReport): string {
  const check = report.lookahead;
  const cuts = `${check.cuts.length} cuts; intents compared before each: ${check.compared.join(', ')}`;
  if (check.passed) {
    return `<p class="verdict pass">Passed: every intent emitted before a cut was emitted identically with the data after it removed (${escapeHtml(cuts)}).</p>`;
  }
  const rows = check.differences.map(
    (difference) =>
      `<tr><td class="text">${escapeHtml(difference.strategyId)}</td><td>${escapeHtml(isoTimestamp(difference.cutMs))}</td><td>${difference.position}</td><td class="text"><code>${escapeHtml(difference.full ?? '(none)')}</code></td><td class="text"><code>${escapeHtml(difference.cut ?? '(none)')}</code></td></tr>`,
  );
  return `<p class="verdict fail notice">Failed: a strategy saw data after a cut (${escapeHtml(cuts)}).</p><table class="lookahead"><tr><th>Strategy</th><th>Cut</th><th>Intent #</th><th>With all data</th><th>With the data cut</th></tr>${rows.join('')}</table>`;
}

export function renderRobustnessHtml(report: RobustnessReport): string {
  const money = (value: number) => `${value.toFixed(2)} ${report.currency}`;
  const wf = report.walk_forward;
  const folds = wf.folds.map(
    (fold) =>
      `<tr><td>${fold.fold + 1}</td><td class="text">${escapeHtml(isoTimestamp(fold.inSample.fromMs))} – ${escapeHtml(isoTimestamp(fold.inSample.toMs))}</td><td class="text">${escapeHtml(isoTimestamp(fold.outOfSample.fromMs))} – ${escapeHtml(isoTimestamp(fold.outOfSample.toMs))}</td><td class="text">${escapeHtml(fold.parameters === null ? '—' : JSON.stringify(fold.parameters))}</td><td>${number(fold.inSampleScore)}</td><td>${number(fold.outOfSampleScore)}</td><td>${escapeHtml(fold.inSampleNetPnl ?? '—')}</td><td>${escapeHtml(fold.outOfSampleNetPnl ?? fold.error ?? '—')}</td></tr>`,
  );
  const b = report.bootstrap;
  return [
    ...pageHead(`Robustness: ${report.strategy}`),
    `<p class="meta">Data ${escapeHtml(report.data.join(', '))}, ${escapeHtml(isoTimestamp(report.range.first_t))} – ${escapeHtml(isoTimestamp(report.range.last_t))}; seed ${escapeHtml(String(report.seed))}; parameters ${escapeHtml(JSON.stringify(report.best))}. The JSON beside this page has every figure.</p>`,
    '<h2>Walk-forward</h2>',
    `<p class="meta">${escapeHtml(wf.mode)} windows, ${wf.folds.length} folds, ranked by ${escapeHtml(wf.metric)}. Efficiency (out-of-sample PnL per hour over in-sample PnL per hour): ${number(wf.efficiency, 3)}. It tells how much of the in-sample result survived on data the choice had not seen; it cannot tell whether the next period will be like these, and with few folds or few trades per fold it is noise.</p>`,
    `<table class="folds"><tr><th>Fold</th><th>In-sample</th><th>Out-of-sample</th><th>Best parameters</th><th>In-sample ${escapeHtml(wf.metric)}</th><th>Out-of-sample ${escapeHtml(wf.metric)}</th><th>In-sample net PnL</th><th>Out-of-sample net PnL</th></tr>${folds.join('')}</table>`,
    '<h3>Stitched PnL, fold after fold (each continuing from the previous; across: the folds, each over its own window)</h3>',
    lineChart([
      { name: 'out-of-sample', colour: '#2e7d32', points: wf.outOfSampleEquity },
      { name: 'in-sample (same choices)', colour: '#9e9e9e', points: wf.inSampleEquity },
    ]),
    '<h2>Monte Carlo bootstrap of the trades</h2>',
    `<p class="meta">${b.iterations} draws of ${b.trades} closed trades with replacement (seed ${escapeHtml(String(b.seed))}). Probability of ruin (equity at or below ${percent(1 - b.ruin.threshold)} of the starting balance at some point): <strong>${percent(b.ruin.probability)}</strong>. It tells how much the result depends on the order and mix of these trades; it cannot tell about trades the strategy never made, and it treats trades as independent, so streaks and position sizing that depends on past trades are not reproduced.</p>`,
    distributionTable([
      {
        name: `Final PnL (${report.currency})`,
        d: b.final_pnl,
        format: money,
        actual: b.actual.final_pnl,
      },
      {
        name: 'Maximum drawdown',
        d: b.max_drawdown,
        format: percent,
        actual: b.actual.max_drawdown,
      },
    ]),
    '<h3>Final PnL</h3>',
    histogram(b.final_pnl, 'final PnL', money),
    '<h3>Maximum drawdown</h3>',
    histogram(b.max_drawdown, 'maximum drawdown', percent),
    '<h2>Parameter sensitivity</h2>',
    report.sensitivity === null
      ? ''
      : `<p class="meta">${escapeHtml(report.sensitivity.metric)} over the whole data, around the best cell (outlined), the other parameters held. A plateau says neighbours do about as well; a lone peak says the best cell is likely fit to noise. It cannot tell about interactions with the parameters held fixed.</p>`,
    heatmap(report),
    '<h2>Look-ahead check</h2>',
    '<p class="meta">Replays on the data cut at several points. It catches a strategy whose decisions change when data after the decision is removed; it cannot catch one that reads a copy of the data the cut does not reach (a file of its own, a network feed), nor a bias in the data itself.</p>',
    lookahead(report),
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
