/** The wire protocol of the Practice Trading Service: every schema, type and table. */
export * from './account.ts';
export * from './bodies.ts';
export * from './endpoints.ts';
export * from './errors.ts';
export * from './frames.ts';
export * from './market.ts';
export * from './orders.ts';
export * from './primitives.ts';
export * from './query.ts';
export * from './reading.ts';
import './shape-names.ts';
