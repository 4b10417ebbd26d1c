/**
 * Every file a user names (the dashboard token, the key file, CSV files to import, recordings to
 * replay) is opened here, the same way:
 *
 * - opened with O_NONBLOCK, then `fstat` of the opened file: a FIFO, a socket or a device
 *   (`/dev/zero`) is refused at once instead of blocking the open (deaf to signals) or reading
 *   forever, and the checks are of the file that then gets read, not of a path swapped since;
 * - a size cap, checked on the opened file's size and again on the bytes actually read (a file
 *   that grows while read is refused too);
 * - a time bound on each read, on the clock seam, for a disk or network mount that stalls;
 * - refusals are PaperbotErrors whose message names what the file is and its path. Callers that
 *   have their own codes (the key file's) pass them in.
 *
 * Gzip content goes through `gunzipAtMost`, bounded by decompressed bytes, with its end told
 * apart: complete, truncated (no trailer) or damaged (does not decode).
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { createGunzip } from 'node:zlib';
import { type Clock, systemClock } from './clock.ts';
import { PaperbotError } from './errors.ts';

/** The codes of a refusal; a caller with its own (the key file) names them. */
export interface UserFileCodes {
  readonly notFound: string;
  readonly notRegular: string;
  readonly tooLarge: string;
  readonly unreadable: string;
  readonly timeout: string;
}

export const USER_FILE_CODES: UserFileCodes = {
  notFound: 'USER_FILE_NOT_FOUND',
  notRegular: 'USER_FILE_NOT_REGULAR',
  tooLarge: 'USER_FILE_TOO_LARGE',
  unreadable: 'USER_FILE_UNREADABLE',
  timeout: 'USER_FILE_TIMEOUT',
};

/** A stalled read of a local file is given this long before it is refused. */
export const DEFAULT_USER_FILE_TIMEOUT_MS = 30_000;
const CHUNK_BYTES = 1 << 20;

export interface UserFileOptions {
  /** What the file is, for messages: "dashboard token file", "trades file". */
  readonly what: string;
  /** The largest file accepted, in bytes. */
  readonly maxBytes: number;
  /** Bound on the open and on each read (default 30 s). */
  readonly timeoutMs?: number;
  readonly clock?: Clock;
  readonly codes?: Partial<UserFileCodes>;
  /** More checks of the opened file before a byte is read (a key file's mode). */
  readonly inspect?: (stats: Stats) => void;
}

/** An opened regular file within its size cap. Read its chunks once, then close it. */
export interface UserFile {
  readonly path: string;
  readonly stats: Stats;
  /** For positioned reads (a cache's windows); `chunks()` is the bounded sequential read. */
  readonly handle: FileHandle;
  /** The file's bytes in order, at most the cap; refused past it. */
  chunks(): AsyncGenerator<Buffer>;
  close(): Promise<void>;
}

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'unknown error';
}

// The refusals shared by the async and the sync reader, so both say the same thing.
function openRefusal(
  path: string,
  options: UserFileOptions,
  codes: UserFileCodes,
  error: unknown,
): PaperbotError {
  const code = errorCode(error);
  return new PaperbotError(
    code === 'ENOENT' ? codes.notFound : codes.unreadable,
    code === 'ENOENT'
      ? `${options.what} ${path} does not exist`
      : `cannot open ${options.what} ${path}: ${code}`,
    { cause: error, details: { path } },
  );
}

function checkOpened(
  path: string,
  options: UserFileOptions,
  codes: UserFileCodes,
  stats: Stats,
): void {
  if (!stats.isFile()) {
    throw new PaperbotError(codes.notRegular, `${options.what} ${path} is not a regular file`, {
      details: { path },
    });
  }
  options.inspect?.(stats);
}

function tooLargeRefusal(
  path: string,
  options: UserFileOptions,
  codes: UserFileCodes,
): PaperbotError {
  return new PaperbotError(
    codes.tooLarge,
    `${options.what} ${path} is larger than ${options.maxBytes} bytes`,
    { details: { path, limit_bytes: options.maxBytes } },
  );
}

