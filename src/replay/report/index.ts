/** Backtest reports (statistics, JSON, HTML), the divergence report and the progress bar. */
export * from './divergence.ts';
export * from './html.ts';
export * from './input.ts';
export * from './progress.ts';
export * from './report.ts';
export * from './round-trips.ts';
export * from './statistics.ts';
export * from './text-table.ts';
