/**
 * Runs a parameter grid across worker threads. Each worker imports one module (TypeScript
 * through tsx, see `worker.mjs`) and calls one exported function per cell:
 * `run(parameters, input) => result | Promise<result>`, where `input` is the same for every cell
 * (say, the recording's path and the backtest's settings) and the result must be
 * structured-cloneable (plain data).
 *
 * - Pool size: min(cells, os.availableParallelism()) unless given.
 * - Results come back in grid order, whatever order the workers finish in.
 * - A cell that throws is reported as an error in its row; the sweep goes on. A worker that dies
 *   (a crash, `process.exit`) fails the cell it was running and is replaced for the rest.
 * - A module that cannot be loaded fails every cell with the same error, at once.
 */
import { availableParallelism } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { PaperbotError } from '../../core/errors.ts';
import type { GridCell } from './grid.ts';

export interface CellError {
  readonly code: string;
  readonly message: string;
}

/** Which cell a result is of. */
interface SweepCellOfResult {
  readonly index: number;
  readonly label: string;
  readonly raw: Readonly<Record<string, string>>;
  readonly parameters: Readonly<Record<string, unknown>>;
}

export type SweepResult<Value = unknown> =
  | (SweepCellOfResult & { readonly status: 'ok'; readonly value: Value })
  | (SweepCellOfResult & { readonly status: 'error'; readonly error: CellError });

export interface SweepOptions {
  /** Path (absolute, or relative to the working directory) or file URL of the module. */
  readonly module: string;
  /** The exported function to call for each cell. */
  readonly exportName: string;
  readonly cells: readonly GridCell[];
  /** Passed to every call, cloned once per worker. */
  readonly input?: unknown;
  /** Worker threads; default min(cells, os.availableParallelism()). */
  readonly concurrency?: number;
  /** Called as each cell finishes (in completion order), for progress. */
  readonly onResult?: (result: SweepResult) => void;
}

type WorkerMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'load-failed'; readonly error: CellError }
  | {
      readonly type: 'result';
      readonly index: number;
      readonly ok: true;
      readonly value: unknown;
    }
  | {
      readonly type: 'result';
      readonly index: number;
      readonly ok: false;
      readonly error: CellError;
    };

const WORKER_URL = new URL('./worker.mjs', import.meta.url);

function moduleUrl(module: string): string {
  if (module.startsWith('file:')) return module;
  return pathToFileURL(isAbsolute(module) ? module : resolve(module)).href;
}

export function defaultConcurrency(cells: number): number {
  return Math.max(1, Math.min(cells, availableParallelism()));
}

export function runSweep(options: SweepOptions): Promise<SweepResult[]> {
  const cells = options.cells;
  const results: (SweepResult | undefined)[] = new Array(cells.length);
  if (cells.length === 0) return Promise.resolve([]);
  const size = Math.max(
    1,
    Math.min(options.concurrency ?? defaultConcurrency(cells.length), cells.length),
  );
  const url = moduleUrl(options.module);

  return new Promise<SweepResult[]>((resolvePromise, rejectPromise) => {
    let next = 0;
    let done = 0;
    let settled = false;
    const workers = new Set<Worker>();

    const settle = (): void => {
      if (settled) return;
      settled = true;
      for (const worker of workers) void worker.terminate();
      workers.clear();
      resolvePromise(results as SweepResult[]);
    };

    const record = (index: number, outcome: { value: unknown } | { error: CellError }): void => {
      if (results[index]) return;
      const cell = cells[index]!;
      const base = {
        index,
        label: cell.label,
        raw: cell.raw,
        parameters: cell.parameters,
      };
      const result: SweepResult =
        'error' in outcome
          ? { ...base, status: 'error', error: outcome.error }
          : { ...base, status: 'ok', value: outcome.value };
      results[index] = result;
      done++;
      try {
        options.onResult?.(result);
      } catch (error) {
        settled = true;
        for (const worker of workers) void worker.terminate();
        rejectPromise(error);
        return;
      }
      if (done === cells.length) settle();
    };

    const failRemaining = (error: CellError): void => {
      for (let index = 0; index < cells.length; index++) {
        if (!results[index]) record(index, { error });
      }
    };

    const start = (): void => {
      if (settled || next >= cells.length) return;
      let running: number | null = null;
      let ready = false;
      const worker = new Worker(WORKER_URL, {
        workerData: {
          moduleUrl: url,
          exportName: options.exportName,
          input: options.input,
        },
      });
      workers.add(worker);
      const feed = (): void => {
        if (settled) return;
        if (next >= cells.length) {
          workers.delete(worker);
          void worker.terminate();
          return;
        }
        running = next++;
        worker.postMessage({
          type: 'run',
          index: running,
          parameters: cells[running]!.parameters,
        });
      };
      worker.on('message', (message: WorkerMessage) => {
        if (message.type === 'ready') {
          ready = true;
          feed();
        } else if (message.type === 'load-failed') {
          failRemaining(message.error);
        } else if (message.type === 'result') {
          running = null;
          record(message.index, message.ok ? { value: message.value } : { error: message.error });
          feed();
        }
      });
      const died = (error: CellError): void => {
        if (!workers.delete(worker) || settled) return;
        if (!ready) {
          // Dying before it could load the module: every worker would; stop here.
          failRemaining(error);
          return;
        }
        if (running !== null) record(running, { error });
        running = null;
        start();
      };
      worker.on('error', (error) => {
        died({
          code: 'SWEEP_WORKER_FAILED',
          message: error instanceof Error ? error.message : String(error),
        });
      });
      worker.on('exit', (code) => {
        died({
          code: 'SWEEP_WORKER_EXITED',
          message: `the worker exited with code ${code}`,
        });
      });
    };

    try {
      for (let count = 0; count < size; count++) start();
    } catch (cause) {
      settled = true;
      for (const worker of workers) void worker.terminate();
      rejectPromise(
        new PaperbotError('SWEEP_START_FAILED', 'cannot start sweep workers', {
          cause,
        }),
      );
    }
  });
}