function readRefusal(
  path: string,
  options: UserFileOptions,
  codes: UserFileCodes,
  error: unknown,
): PaperbotError {
  return new PaperbotError(
    codes.unreadable,
    `cannot read ${options.what} ${path}: ${errorCode(error)}`,
    { cause: error, details: { path } },
  );
}

/** A `close` for an opened file that may be called more than once (by a reader and a finally). */
export function closeOnce(handle: FileHandle): () => Promise<void> {
  let closed = false;
  return async () => {
    if (closed) return;
    closed = true;
    await handle.close();
  };
}

/** Opens `path` as a user-named regular file, or refuses it with a message naming the path. */
export async function openUserFile(path: string, options: UserFileOptions): Promise<UserFile> {
  const codes = { ...USER_FILE_CODES, ...options.codes };
  const timeoutMs = options.timeoutMs ?? DEFAULT_USER_FILE_TIMEOUT_MS;
  const clock = options.clock ?? systemClock;
  const bounded = <T>(operation: Promise<T>): Promise<T> =>
    withinTime(operation, clock, timeoutMs, () => {
      return new PaperbotError(
        codes.timeout,
        `${options.what} ${path}: no read finished within ${timeoutMs} ms`,
        { details: { path } },
      );
    });
  let handle: FileHandle;
  try {
    // Non-blocking, so a FIFO opens at once (instead of waiting for a writer) and is refused
    // by the check below.
    handle = await bounded(open(path, constants.O_RDONLY | constants.O_NONBLOCK));
  } catch (error) {
    if (error instanceof PaperbotError) throw error;
    throw openRefusal(path, options, codes, error);
  }
  try {
    const stats = await bounded(handle.stat());
    checkOpened(path, options, codes, stats);
    const tooLarge = () => tooLargeRefusal(path, options, codes);
    const close = closeOnce(handle);
    return {
      path,
      stats,
      handle,
      close,
      chunks: async function* () {
        let total = 0;
        for (;;) {
          const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
          let bytesRead: number;
          try {
            ({ bytesRead } = await bounded(handle.read(buffer, 0, CHUNK_BYTES, null)));
          } catch (error) {
            if (error instanceof PaperbotError) throw error;
            throw readRefusal(path, options, codes, error);
          }
          if (bytesRead === 0) return;
          total += bytesRead;
          if (total > options.maxBytes) throw tooLarge();
          yield buffer.subarray(0, bytesRead);
        }
      },
    };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * The whole of a small user-named file. The chunks are copied once into the result and then
 * zeroed, so a secret leaves no stray copy behind in reused buffers.
 */
export async function readUserFile(path: string, options: UserFileOptions): Promise<Buffer> {
  const file = await openUserFile(path, options);
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of file.chunks()) chunks.push(chunk);
    return Buffer.concat(chunks);
  } finally {
    for (const chunk of chunks) chunk.fill(0);
    await file.close();
  }
}

/**
 * `readUserFile` for a caller that cannot wait (the dashboard's token, read while the bot's
 * endpoint is built): the same refusals; the size cap, a few KiB, is what bounds its time.
 */
export function readSmallUserFileSync(path: string, options: UserFileOptions): Buffer {
  const codes = { ...USER_FILE_CODES, ...options.codes };
  let descriptor: number;
  try {
    descriptor = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw openRefusal(path, options, codes, error);
  }
  const buffer = Buffer.alloc(options.maxBytes + 1);
  try {
    const stats = fstatSync(descriptor);
    checkOpened(path, options, codes, stats);
    const tooLarge = tooLargeRefusal(path, options, codes);
    if (stats.size > options.maxBytes) throw tooLarge;
    let length = 0;
    for (;;) {
      let bytesRead: number;
      try {
        bytesRead = readSync(descriptor, buffer, length, buffer.length - length, null);
      } catch (error) {
        throw readRefusal(path, options, codes, error);
      }
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > options.maxBytes) throw tooLarge;
    }
    return Buffer.from(buffer.subarray(0, length));
  } finally {
    buffer.fill(0);
    closeSync(descriptor);
  }
}

