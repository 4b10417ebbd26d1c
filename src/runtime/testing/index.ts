/**
 * Test tools for strategy authors: the virtual-time harness, marble helpers and fixtures. Every
 * export of these three files is public.
 */
export * from './fixtures.ts';
export * from './harness.ts';
export * from './marbles.ts';
