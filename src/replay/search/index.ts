export * from './objective.ts';
export * from './random.ts';
export * from './search.ts';
export * from './space.ts';
export * from './table.ts';
