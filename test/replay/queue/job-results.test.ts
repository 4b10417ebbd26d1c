/**
 * Waiting for many queued cells adds no listener per cell: a sweep of 25 cells on a real
 * Redis ends without `MaxListenersExceededWarning` (BullMQ's own `waitUntilFinished` added a
 * `closing` listener to the queue per job), and every result comes back in cell order, a cell
 * that finished in an earlier submission included.
 */
import { Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUE_NAME, submitQueuedSweep } from '../../../src/replay/sweep/queue.ts';
import type { GridCell } from '../../../src/replay/sweep/grid.ts';
import { type RedisServer, startRedis } from './redis.ts';

let redis: RedisServer;

beforeAll(async () => {
  redis = await startRedis();
}, 30_000);
afterAll(async () => {
  await redis?.stop();
});

function cells(count: number): GridCell[] {
  return Array.from({ length: count }, (_, index) => ({
    index,
    parameters: { n: index },
    raw: { n: String(index) },
    label: `n=${index}`,
  }));
}

describe('queued sweep results', () => {
  it('waits for 25 cells with no listener warning, and finds finished ones again', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    const worker = new Worker(
      QUEUE_NAME,
      async (job) => ({ ok: true, value: (job.data as { n: number }).n * 2 }),
      { connection: { url: redis.url, maxRetriesPerRequest: null }, concurrency: 4 },
    );
    try {
      const submit = () =>
        submitQueuedSweep({
          url: redis.url,
          cells: cells(25),
          jobOf: (cell) => ({ id: `cell-${cell.index}`, data: { n: cell.index } }),
          timeoutMs: 30_000,
        });
      const first = await submit();
      expect(first.map((result) => (result.status === 'ok' ? result.value : result.error))).toEqual(
        cells(25).map((cell) => cell.index * 2),
      );
      // Every job is finished already: read from Redis, not waited for.
      const again = await submit();
      expect(again).toEqual(first);
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((warning) => warning.includes('MaxListeners'))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      await worker.close();
    }
  }, 60_000);
});
