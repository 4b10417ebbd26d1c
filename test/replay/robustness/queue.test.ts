/**
 * `paperbot backtest --robustness` on the sweep pool and on the BullMQ queue (a real
 * redis-server and a `paperbot worker` process, which runs every backtest of it): the same
 * seed gives the same report, and the page and its JSON are written.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { registerBacktestCommand } from '../../../src/cli/commands/backtest.ts';
import type { RobustnessReport } from '../../../src/replay/robustness/index.ts';
import {
  marketMakerDocument,
  recordSession,
  runCommand,
  temporaryFolder,
} from '../backtest/helpers.ts';
import { type RedisServer, startRedis } from '../queue/redis.ts';

let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let redis: RedisServer;
let config: string;
let worker: ChildProcess | null = null;

beforeAll(async () => {
  folder = await temporaryFolder('robustness-queue');
  redis = await startRedis();
  const session = join(folder.path, 'session');
  await recordSession(session, { durationMs: 90_000, marketIds: ['BTC-PERP'] });
  config = join(folder.path, 'backtest.yaml');
  await writeFile(config, stringify(marketMakerDocument([session])));
}, 60_000);

afterAll(async () => {
  if (worker !== null && worker.exitCode === null) worker.kill('SIGKILL');
  await redis?.stop();
  await folder?.remove();
});

const ARGS = [
  '--robustness',
  '--search',
  'halfSpreadTicks=2..12:2',
  '--search',
  'refreshTicks=2,4',
  '--budget',
  '2',
  '--folds',
  '2',
  '--bootstrap',
  '200',
  '--cuts',
  '1',
  '--radius',
  '1',
  '--seed',
  '5',
  '--workers',
  '2',
  '--json',
];

function backtest(args: readonly string[]) {
  return runCommand(
    (program, print, printError) =>
      registerBacktestCommand(program, { print, printError, interactive: false }),
    ['backtest', '--config', config, ...args],
  );
}

async function until(check: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  for (let waited = 0; !check(); waited += 50) {
    if (waited > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('the robustness report on the pool and on the queue', () => {
  it('gives the same report for a seed, and writes the page with its JSON beside it', async () => {
    const page = join(folder.path, 'robustness.html');
    const local = await backtest([...ARGS, '--report', page]);
    // With --json the report goes to stdout; where the files went, to stderr.
    expect(local.err).toContain(`robustness report written to ${page}`);
    expect(local.code).toBe(0);
    const report = JSON.parse(local.out) as RobustnessReport;
    expect(report.walk_forward.folds).toHaveLength(2);
    expect(report.lookahead.passed).toBe(true);
    expect(report.sensitivity?.rows.name).toBe('halfSpreadTicks');
    expect(report.sensitivity?.columns.values).toEqual(['2', '4']);
    expect(JSON.parse(await readFile(join(folder.path, 'robustness.json'), 'utf8'))).toEqual(
      report,
    );
    const html = await readFile(page, 'utf8');
    for (const heading of ['Walk-forward', 'Monte Carlo bootstrap', 'Parameter sensitivity']) {
      expect(html).toContain(heading);
    }
    expect(html).toContain('Look-ahead check');

    const lines: string[] = [];
    worker = spawn(process.execPath, ['bin/paperbot.js', 'worker', '--queue', redis.url], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    worker.stderr!.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n')));
    await until(() => lines.some((line) => line.includes('waiting for jobs')), 'the worker');
    const queued = await backtest([...ARGS, '--queue', redis.url]);
    expect(queued.err).toBe('');
    expect(queued.out).toBe(local.out);
    // Every backtest went to the worker: per fold 2 in-sample and 2 held-out runs, the
    // sensitivity grid, and the look-ahead check's run on all the data and on each cut.
    const sensitivityCells =
      report.sensitivity!.rows.values.length * report.sensitivity!.columns.values.length;
    expect(lines.filter((line) => /job \w+ started/.test(line))).toHaveLength(
      2 * 4 + sensitivityCells + report.lookahead.cuts.length + 1,
    );
    worker.kill('SIGTERM');
    await until(() => lines.some((line) => line.includes('worker: stopped')), 'the worker to stop');
  }, 300_000);

  it('refuses bad options before any run, naming the option', async () => {
    const noSpace = await backtest(['--robustness']);
    expect(noSpace.code).toBe(2);
    expect(noSpace.err).toContain('--robustness needs the parameter space');
    const windows = await backtest([...ARGS.slice(0, 5), '--windows', 'sideways']);
    expect(windows.code).toBe(2);
    expect(windows.err).toContain('--windows must be one of rolling, anchored');
    const ruin = await backtest([...ARGS.slice(0, 5), '--ruin', '2']);
    expect(ruin.code).toBe(2);
    expect(ruin.err).toContain('--ruin must be a fraction above 0, at most 1');
  }, 60_000);
});
