import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerRecordCommand } from '../../src/cli/commands/record.ts';
import { formatBytes, formatElapsed, startProgressLine } from '../../src/cli/progress-line.ts';
import { VirtualClock } from '../../src/core/clock.ts';
import { runCommand } from '../replay/backtest/helpers.ts';

describe('the progress line', () => {
  function line(terminal: boolean) {
    const clock = new VirtualClock(Date.UTC(2030, 0, 1));
    const written: string[] = [];
    let events = 0;
    const progress = startProgressLine({
      clock,
      terminal,
      intervalMs: 5_000,
      write: (text) => written.push(text),
      render: () =>
        `recording ${formatElapsed(clock.now() - Date.UTC(2030, 0, 1))}: ${events} events`,
    });
    return {
      clock,
      written,
      progress,
      add: (count: number) => {
        events += count;
      },
    };
  }

  async function settle(): Promise<void> {
    for (let round = 0; round < 5; round++) await Promise.resolve();
  }

  it('writes plain lines every interval on the clock when piped, and a last one at stop', async () => {
    const { clock, written, progress, add } = line(false);
    add(12);
    clock.advanceBy(4_999);
    await settle();
    expect(written).toEqual([]);
    clock.advanceBy(1);
    await settle();
    add(30);
    clock.advanceBy(5_000);
    await settle();
    await progress.stop();
    clock.advanceBy(60_000);
    await settle();
    expect(written).toEqual([
      'recording 0:05: 12 events\n',
      'recording 0:10: 42 events\n',
      'recording 0:10: 42 events\n',
    ]);
  });

  it('rewrites one line in place on a terminal and ends it at stop', async () => {
    const { clock, written, progress } = line(true);
    clock.advanceBy(5_000);
    await settle();
    await progress.stop();
    expect(written).toEqual([
      '\r\u001b[2Krecording 0:05: 0 events',
      '\r\u001b[2Krecording 0:05: 0 events',
      '\n',
    ]);
  });

  it('formats times and sizes for people', () => {
    expect(formatElapsed(0)).toBe('0:00');
    expect(formatElapsed(65_400)).toBe('1:05');
    expect(formatElapsed(3_723_000)).toBe('1:02:03');
    expect(formatBytes(812)).toBe('812 B');
    expect(formatBytes(14_540)).toBe('14.2 KB');
    expect(formatBytes(3_250_586)).toBe('3.1 MB');
  });
});

describe('paperbot record progress', () => {
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'paperbot-record-progress-'));
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('prints a progress line on stderr while recording from the embedded emulator', async () => {
    const config = join(folder, 'bot.yaml');
    await writeFile(
      config,
      [
        'venue:',
        '  emulator:',
        '    seed: 5',
        'market_data:',
        '  markets: [BTC-PERP]',
        '  book_poll_ms: 200',
        '  trades_poll_ms: 200',
        '',
      ].join('\n'),
    );
    const out = join(folder, 'session');
    const result = await runCommand(
      (program, print, printError) =>
        registerRecordCommand(program, {
          print,
          printError,
          interactive: false,
          stderrIsTerminal: false,
          progressIntervalMs: 400,
        }),
      ['record', '--config', config, '--duration', '2s', '--out', out],
    );
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/^recorded \d+ records/);
    const lines = result.err.split('\n').filter((text) => text !== '');
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const text of lines) {
      expect(text).toMatch(
        /^recording \d:\d\d of 0:02: \d+ events, (\d+ B|\d+\.\d (KB|MB)|no file yet)$/,
      );
    }
    // The last line is written as the recording stops: it counts what was taken until then.
    const recorded = Number(/^recorded (\d+) records/.exec(result.out)![1]);
    const last = Number(/: (\d+) events, /.exec(lines.at(-1)!)![1]);
    expect(last).toBeGreaterThan(0);
    expect(last).toBeLessThanOrEqual(recorded);
  });
});
