/**
 * The chaos scenario `hostile-files` (issue 26): the large hostile inputs that `npm test` runs
 * only small. Each is handed to a real `paperbot` process, which must refuse it naming the file,
 * within a time bound and with bounded memory (peak RSS read from /proc while it runs):
 *
 * - a CSV whose second line is 300 MB long (`import`);
 * - a gzip of about 1.5 MB holding one 1.5 GiB line (`import`; it used to grow past 2.5 GB);
 * - a recording whose events file is one 300 MB line (`verify`, the backtest's reader).
 */
import { spawn } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGzip } from 'node:zlib';
import { delay, REPOSITORY_ROOT } from '../bot/helpers.ts';
import type { ScenarioContext } from './harness.ts';

const LIMIT_MS = 60_000;
const RSS_LIMIT_BYTES = 600 * 1024 * 1024;
const MARKET = ['--market', 'BTC-PERP', '--tick', '0.1', '--step', '0.001'];

/** Writes `total` bytes of `byte` to a stream in 1 MiB pieces, with `head` first. */
async function writeRepeated(
  stream: NodeJS.WritableStream,
  head: string,
  total: number,
  byte: number,
  tail: string,
): Promise<void> {
  const piece = Buffer.alloc(1 << 20, byte);
  const write = (chunk: Buffer | string) =>
    new Promise<void>((resolve) => {
      if (stream.write(chunk)) resolve();
      else stream.once('drain', resolve);
    });
  await write(head);
  for (let written = 0; written < total; written += piece.length) {
    await write(piece.subarray(0, Math.min(piece.length, total - written)));
  }
  await write(tail);
  await new Promise<void>((resolve) => stream.end(resolve));
}

interface Outcome {
  readonly code: number | null;
  /** stdout and stderr. */
  readonly output: string;
  readonly peakRssBytes: number;
  readonly ms: number;
}

/** `node bin/paperbot.js ARGS`, its peak RSS sampled from /proc, killed past the limit. */
async function paperbot(args: readonly string[]): Promise<Outcome> {
  const started = performance.now();
  const child = spawn(process.execPath, ['bin/paperbot.js', ...args], {
    cwd: REPOSITORY_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Both streams: `verify` prints what it found on stdout.
  let output = '';
  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      output += chunk;
    });
  }
  let exited = false;
  const exit = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      exited = true;
      resolve(code);
    });
  });
  let peak = 0;
  while (!exited && performance.now() - started < LIMIT_MS) {
    try {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const match = /VmHWM:\s+(\d+) kB/.exec(status);
      if (match) peak = Math.max(peak, Number(match[1]) * 1024);
    } catch {
      // gone between the check and the read
    }
    await delay(100);
  }
  if (!exited) child.kill('SIGKILL');
  const code = await exit;
  return { code, output, peakRssBytes: peak, ms: performance.now() - started };
}

export async function driveHostileFiles(context: ScenarioContext): Promise<void> {
  const directory = await mkdtemp(join(tmpdir(), 'paperbot-chaos-hostile-'));
  try {
    const check = (what: string, outcome: Outcome, expected: string) => {
      const refused = outcome.code !== null && outcome.code !== 0;
      context.note(`${what}_not_refused`, refused && outcome.output.includes(expected) ? 0 : 1);
      context.note(`${what}_over_600MB_rss`, outcome.peakRssBytes > RSS_LIMIT_BYTES ? 1 : 0);
      context.note(`${what}_over_60s`, outcome.ms >= LIMIT_MS ? 1 : 0);
      context.fault();
    };

    const longLine = join(directory, 'long-line.csv');
    await writeRepeated(
      createWriteStream(longLine),
      'timestamp,price,quantity,side\n',
      300_000_000,
      0x39,
      ',1,1,buy\n',
    );
    check(
      'csv_300MB_line',
      await paperbot(['import', '--out', join(directory, 'a'), ...MARKET, '--trades', longLine]),
      `${longLine}: a row is longer than`,
    );

    const bomb = join(directory, 'bomb.csv.gz');
    const gzip = createGzip({ level: 9 });
    const written = new Promise<void>((resolve) =>
      gzip.pipe(createWriteStream(bomb)).on('finish', resolve),
    );
    await writeRepeated(gzip, 'timestamp,price,quantity,side\n', 1.5 * 1024 ** 3, 0x31, '\n');
    await written;
    check(
      'gzip_1_5GiB_bomb',
      await paperbot(['import', '--out', join(directory, 'b'), ...MARKET, '--trades', bomb]),
      `${bomb}: a row is longer than`,
    );

    // A version 1 recording (no size to compare first): the line cap is what refuses it.
    const session = join(directory, 'session');
    await mkdir(session);
    await writeFile(
      join(session, 'manifest.json'),
      JSON.stringify({
        format: 'paperbot-recording',
        version: 1,
        created_at: '2025-01-01T00:00:00.000Z',
        complete: true,
        events_file: 'events.jsonl',
        compression: 'none',
        source: { kind: 'imported', base_url: 'file:///x' },
        settings: { book_depth: 1, book_interval_ms: 1000, private_events: false },
        markets: [],
        time_range: { first_t: 1, last_t: 1 },
        counts: {
          total: 1,
          by_kind: { ticker: 0, book: 0, trade: 0, private: 0, gap: 1 },
          by_market: {},
        },
      }),
    );
    const events = join(session, 'events.jsonl');
    await writeRepeated(
      createWriteStream(events),
      '{"v":1,"t":1,"k":"gap","d":{"stream":"trade","reason":"',
      300_000_000,
      0x72,
      '"}}\n',
    );
    // `paperbot verify` reads it as a backtest does (the same reader), with no strategy or
    // market to set up around it.
    check(
      'recording_300MB_line',
      await paperbot(['verify', session]),
      `${events} line 1 is longer than`,
    );
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}
