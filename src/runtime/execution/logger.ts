/**
 * The logger the execution side writes to: the strategy host's logger, so the kernel can hand
 * both one adapter over pino.
 */
import type { Logger } from '../strategy/types.ts';

export type { LogFields } from '../strategy/types.ts';
export type ExecutionLogger = Logger;

const ignore = (): void => {};

export const silentLogger: ExecutionLogger = Object.freeze({
  debug: ignore,
  info: ignore,
  warn: ignore,
  error: ignore,
});