/** How a gzip stream ended: whole, cut short (no trailer), or not decodable past some point. */
export type GzipEnd = 'complete' | 'truncated' | 'damaged';

export interface GunzipLimits {
  /** Decompressed bytes allowed; past them the stream is refused (a gzip bomb). */
  readonly maxBytes: number;
  /** Builds the refusal when the cap is passed. */
  readonly tooLarge: () => PaperbotError;
}

/** Compressed bytes handed to the decoder at once: what one write may expand to stays bounded. */
const GUNZIP_FEED_BYTES = 16 * 1024;
/** Decoded chunks held before the decoder is paused (each at most `chunkSize`). */
const GUNZIP_QUEUE_CHUNKS = 16;

/**
 * Decompresses `raw` with a cap on the decompressed bytes. A truncated or damaged stream ends
 * the output (everything decoded before the fault is yielded) and is told in `end.value`; the
 * caller decides whether that is a torn tail or an error.
 *
 * The compressed bytes go in small slices and the output is taken as it comes ('data' events,
 * the decoder paused while a few chunks wait): one write of a highly compressed chunk would
 * otherwise expand whole into the stream's buffer, and the stream's async iterator gets slower
 * than linear as that buffer grows.
 */
export async function* gunzipAtMost(
  raw: AsyncIterable<Buffer>,
  limits: GunzipLimits,
  end: { value: GzipEnd },
): AsyncGenerator<Buffer> {
  // The default 16 KiB output buffer: what a damaged stream may lose before its damage.
  const gunzip = createGunzip();
  const queue: Buffer[] = [];
  let finished = false;
  let failure: unknown = null;
  let wake: (() => void) | null = null;
  const notify = () => {
    const resolve = wake;
    wake = null;
    resolve?.();
  };
  gunzip.on('data', (chunk: Buffer) => {
    queue.push(chunk);
    if (queue.length >= GUNZIP_QUEUE_CHUNKS) gunzip.pause();
    notify();
  });
  gunzip.on('end', () => {
    finished = true;
    notify();
  });
  gunzip.on('error', (error) => {
    failure ??= error;
    notify();
  });
  const feed = (async () => {
    try {
      for await (const chunk of raw) {
        for (let at = 0; at < chunk.length; at += GUNZIP_FEED_BYTES) {
          if (gunzip.destroyed || failure !== null) return;
          if (!gunzip.write(chunk.subarray(at, at + GUNZIP_FEED_BYTES))) {
            await new Promise<void>((resolve) => {
              const done = () => {
                gunzip.off('drain', done);
                gunzip.off('close', done);
                resolve();
              };
              gunzip.once('drain', done);
              gunzip.once('close', done);
            });
          }
        }
      }
      if (!gunzip.destroyed) gunzip.end();
    } catch (error) {
      failure ??= error;
      notify();
    }
  })();
  let total = 0;
  try {
    for (;;) {
      const chunk = queue.shift();
      if (chunk !== undefined) {
        if (queue.length < GUNZIP_QUEUE_CHUNKS / 4 && gunzip.isPaused()) gunzip.resume();
        total += chunk.length;
        if (total > limits.maxBytes) throw limits.tooLarge();
        yield chunk;
        continue;
      }
      if (failure !== null) {
        const code = errorCode(failure);
        if (code === 'Z_BUF_ERROR') end.value = 'truncated';
        else if (code === 'Z_DATA_ERROR') end.value = 'damaged';
        else throw failure;
        return;
      }
      if (finished) {
        end.value = 'complete';
        return;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    gunzip.destroy();
    await feed;
  }
}

/** `operation`, or `timeout()`'s error once `timeoutMs` passed on `clock` (each open and read). */
export function withinTime<T>(
  operation: Promise<T>,
  clock: Clock,
  timeoutMs: number,
  timeout: () => PaperbotError,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = clock.setTimeout(() => reject(timeout()), timeoutMs);
    operation.then(
      (value) => {
        clock.clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clock.clearTimeout(timer);
        reject(error as Error);
      },
    );
  });
}
