/** Backtests: config, the replay loop, the runner, divergence runs and sweeps. */
export * from './config.ts';
export * from './divergence-run.ts';
export * from './loop.ts';
export * from './runner.ts';
export * from './sources.ts';
export * from './summary.ts';
export * from './sweep-run.ts';
