import { type ChildProcess, spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { registerBacktestCommand } from '../../../src/cli/commands/backtest.ts';
import {
  backtestJobs,
  runBacktestJob,
  verifyBacktestJob,
} from '../../../src/replay/backtest/queue-jobs.ts';
import { runSweepCell } from '../../../src/replay/backtest/sweep-run.ts';
import { QUEUE_NAME } from '../../../src/replay/sweep/index.ts';
import {
  marketMakerDocument,
  recordSession,
  runCommand,
  temporaryFolder,
} from '../backtest/helpers.ts';
import { type RedisServer, startRedis } from './redis.ts';

let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let redis: RedisServer;
let session: string;
let config: string;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  folder = await temporaryFolder('queue');
  redis = await startRedis();
  session = join(folder.path, 'session');
  await recordSession(session, { durationMs: 60_000, marketIds: ['BTC-PERP'] });
  config = join(folder.path, 'backtest.yaml');
  await writeFile(config, stringify(marketMakerDocument([session])));
}, 60_000);

afterAll(async () => {
  for (const worker of workers) if (worker.exitCode === null) worker.kill('SIGKILL');
  await redis?.stop();
  await folder?.remove();
});

function backtest(args: readonly string[]) {
  return runCommand(
    (program, print, printError) =>
      registerBacktestCommand(program, { print, printError, interactive: false }),
    ['backtest', '--config', config, ...args],
  );
}

/** A `paperbot worker` process; `lines` collects its stderr lines. */
function startWorker(): { child: ChildProcess; lines: string[] } {
  const child = spawn(
    process.execPath,
    [
      'bin/paperbot.js',
      'worker',
      '--queue',
      redis.url,
      '--lock-ms',
      '2000',
      '--stalled-ms',
      '1000',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  workers.push(child);
  const lines: string[] = [];
  let partial = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    partial += chunk.toString();
    const parts = partial.split('\n');
    partial = parts.pop()!;
    lines.push(...parts);
  });
  return { child, lines };
}

