/**
 * Runs a parameter grid across worker threads, pooled by piscina. Each worker imports one module
 * (TypeScript through tsx, see `worker.mjs`) and calls one exported function per cell:
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
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Piscina } from 'piscina';
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

/** What `worker.mjs` answers for one cell. */
type CellAnswer =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly fatal?: true; readonly error: CellError };

const WORKER_FILE = fileURLToPath(new URL('./worker.mjs', import.meta.url));

function moduleUrl(module: string): string {
  if (module.startsWith('file:')) return module;
  return pathToFileURL(isAbsolute(module) ? module : resolve(module)).href;
}

export function defaultConcurrency(cells: number): number {
  return Math.max(1, Math.min(cells, availableParallelism()));
}

/** A task the pool rejected: its worker died or failed outside a cell. */
function workerFailure(error: unknown): CellError {
  const message =
    error instanceof Error
      ? error.message
      : typeof (error as { message?: unknown } | null)?.message === 'string'
        ? (error as { message: string }).message
        : String(error);
  if (/^worker exited with code/.test(message)) {
    return { code: 'SWEEP_WORKER_EXITED', message: `the ${message}` };
  }
  return { code: 'SWEEP_WORKER_FAILED', message };
}

export async function runSweep(options: SweepOptions): Promise<SweepResult[]> {
  const cells = options.cells;
  if (cells.length === 0) return [];
  const size = Math.max(
    1,
    Math.min(options.concurrency ?? defaultConcurrency(cells.length), cells.length),
  );
  let pool: Piscina<Readonly<Record<string, unknown>>, CellAnswer>;
  try {
    pool = new Piscina({
      filename: WORKER_FILE,
      minThreads: size,
      maxThreads: size,
      // A plain event loop between cells, as a worker has without a pool.
      atomics: 'disabled',
      workerData: {
        moduleUrl: moduleUrl(options.module),
        exportName: options.exportName,
        input: options.input,
      },
    });
  } catch (cause) {
    throw new PaperbotError('SWEEP_START_FAILED', 'cannot start sweep workers', { cause });
  }

  const results: (SweepResult | undefined)[] = new Array(cells.length);
  let done = 0;
  let stopped = false;
  let finish!: () => void;
  let fail!: (error: unknown) => void;
  const finished = new Promise<void>((resolvePromise, rejectPromise) => {
    finish = resolvePromise;
    fail = rejectPromise;
  });

  const record = (index: number, outcome: { value: unknown } | { error: CellError }): void => {
    if (stopped || results[index]) return;
    const cell = cells[index]!;
    const base = { index, label: cell.label, raw: cell.raw, parameters: cell.parameters };
    const result: SweepResult =
      'error' in outcome
        ? { ...base, status: 'error', error: outcome.error }
        : { ...base, status: 'ok', value: outcome.value };
    results[index] = result;
    done++;
    try {
      options.onResult?.(result);
    } catch (error) {
      stopped = true;
      fail(error);
      return;
    }
    if (done === cells.length) {
      stopped = true;
      finish();
    }
  };

  const failRemaining = (error: CellError): void => {
    for (let index = 0; index < cells.length; index++) {
      if (!results[index]) record(index, { error });
    }
  };

  // A worker that fails with no cell running (say, at start) is reported here, not thrown.
  pool.on('error', (error: unknown) => failRemaining(workerFailure(error)));
  cells.forEach((cell, index) => {
    pool.run(cell.parameters).then(
      (answer) => {
        if (answer.ok) record(index, { value: answer.value });
        else if (answer.fatal === true) failRemaining(answer.error);
        else record(index, { error: answer.error });
      },
      (error: unknown) => record(index, { error: workerFailure(error) }),
    );
  });
  try {
    await finished;
    return results as SweepResult[];
  } finally {
    await pool.destroy();
  }
}
