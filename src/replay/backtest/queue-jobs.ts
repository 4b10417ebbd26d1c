/**
 * Backtest sweep cells as queue jobs (`--queue redis://...`, `paperbot worker`). A job carries
 * the cell's parameters, the sweep input (config document, data paths) and two checksums: the
 * data's (each session's manifest and events file) and the strategy code's (each strategy's
 * module file). Its id is the SHA-256 of all of it, so the same cell of the same code, config
 * and data is one job, reused when resubmitted. Sessions given by URL are fetched into a local
 * cache first (`remote-data.ts`); the checksum is of the fetched files. A worker recomputes both checksums from its own
 * files and refuses a job whose data or code differs.
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { PaperbotError } from '../../core/errors.ts';
import { openUserFile } from '../../core/user-file.ts';
import { MANIFEST_FILE, readManifest } from '../format/index.ts';
import type { GridCell } from '../sweep/grid.ts';
import type { QueuedJob } from '../sweep/queue.ts';
import { resolveBacktestConfig } from './config.ts';
import { localDataDirectories } from './remote-data.ts';
import { type LookaheadInput, runLookaheadCell } from '../robustness/lookahead-cell.ts';
import { runSweepCell, type SweepInput, withOverrides } from './sweep-run.ts';

export const JOB_FORMAT = 1;

export interface BacktestJobData {
  readonly format: typeof JOB_FORMAT;
  readonly parameters: Readonly<Record<string, unknown>>;
  readonly input: SweepInput;
  readonly dataChecksum: string;
  readonly codeChecksum: string;
  /**
   * `lookahead`: a run of the robustness report's look-ahead check (parameters `{ cutMs }`,
   * the input's `parameters` the cell's); absent: a sweep cell.
   */
  readonly kind?: 'lookahead';
}

/** Hashes a session file, opened as every user-named file is (a FIFO is refused, not read). */
async function hashFile(path: string, hash: ReturnType<typeof createHash>): Promise<void> {
  const file = await openUserFile(path, { what: 'recording file', maxBytes: 2 ** 42 });
  try {
    for await (const chunk of file.chunks()) hash.update(chunk);
  } finally {
    await file.close();
  }
}

const dataCache = new Map<string, { key: string; checksum: string }>();

/** SHA-256 over each session's manifest and events file, in the order given. */
export async function dataChecksum(directories: readonly string[]): Promise<string> {
  const hash = createHash('sha256');
  for (const directory of directories) {
    const manifest = await readManifest(directory);
    const files = [join(directory, MANIFEST_FILE), join(directory, manifest.events_file)];
    const stats = await Promise.all(files.map((file) => stat(file)));
    const key = stats.map((entry) => `${entry.size}:${entry.mtimeMs}`).join('/');
    const absolute = resolve(directory);
    let entry = dataCache.get(absolute);
    if (entry?.key !== key) {
      const own = createHash('sha256');
      for (const file of files) await hashFile(file, own);
      entry = { key, checksum: own.digest('hex') };
      dataCache.set(absolute, entry);
    }
    hash.update(`${entry.checksum}\n`);
  }
  return hash.digest('hex');
}

/** SHA-256 over the strategies' module files (their own imports are not followed). */
export async function codeChecksum(files: readonly string[]): Promise<string> {
  const hash = createHash('sha256');
  for (const file of files) {
    hash.update(await readFile(file));
    hash.update('\n');
  }
  return hash.digest('hex');
}

async function checksumsOf(
  input: SweepInput,
  cacheRoot?: string,
): Promise<{ data: string; code: string; directories: readonly string[] }> {
  const document = withOverrides(input.document, {});
  if (input.data !== null) document.data = [...input.data];
  const loaded = await resolveBacktestConfig(document, input.source);
  const entries = input.data ?? loaded.config.data;
  const directories = await localDataDirectories(entries, cacheRoot);
  return {
    data: await dataChecksum(directories),
    // Strategies loaded from a config file carry their plugin file (the type leaves it optional).
    code: await codeChecksum(
      loaded.strategies.flatMap((strategy) => {
        const file = (strategy as { file?: unknown }).file;
        return typeof file === 'string' ? [file] : [];
      }),
    ),
    directories,
  };
}

/** Data given by URL is fetched; the run reads the local copies. */
async function withLocalData(input: SweepInput, cacheRoot?: string): Promise<SweepInput> {
  const loaded = await resolveBacktestConfig(
    input.data === null
      ? withOverrides(input.document, {})
      : { ...withOverrides(input.document, {}), data: [...input.data] },
    input.source,
  );
  return {
    ...input,
    data: await localDataDirectories(input.data ?? loaded.config.data, cacheRoot),
  };
}

/** Builds each cell's job; the checksums are computed once for the sweep. */
export async function backtestJobs(
  input: SweepInput,
  cacheRoot?: string,
  kind?: 'lookahead',
): Promise<(cell: GridCell) => QueuedJob> {
  const sums = await checksumsOf(input, cacheRoot);
  return (cell) => {
    const data: BacktestJobData = {
      format: JOB_FORMAT,
      parameters: cell.parameters,
      input,
      dataChecksum: sums.data,
      codeChecksum: sums.code,
      ...(kind === undefined ? {} : { kind }),
    };
    const id = createHash('sha256').update(JSON.stringify(data)).digest('hex');
    return { id, data };
  };
}

function jobData(data: unknown): BacktestJobData {
  const job = data as Partial<BacktestJobData> | null;
  if (job === null || typeof job !== 'object' || job.format !== JOB_FORMAT) {
    throw new PaperbotError('QUEUE_JOB_UNSUPPORTED', `this worker reads job format ${JOB_FORMAT}`);
  }
  return job as BacktestJobData;
}

/** The worker's check: its own files must give the job's checksums. */
export async function verifyBacktestJob(data: unknown, cacheRoot?: string): Promise<void> {
  const job = jobData(data);
  const sums = await checksumsOf(job.input, cacheRoot);
  if (sums.data !== job.dataChecksum) {
    throw new PaperbotError(
      'QUEUE_DATA_MISMATCH',
      `the data at ${sums.directories.join(', ')} on this worker does not match the submitted manifest checksum (${job.dataChecksum.slice(0, 12)}, here ${sums.data.slice(0, 12)})`,
    );
  }
  if (sums.code !== job.codeChecksum) {
    throw new PaperbotError(
      'QUEUE_CODE_MISMATCH',
      `the strategy code on this worker differs from the submitter's (${job.codeChecksum.slice(0, 12)}, here ${sums.code.slice(0, 12)})`,
    );
  }
}

export async function runBacktestJob(data: unknown, cacheRoot?: string): Promise<unknown> {
  const job = jobData(data);
  const input = await withLocalData(job.input, cacheRoot);
  if (job.kind === 'lookahead') {
    return runLookaheadCell(job.parameters as { cutMs: number | null }, input as LookaheadInput);
  }
  return runSweepCell(job.parameters, input);
}
