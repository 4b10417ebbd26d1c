/** The robustness report: walk-forward, bootstrap, sensitivity, look-ahead check. */
export * from './bootstrap.ts';
export * from './html.ts';
export * from './lookahead.ts';
export * from './lookahead-cell.ts';
export * from './report.ts';
export * from './robustness.ts';
export * from './sensitivity.ts';
export * from './walk-forward.ts';
