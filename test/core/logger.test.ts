/**
 * The one Logger: message first over pino (fields kept, the caller's object not handed on),
 * bindings through pino's own child, and merged fields over any other logger.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import {
  fromPino,
  type LogFields,
  type Logger,
  silentLogger,
  withFields,
} from '../../src/core/logger.ts';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: 'debug', base: null, timestamp: false },
    { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  return { lines, logger };
}

describe('fromPino', () => {
  it('writes the message and the fields as one pino line, at each level', () => {
    const { lines, logger } = capture();
    const log = fromPino(logger);
    log.debug('first', { n: 1 });
    log.info('second');
    log.warn('third', { market: 'BTC-PERP' });
    log.error('fourth', { code: 'X' });
    expect(lines).toEqual([
      { level: 20, msg: 'first', n: 1 },
      { level: 30, msg: 'second' },
      { level: 40, msg: 'third', market: 'BTC-PERP' },
      { level: 50, msg: 'fourth', code: 'X' },
    ]);
  });

  it('hands pino a copy, so the caller keeps its fields object', () => {
    const { logger } = capture();
    const seen: unknown[] = [];
    const info = logger.info.bind(logger);
    logger.info = ((fields: unknown, message?: string) => {
      seen.push(fields);
      info(fields as Record<string, unknown>, message);
    }) as typeof logger.info;
    const fields = { n: 1 };
    fromPino(logger).info('line', fields);
    expect(seen).toEqual([{ n: 1 }]);
    expect(seen[0]).not.toBe(fields);
  });
});

describe('withFields', () => {
  it("uses pino's child under fromPino: the bindings on every line", () => {
    const { lines, logger } = capture();
    const log = withFields(fromPino(logger), { component: 'risk' });
    log.warn('halted', { reason: 'kill switch' });
    log.info('resumed');
    expect(lines).toEqual([
      { level: 40, component: 'risk', msg: 'halted', reason: 'kill switch' },
      { level: 30, component: 'risk', msg: 'resumed' },
    ]);
  });

  it("merges the bindings into any other logger's fields, the line's own fields last", () => {
    const seen: { message: string; fields: LogFields | undefined }[] = [];
    const record = (message: string, fields?: LogFields) => {
      seen.push({ message, fields });
    };
    const base: Logger = { debug: record, info: record, warn: record, error: record };
    const log = withFields(base, { component: 'journal', n: 0 });
    log.info('kept', { n: 2 });
    log.error('bare');
    expect(seen).toEqual([
      { message: 'kept', fields: { component: 'journal', n: 2 } },
      { message: 'bare', fields: { component: 'journal', n: 0 } },
    ]);
  });

  it('leaves the silent logger silent, without a wrapper', () => {
    expect(withFields(silentLogger, { component: 'x' })).toBe(silentLogger);
  });
});
