/**
 * `paperbot worker --queue redis://HOST:PORT`: runs backtest sweep cells from a BullMQ queue
 * until stopped (SIGINT or SIGTERM finishes the running job, then exits). Start any number, on
 * any machines that see the same data paths and strategy code (docs/backtesting.md, "Workers
 * on several machines"). Each job's data and code are checked against the submitter's
 * checksums first; a mismatch refuses the job with the reason.
 */
import type { Command } from 'commander';
import { isPaperbotError } from '../../core/errors.ts';
import { runBacktestJob, verifyBacktestJob } from '../../replay/backtest/queue-jobs.ts';
import { DEFAULT_DATA_CACHE } from '../../replay/backtest/remote-data.ts';
import { redactedUrl, startQueueWorker } from '../../replay/sweep/index.ts';
import { commandFailure, nextStopSignal, printToStderr } from './terminal.ts';
import { defineCommand } from './define-command.ts';
import { integerOption } from '../options.ts';

export interface WorkerCommandDependencies {
  readonly printError: (text: string) => void;
  /** Resolves when the worker should stop (default: SIGINT or SIGTERM). */
  readonly stopSignal: () => Promise<unknown>;
}

interface WorkerOptions {
  readonly queue: string;
  readonly concurrency: string;
  readonly lockMs: string;
  readonly stalledMs: string;
  readonly dataCache: string;
}

const defaultDependencies: WorkerCommandDependencies = {
  printError: printToStderr,
  stopSignal: nextStopSignal,
};

export function registerWorkerCommand(
  program: Command,
  dependencies: Partial<WorkerCommandDependencies> = {},
): Command {
  const { command, dependencies: resolved } = defineCommand(
    program,
    'worker',
    'Run backtest sweep cells from a BullMQ queue on Redis (see backtest --queue).',
    defaultDependencies,
    dependencies,
  );
  return command
    .requiredOption('--queue <url>', 'the Redis of the queue: redis://HOST:PORT')
    .option('--concurrency <n>', 'cells run at once by this worker', '1')
    .option('--lock-ms <ms>', 'a job whose worker is silent this long is given to another', '30000')
    .option('--stalled-ms <ms>', 'how often to look for such jobs', '30000')
    .option('--data-cache <dir>', 'where sessions given by URL are fetched to', DEFAULT_DATA_CACHE)
    .action(async (options: WorkerOptions) => {
      try {
        const worker = await startQueueWorker({
          url: options.queue,
          concurrency: integerOption(options.concurrency, 'concurrency'),
          lockMs: integerOption(options.lockMs, 'lock-ms'),
          stalledMs: integerOption(options.stalledMs, 'stalled-ms'),
          verify: (data) => verifyBacktestJob(data, options.dataCache),
          run: (data) => runBacktestJob(data, options.dataCache),
          onEvent: (event, id, detail) =>
            resolved.printError(`worker: job ${id.slice(0, 12)} ${event}: ${detail}\n`),
        });
        resolved.printError(`worker: waiting for jobs on ${redactedUrl(options.queue)}\n`);
        await resolved.stopSignal();
        await worker.close();
        resolved.printError('worker: stopped\n');
      } catch (error) {
        const invalid = isPaperbotError(error) && error.code === 'INVALID_ARGUMENT';
        throw commandFailure('worker', error, invalid ? 2 : 1, resolved.printError);
      }
    });
}
