/**
 * Sweep cells on BullMQ (Redis) instead of worker threads: the submitter enqueues one job per
 * cell under an id it derives from the cell's inputs, waits for every job, and returns results
 * in cell order, shaped as the pool's (`SweepResult`), so the table is the same. Workers on any
 * number of machines take jobs from the queue.
 *
 * - Reuse: adding a job whose id exists is a no-op in BullMQ, so a resubmitted sweep finds its
 *   finished cells in Redis (completed jobs are kept). A failed job is retried once resubmitted.
 * - A worker that dies mid-job stops renewing its lock; BullMQ's stalled-job check (every
 *   `stalledMs`) moves the job back to the queue and another worker runs it. The result is
 *   read once from the job's return value, so no cell is counted twice.
 * - A cell that throws in the runner completes with an error result (the pool's row); a job
 *   refused by a worker (its data or code does not match) fails, and its row says why.
 */
import { Job, Queue, QueueEvents, UnrecoverableError, Worker } from 'bullmq';
import { PaperbotError } from '../../core/errors.ts';
import type { GridCell } from './grid.ts';
import { JobResults } from './job-results.ts';
import type { CellError, SweepResult } from './pool.ts';

export const QUEUE_NAME = 'paperbot-sweep';
/** How long a submitter waits for a whole sweep by default. */
export const DEFAULT_QUEUE_TIMEOUT_MS = 6 * 60 * 60 * 1000;

/** What a job returns: the cell's value, or the error the runner threw (plain data). */
export type CellOutcome =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: CellError };

export interface QueuedJob {
  readonly id: string;
  readonly data: unknown;
}

export function redisConnection(url: string): { url: string; maxRetriesPerRequest: null } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (cause) {
    throw new PaperbotError('INVALID_ARGUMENT', `--queue ${url}: not a URL`, { cause });
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new PaperbotError(
      'INVALID_ARGUMENT',
      `--queue must be a redis:// URL, got ${parsed.protocol}//`,
    );
  }
  // Workers block on Redis; BullMQ requires unlimited retries per request for them.
  return { url, maxRetriesPerRequest: null };
}

/** Where a URL is printed: without its password. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'redis://(invalid)';
  }
}

export interface SubmitOptions {
  readonly url: string;
  readonly cells: readonly GridCell[];
  readonly jobOf: (cell: GridCell) => QueuedJob;
  readonly timeoutMs?: number;
  readonly onResult?: (result: SweepResult) => void;
}

function errorOf(reason: unknown): CellError {
  const message = reason instanceof Error ? reason.message : String(reason);
  const match = /^([A-Z][A-Z0-9_]+): (.*)$/s.exec(message);
  return match ? { code: match[1]!, message: match[2]! } : { code: 'QUEUE_JOB_FAILED', message };
}

export async function submitQueuedSweep(options: SubmitOptions): Promise<SweepResult[]> {
  const connection = redisConnection(options.url);
  const queue = new Queue(QUEUE_NAME, { connection });
  const events = new QueueEvents(QUEUE_NAME, { connection });
  const results = new JobResults(queue, events);
  try {
    await events.waitUntilReady();
    const jobs = options.cells.map((cell) => ({ cell, job: options.jobOf(cell) }));
    for (const { job } of jobs) {
      const existing = await Job.fromId(queue, job.id);
      if (existing !== undefined && (await existing.isFailed())) await existing.retry('failed');
    }
    await queue.addBulk(
      jobs.map(({ cell, job }) => ({
        name: cell.label,
        data: job.data,
        opts: { jobId: job.id, removeOnComplete: false, removeOnFail: false, attempts: 1 },
      })),
    );
    const timeoutMs = options.timeoutMs ?? DEFAULT_QUEUE_TIMEOUT_MS;
    return await Promise.all(
      jobs.map(async ({ cell, job }) => {
        const found = await Job.fromId(queue, job.id);
        if (found === undefined) {
          throw new PaperbotError(
            'QUEUE_JOB_LOST',
            `job ${job.id} (${cell.label}) is not in Redis`,
          );
        }
        let result: SweepResult;
        const base = {
          index: cell.index,
          label: cell.label,
          raw: cell.raw,
          parameters: cell.parameters,
        };
        try {
          const outcome = (await results.wait(
            found.id ?? job.id,
            cell.label,
            timeoutMs,
          )) as CellOutcome;
          result = outcome.ok
            ? { ...base, status: 'ok', value: outcome.value }
            : { ...base, status: 'error', error: outcome.error };
        } catch (reason) {
          result = { ...base, status: 'error', error: errorOf(reason) };
        }
        options.onResult?.(result);
        return result;
      }),
    );
  } finally {
    results.close();
    await events.close();
    await queue.close();
  }
}

export interface QueueWorkerOptions {
  readonly url: string;
  readonly concurrency?: number;
  /** Lock time of a running job; a worker silent this long is presumed dead. */
  readonly lockMs?: number;
  /** How often workers look for stalled jobs. */
  readonly stalledMs?: number;
  /**
   * Checks a job before it runs; throws a `PaperbotError` to refuse it (the job fails, not
   * retried, with the error's code and message).
   */
  readonly verify: (data: unknown) => Promise<void>;
  readonly run: (data: unknown) => Promise<unknown>;
  readonly onEvent?: (
    event: 'started' | 'finished' | 'refused',
    id: string,
    detail: string,
  ) => void;
}

/** As the worker thread describes a cell's error (`worker.mjs`), so rows read the same. */
function describeError(error: unknown): CellError {
  if (error !== null && typeof error === 'object') {
    const { code, message } = error as { code?: unknown; message?: unknown };
    return {
      code: typeof code === 'string' ? code : 'SWEEP_CELL_FAILED',
      message: typeof message === 'string' ? message : String(error),
    };
  }
  return { code: 'SWEEP_CELL_FAILED', message: String(error) };
}

export async function startQueueWorker(
  options: QueueWorkerOptions,
): Promise<{ close(): Promise<void> }> {
  const worker = new Worker(
    QUEUE_NAME,
    async (job: Job): Promise<CellOutcome> => {
      const id = job.id ?? '';
      try {
        await options.verify(job.data);
      } catch (reason) {
        const error = errorOf(
          reason instanceof PaperbotError ? `${reason.code}: ${reason.message}` : reason,
        );
        options.onEvent?.('refused', id, `${error.code}: ${error.message}`);
        throw new UnrecoverableError(`${error.code}: ${error.message}`);
      }
      options.onEvent?.('started', id, job.name);
      let outcome: CellOutcome;
      try {
        outcome = { ok: true, value: await options.run(job.data) };
      } catch (reason) {
        outcome = { ok: false, error: describeError(reason) };
      }
      options.onEvent?.('finished', id, job.name);
      return outcome;
    },
    {
      connection: redisConnection(options.url),
      concurrency: options.concurrency ?? 1,
      lockDuration: options.lockMs ?? 30_000,
      stalledInterval: options.stalledMs ?? 30_000,
      // A job whose worker died is requeued; one that stalls on every worker fails at the third.
      maxStalledCount: 2,
    },
  );
  await worker.waitUntilReady();
  return { close: () => worker.close() };
}
