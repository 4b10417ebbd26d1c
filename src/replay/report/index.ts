/** Backtest reports (statistics, JSON, HTML, CSV), the divergence report and the progress bar. */
export * from './breakdown.ts';
export * from './charts.ts';
export * from './csv.ts';
export * from './divergence.ts';
export * from './excursions.ts';
export * from './figures.ts';
export * from './format.ts';
export * from './html.ts';
export * from './input.ts';
export * from './progress.ts';
export * from './report.ts';
export * from './round-trips.ts';
export * from './series.ts';
export * from './statistics.ts';
export * from './style.ts';
export * from './sweep-html.ts';
export * from './text-table.ts';
