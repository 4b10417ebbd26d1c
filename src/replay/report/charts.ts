/**
 * The charts of paperbot's HTML pages: TradingView's lightweight-charts, whose standalone
 * production build is inlined from node_modules (pages work offline and load nothing), and one
 * small script, `PaperbotCharts.draw(element, spec)`, that every page uses to set a chart up
 * the same way:
 *
 * - the whole run is in view: the time scale fits its content, on creation and on every
 *   resize, with a bar spacing allowed small enough for any number of points;
 * - the price axis has as many decimals as the data's range needs, so a drawdown of 0.008%
 *   never reads as 0.0%;
 * - series are `line`, `steps` (a position), `area` (filled from zero, for drawdowns) or `points`
 *   (fills and orders, markers without a line). Points are `[epoch ms, decimal string]`.
 *
 * Every drawn chart is kept in `window.paperbotCharts` by name, for tests and for people poking
 * at the page from the console.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { PaperbotError } from '../../core/errors.ts';

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

/** JSON that is safe as the text of a <script type="application/json"> element. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replaceAll('<', '\\u003c')
    .replaceAll('\u2028', '\\u2028')
    .replaceAll('\u2029', '\\u2029');
}

export interface ChartSeriesSpec {
  readonly kind: 'line' | 'steps' | 'area' | 'points';
  readonly color: string;
  readonly title?: string;
  readonly points: readonly (readonly [number, string])[];
}

export interface ChartSpec {
  /** Values are fractions shown as percentages (× 100, with a % sign). */
  readonly percent?: boolean;
  /** Values are drawn below zero (drawdowns). */
  readonly negate?: boolean;
  /**
   * [start, end] in epoch ms: the time axis spans at least this, even where no series has a
   * point (a market's first ticker comes after the run's start).
   */
  readonly range?: readonly [number, number];
  readonly series: readonly ChartSeriesSpec[];
}

/** Defines `window.PaperbotCharts.draw(name, element, spec)`; runs after the library. */
export const CHART_SETUP_SCRIPT = `
(function () {
  var lib = window.LightweightCharts;
  window.paperbotCharts = window.paperbotCharts || {};
  function precisionOf(values) {
    var low = Infinity, high = -Infinity;
    for (var i = 0; i < values.length; i++) {
      if (values[i] < low) low = values[i];
      if (values[i] > high) high = values[i];
    }
    var scale = high - low;
    if (!(scale > 0)) scale = Math.max(Math.abs(high), Math.abs(low));
    if (!(scale > 0)) return 2;
    return Math.max(0, Math.min(10, 1 - Math.floor(Math.log10(scale))));
  }
  function draw(name, element, spec) {
    if (!lib) { element.textContent = 'The chart library did not load.'; return null; }
    var factor = (spec.percent ? 100 : 1) * (spec.negate ? -1 : 1);
    var all = [];
    var prepared = spec.series.map(function (series) {
      var data = [];
      for (var i = 0; i < series.points.length; i++) {
        var time = Math.floor(series.points[i][0] / 1000);
        var value = Number(series.points[i][1]) * factor;
        if (data.length > 0 && data[data.length - 1].time >= time) data[data.length - 1] = { time: data[data.length - 1].time, value: value };
        else data.push({ time: time, value: value });
        all.push(value);
      }
      return { spec: series, data: data };
    }).filter(function (series) { return series.data.length > 0; });
    if (all.length === 0) { element.textContent = 'No data.'; return null; }
    var precision = precisionOf(all);
    var suffix = spec.percent ? '%' : '';
    var format = function (value) { return value.toFixed(precision) + suffix; };
    var chart = lib.createChart(element, {
      autoSize: true,
      layout: { background: { color: '#ffffff' }, textColor: '#333333' },
      timeScale: { timeVisible: true, secondsVisible: true, minBarSpacing: 0.001, fixLeftEdge: true, fixRightEdge: true },
      localization: { priceFormatter: format },
    });
    var priceFormat = { type: 'custom', minMove: Math.pow(10, -precision), formatter: format };
    prepared.forEach(function (series) {
      var kind = series.spec.kind;
      var options = { color: series.spec.color, priceFormat: priceFormat, title: series.spec.title || '' };
      var created;
      if (kind === 'area') {
        // Filled between zero and the line; zero stays the top of the scale.
        created = chart.addSeries(lib.BaselineSeries, {
          baseValue: { type: 'price', price: 0 }, priceFormat: priceFormat, title: options.title,
          topLineColor: series.spec.color, topFillColor1: 'rgba(0,0,0,0)', topFillColor2: 'rgba(0,0,0,0)',
          bottomLineColor: series.spec.color, bottomFillColor1: 'rgba(198,40,40,0.05)', bottomFillColor2: 'rgba(198,40,40,0.35)',
          autoscaleInfoProvider: function (original) {
            var info = original();
            if (info !== null && info.priceRange !== null) info.priceRange.maxValue = Math.max(0, info.priceRange.maxValue);
            return info;
          },
        });
      } else if (kind === 'points') {
        options.lineVisible = false; options.pointMarkersVisible = true; options.pointMarkersRadius = 3;
        options.lastValueVisible = false; options.priceLineVisible = false; options.crosshairMarkerVisible = false;
        created = chart.addSeries(lib.LineSeries, options);
      } else {
        options.lineWidth = 2;
        if (kind === 'steps') options.lineType = 1;
        created = chart.addSeries(lib.LineSeries, options);
      }
      created.setData(series.data);
    });
    if (spec.range) {
      // Whitespace points (a time, no value) stretch the time axis without drawing anything.
      var span = chart.addSeries(lib.LineSeries, { visible: false, lastValueVisible: false, priceLineVisible: false });
      span.setData([{ time: Math.floor(spec.range[0] / 1000) }, { time: Math.floor(spec.range[1] / 1000) }]);
    }
    chart.timeScale().fitContent();
    chart.timeScale().subscribeSizeChange(function () { chart.timeScale().fitContent(); });
    window.paperbotCharts[name] = chart;
    return chart;
  }
  window.PaperbotCharts = { draw: draw };
})();
`;

/** The script elements a page with charts ends with: the library, then the setup. */
export function chartScripts(): string {
  return `<script>${loadChartLibrary()}</script>\n<script>${CHART_SETUP_SCRIPT}</script>`;
}