async function until(check: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  for (let waited = 0; !check(); waited += 50) {
    if (waited > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const startedIds = (lines: readonly string[]) =>
  lines.flatMap((line) => /job (\w+) started/.exec(line)?.slice(1, 2) ?? []);

describe('sweeps on BullMQ', () => {
  it('prints the local sweep table with two workers, one killed mid-job, and reuses cells', async () => {
    const sweep = ['--sweep', 'halfSpreadTicks=4,6,8,10'];
    const local = await backtest([...sweep, '--workers', '2']);
    expect(local.code).toBe(0);

    const a = startWorker();
    const b = startWorker();
    await until(
      () =>
        [a, b].every((worker) => worker.lines.some((line) => line.includes('waiting for jobs'))),
      'workers ready',
    );
    const queued = backtest([...sweep, '--queue', redis.url]);
    await until(() => startedIds(a.lines).length > 0, 'worker A to start a job');
    const killedJob = startedIds(a.lines)[0]!;
    a.child.kill('SIGKILL');
    const result = await queued;
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    expect(result.out).toBe(local.out);
    // The killed worker's job was finished by the other, after its lock ran out.
    expect(startedIds(b.lines)).toContain(killedJob);

    // Every cell's job completed once; resubmitting runs nothing again.
    const queue = new Queue(QUEUE_NAME, { connection: { url: redis.url } });
    try {
      expect(await queue.getJobCounts('completed', 'failed', 'waiting', 'active')).toEqual({
        completed: 4,
        failed: 0,
        waiting: 0,
        active: 0,
      });
    } finally {
      await queue.close();
    }
    const startedBefore = startedIds(b.lines).length;
    const again = await backtest([...sweep, '--queue', redis.url]);
    expect(again.out).toBe(local.out);
    expect(startedIds(b.lines)).toHaveLength(startedBefore);
    b.child.kill('SIGTERM');
    await until(() => b.lines.includes('worker: stopped'), 'worker B to stop');
  }, 180_000);

  it('runs a search on the queue with the same table as locally', async () => {
    const search = ['--search', 'halfSpreadTicks=2..12', '--budget', '2', '--metric', 'net_pnl'];
    const local = await backtest([...search, '--seed', '9']);
    expect(local.code).toBe(0);
    const worker = startWorker();
    await until(() => worker.lines.some((line) => line.includes('waiting for jobs')), 'worker');
    const queued = await backtest([...search, '--seed', '9', '--queue', redis.url]);
    expect(queued.err).toBe('');
    expect(queued.out).toBe(local.out);
    // Two in-sample runs and two held-out runs, each its own job.
    expect(startedIds(worker.lines)).toHaveLength(4);
    worker.child.kill('SIGTERM');
    await until(() => worker.lines.includes('worker: stopped'), 'worker to stop');
  }, 120_000);

  it("refuses a job whose data does not match the submitter's checksum", async () => {
    const copy = join(folder.path, 'copy');
    await recordSession(copy, { durationMs: 10_000, marketIds: ['BTC-PERP'] });
    const document = marketMakerDocument([copy]);
    const jobOf = await backtestJobs({ document, source: 'test', data: null });
    const job = jobOf({ index: 0, parameters: {}, raw: {}, label: '' });
    await expect(verifyBacktestJob(job.data)).resolves.toBeUndefined();
    const events = join(copy, 'events.jsonl');
    await appendFile(events, '\n');
    await expect(verifyBacktestJob(job.data)).rejects.toMatchObject({
      code: 'QUEUE_DATA_MISMATCH',
      message: expect.stringContaining(
        `the data at ${copy} on this worker does not match the submitted manifest checksum`,
      ),
    });
    // The job id names the cell's inputs: other parameters, another job.
    expect(jobOf({ index: 1, parameters: { halfSpreadTicks: 5 }, raw: {}, label: '' }).id).not.toBe(
      job.id,
    );
  }, 60_000);

  it('fetches a session from an object store URL, checks it and runs the cell on it', async () => {
    const served = join(folder.path, 'served');
    await recordSession(served, { durationMs: 10_000, marketIds: ['BTC-PERP'] });
    let manifestOverride: string | null = null;
    const server: Server = createServer((request, response) => {
      const name = (request.url ?? '').replace(/^\/bucket\/session\//, '');
      if (name === 'manifest.json' && manifestOverride !== null) {
        response.end(manifestOverride);
        return;
      }
      if (!['manifest.json', 'events.jsonl'].includes(name)) {
        response.statusCode = 404;
        response.end('no such key');
        return;
      }
      createReadStream(join(served, name)).pipe(response);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const address = server.address() as { port: number };
      const url = `http://127.0.0.1:${address.port}/bucket/session/`;
      const submitterCache = join(folder.path, 'cache-submitter');
      const workerCache = join(folder.path, 'cache-worker');
      const document = marketMakerDocument([url]);
      const jobOf = await backtestJobs({ document, source: 'test', data: null }, submitterCache);
      const job = jobOf({ index: 0, parameters: { halfSpreadTicks: 5 }, raw: {}, label: '' });
      await verifyBacktestJob(job.data, workerCache);
      const figures = await runBacktestJob(job.data, workerCache);
      expect(figures).toEqual(
        await runSweepCell(
          { halfSpreadTicks: 5 },
          { document: marketMakerDocument([served]), source: 'test', data: null },
        ),
      );
      // The store's session changes: a worker that fetches it now refuses the old job.
      const manifest = JSON.parse(await readFile(join(served, 'manifest.json'), 'utf8')) as {
        created_at: string;
      };
      manifestOverride = JSON.stringify({ ...manifest, created_at: '2030-01-01T00:00:00.000Z' });
      await expect(verifyBacktestJob(job.data, workerCache)).rejects.toMatchObject({
        code: 'QUEUE_DATA_MISMATCH',
      });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }, 60_000);
});
