/** Parameter sweeps: grid parsing, the worker pool and the results table. */
export * from './grid.ts';
export * from './pool.ts';
export * from './table.ts';
export * from './queue.ts';
