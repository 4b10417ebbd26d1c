/**
 * Reads an events file (JSONL, plain or gzip) in batches, in file order.
 *
 * Decoding is `JSON.parse` of each line and two cheap checks (version and kind); the first
 * `verify` records (1,000 by default, every record with `verify: true`) are also checked with
 * zod against the protocol schemas. Records are handed out as decoded, never copied.
 *
 * An interrupted recording ends in a torn tail: the bytes after the last newline, or a gzip
 * stream cut short. Both are reported in the summary (`tornTail`), never thrown: every complete
 * line before the cut is returned. A line that is complete but not a valid record is an error
 * (`RECORDING_INVALID`), since it means the file was damaged, not interrupted.
 */
import { createHash, type Hash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { PaperbotError } from '../../core/errors.ts';
import type { Compression } from './manifest.ts';
import { checkRecordHeader, invalidRecord, type RecordedEvent, verifyRecord } from './records.ts';

export interface ReadOptions {
  /** How many leading records to verify with zod; `true` verifies all, `false` none. */
  readonly verify?: boolean | number;
  /** Records per batch (default 4,096). */
  readonly batchSize?: number;
}

export const DEFAULT_VERIFIED_RECORDS = 1_000;
export const DEFAULT_BATCH_SIZE = 4_096;
const READ_CHUNK_BYTES = 1 << 20;

export interface TornTail {
  /** Where the tear starts, in bytes of the decompressed stream (the file offset when plain). */
  readonly offset: number;
  /** Bytes of the incomplete last line that were dropped. */
  readonly droppedBytes: number;
  /**
   * `unterminated-line`: the last line has no newline (the write was cut);
   * `truncated-gzip`: the gzip stream ends early (no trailer; a line may also be cut);
   * `damaged-gzip`: the gzip stream stops decoding (the bytes after some point are garbage, as
   * a zero-filled tail after a power loss). Lines in the decoder's last output buffer (at most
   * 16 KiB of text) before the damage may be lost with it.
   */
  readonly reason: 'unterminated-line' | 'truncated-gzip' | 'damaged-gzip';
}

export interface ReadSummary {
  readonly records: number;
  /** Bytes of the file read (compressed bytes for gzip). */
  readonly fileBytes: number;
  readonly tornTail: TornTail | null;
  /** Records whose `t` is below the one before; a well-formed file has none. */
  readonly decreasingTimes: number;
}

/** Reads raw file chunks; a tap sees every chunk (used to hash the file for the cache key). */
async function* fileChunks(path: string, tap: (chunk: Buffer) => void): AsyncGenerator<Buffer> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, 'r');
  } catch (cause) {
    throw new PaperbotError('RECORDING_NOT_FOUND', `cannot open ${path}`, {
      cause,
    });
  }
  try {
    for (;;) {
      const buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES);
      const { bytesRead } = await handle.read(buffer, 0, READ_CHUNK_BYTES, null);
      if (bytesRead === 0) return;
      const chunk = buffer.subarray(0, bytesRead);
      tap(chunk);
      yield chunk;
    }
  } finally {
    await handle.close();
  }
}

type GzipEnd = 'complete' | 'truncated-gzip' | 'damaged-gzip';

async function* gunzipChunks(
  raw: AsyncIterable<Buffer>,
  end: { value: GzipEnd },
): AsyncGenerator<Buffer> {
  const gunzip = createGunzip();
  const source = Readable.from(raw);
  source.on('error', (error) => gunzip.destroy(error));
  source.pipe(gunzip);
  try {
    for await (const chunk of gunzip) yield chunk as Buffer;
    end.value = 'complete';
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'Z_BUF_ERROR') end.value = 'truncated-gzip';
    else if (code === 'Z_DATA_ERROR') end.value = 'damaged-gzip';
    else throw error;
  } finally {
    source.destroy();
  }
}

/** The reader of one events file. Iterate `batches()` once; read `summary` afterwards. */
export class EventLogReader {
  private result: ReadSummary | null = null;
  private hash: Hash | null = null;
  private hashedBytes = 0;

  constructor(
    readonly path: string,
    readonly compression: Compression,
    private readonly options: ReadOptions = {},
  ) {}

  /** Set once `batches()` has run to its end. */
  get summary(): ReadSummary | null {
    return this.result;
  }

  /** Asks the reader to hash the raw bytes as it reads them (the cache key). */
  enableHashing(): void {
    this.hash = createHash('sha256');
  }

  /** SHA-256 (hex) and length of the bytes read, once `batches()` has run to its end. */
  digest(): { readonly sha256: string; readonly size: number } | null {
    if (!this.hash || !this.result) return null;
    return { sha256: this.hash.copy().digest('hex'), size: this.hashedBytes };
  }

  async *batches(): AsyncGenerator<RecordedEvent[]> {
    const verify = this.options.verify ?? DEFAULT_VERIFIED_RECORDS;
    const verifyLimit = verify === true ? Number.POSITIVE_INFINITY : verify === false ? 0 : verify;
    const batchSize = Math.max(1, this.options.batchSize ?? DEFAULT_BATCH_SIZE);
    const raw = fileChunks(this.path, (chunk) => {
      this.hashedBytes += chunk.length;
      this.hash?.update(chunk);
    });
    const gzipEnd: { value: GzipEnd } = { value: 'complete' };
    const decoded = this.compression === 'gzip' ? gunzipChunks(raw, gzipEnd) : raw;

    let batch: RecordedEvent[] = [];
    let records = 0;
    let lineNumber = 0;
    let lastT = Number.NEGATIVE_INFINITY;
    let decreasingTimes = 0;
    let offset = 0;
    let carry: Buffer | null = null;

    const take = (text: string): void => {
      lineNumber++;
      if (text.length === 0) return;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        throw invalidRecord(lineNumber, 'not JSON');
      }
      const record =
        records < verifyLimit
          ? verifyRecord(value, lineNumber)
          : checkRecordHeader(value, lineNumber);
      if (record.t < lastT) decreasingTimes++;
      lastT = record.t;
      records++;
      batch.push(record);
    };

    for await (const chunk of decoded) {
      let start = 0;
      if (carry) {
        const newline = chunk.indexOf(10);
        if (newline < 0) {
          carry = Buffer.concat([carry, chunk]);
          continue;
        }
        const line = Buffer.concat([carry, chunk.subarray(0, newline)]);
        take(line.toString('utf8'));
        offset += line.length + 1;
        carry = null;
        start = newline + 1;
      }
      for (;;) {
        const newline = chunk.indexOf(10, start);
        if (newline < 0) break;
        take(chunk.toString('utf8', start, newline));
        offset += newline + 1 - start;
        start = newline + 1;
        if (batch.length >= batchSize) {
          yield batch;
          batch = [];
        }
      }
      if (start < chunk.length) carry = chunk.subarray(start);
    }
    if (batch.length > 0) yield batch;

    const dropped = carry?.length ?? 0;
    let tornTail: TornTail | null = null;
    if (gzipEnd.value !== 'complete' && this.hashedBytes > 0) {
      tornTail = { offset, droppedBytes: dropped, reason: gzipEnd.value };
    } else if (dropped > 0) {
      tornTail = { offset, droppedBytes: dropped, reason: 'unterminated-line' };
    }
    this.result = {
      records,
      fileBytes: this.hashedBytes,
      tornTail,
      decreasingTimes,
    };
  }
}
