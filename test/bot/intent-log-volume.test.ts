/**
 * Intent lines at info up to a rate, then debug for the rest of the clock minute (an unknown
 * outcome stays a warning), and a summary line per period with what it brought, on virtual time.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/clock.ts';
import { fromPino } from '../../src/core/logger.ts';
import { IntentLogVolume } from '../../src/cli/bot/intent-log-volume.ts';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: 'debug', base: null, timestamp: false },
    { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  return { lines, logger: fromPino(logger) };
}

describe('intent log volume', () => {
  it('moves intent lines past the rate to debug until the minute turns; unknown and fills stay', () => {
    const clock = new VirtualClock(0);
    const { logger } = capture();
    const volume = new IntentLogVolume({
      clock,
      logger,
      maxPerMinute: 3,
      summaryEveryMs: 3_600_000,
    });
    const levels = [
      'accepted',
      'accepted',
      'fill',
      'accepted',
      'accepted',
      'rejected',
      'unknown',
      'fill',
    ].map((kind) =>
      volume.levelOf(kind, kind === 'rejected' || kind === 'unknown' ? 'warn' : 'info'),
    );
    expect(levels).toEqual(['info', 'info', 'info', 'info', 'debug', 'debug', 'warn', 'info']);
    clock.advanceBy(60_000);
    expect(volume.levelOf('accepted', 'info')).toBe('info');
  });

  it('logs one summary per period at info, with outcomes, fills and lines moved to debug', () => {
    const clock = new VirtualClock(0);
    const { lines, logger } = capture();
    const volume = new IntentLogVolume({
      clock,
      logger,
      maxPerMinute: 1,
      summaryEveryMs: 3_600_000,
    });
    const stop = volume.start();
    volume.levelOf('accepted', 'info');
    volume.levelOf('accepted', 'info');
    volume.levelOf('rejected', 'warn');
    volume.levelOf('fill', 'info');
    clock.advanceBy(3_599_999);
    expect(lines).toEqual([]);
    clock.advanceBy(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 30,
      event: 'bot.summary',
      intents: 3,
      outcomes: { accepted: 2, rejected: 1 },
      fills: 1,
      intent_lines_at_debug: 2,
    });
    // A new period starts empty.
    clock.advanceBy(3_600_000);
    expect(lines[1]).toMatchObject({ intents: 0, fills: 0, intent_lines_at_debug: 0 });
    stop();
    clock.advanceBy(3_600_000);
    expect(lines).toHaveLength(2);
  });
});
