/**
 * Reads an events file (JSONL, plain or gzip) in batches, in file order.
 *
 * Decoding is `JSON.parse` of each line and two cheap checks (version and kind); the first
 * `verify` records (1,000 by default, every record with `verify: true`) are also checked with
 * zod against the protocol schemas, and a `check` (a replay's value and time-order checks, see
 * `integrity.ts`) sees every record. Records are handed out as decoded, never copied.
 *
 * The file is opened as every user-named file is (`src/core/user-file.ts`: a FIFO or a device
 * is refused at once); a gzip file's decompressed bytes and every line's length are capped, so
 * a gzip bomb or a line of gigabytes is refused instead of filling memory. A line spread over
 * chunks is joined once, at its newline: reading stays linear in the line's length.
 *
 * An interrupted recording ends in a torn tail: the bytes after the last newline, or a gzip
 * stream cut short. Both are reported in the summary (`tornTail`), never thrown: every complete
 * line before the cut is returned. A line that is complete but not a valid record is an error
 * (`RECORDING_INVALID`), since it means the file was damaged, not interrupted.
 */
import { createHash, type Hash } from 'node:crypto';
import { PaperbotError } from '../../core/errors.ts';
import { type GzipEnd, gunzipAtMost, openUserFile } from '../../core/user-file.ts';
import type { Compression } from './manifest.ts';
import { checkRecordHeader, invalidRecord, type RecordedEvent, verifyRecord } from './records.ts';

export interface ReadOptions {
  /** How many leading records to verify with zod; `true` verifies all, `false` none. */
  readonly verify?: boolean | number;
  /** Records per batch (default 4,096). */
  readonly batchSize?: number;
  /** The longest line read (default 64 MiB); a longer one is refused, not buffered. */
  readonly maxLineBytes?: number;
  /** Decompressed bytes allowed from a gzip file (default 1 TiB): a gzip bomb is refused. */
  readonly maxDecompressedBytes?: number;
  /**
   * Called with every decoded record, in file order: false drops it (a damaged record a replay
   * was told to skip); a check that refuses throws.
   */
  readonly check?: (record: RecordedEvent, line: number) => boolean;
}

export const DEFAULT_VERIFIED_RECORDS = 1_000;
export const DEFAULT_BATCH_SIZE = 4_096;
export const DEFAULT_MAX_LINE_BYTES = 64 << 20;
export const DEFAULT_MAX_DECOMPRESSED_BYTES = 2 ** 40;
/** The largest events file read (on disk). */
const MAX_EVENTS_FILE_BYTES = 2 ** 42;

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
  /** Complete records read (those a `check` dropped included). */
  readonly records: number;
  /** Bytes of the file read (compressed bytes for gzip). */
  readonly fileBytes: number;
  readonly tornTail: TornTail | null;
  /** Records whose `t` is below the one before; a well-formed file has none. */
  readonly decreasingTimes: number;
}

/** Raw file chunks, opened as every user-named file is; a tap sees every chunk (the hash). */
async function* fileChunks(path: string, tap: (chunk: Buffer) => void): AsyncGenerator<Buffer> {
  const file = await openUserFile(path, {
    what: 'events file',
    maxBytes: MAX_EVENTS_FILE_BYTES,
    codes: { notFound: 'RECORDING_NOT_FOUND', unreadable: 'RECORDING_UNREADABLE' },
  });
  try {
    for await (const chunk of file.chunks()) {
      tap(chunk);
      yield chunk;
    }
  } finally {
    await file.close();
  }
}

const GZIP_END_REASON = {
  complete: null,
  truncated: 'truncated-gzip',
  damaged: 'damaged-gzip',
} as const;

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
    const maxLineBytes = this.options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    const maxDecompressed = this.options.maxDecompressedBytes ?? DEFAULT_MAX_DECOMPRESSED_BYTES;
    const check = this.options.check;
    const raw = fileChunks(this.path, (chunk) => {
      this.hashedBytes += chunk.length;
      this.hash?.update(chunk);
    });
    const gzipEnd: { value: GzipEnd } = { value: 'complete' };
    const decoded =
      this.compression === 'gzip'
        ? gunzipAtMost(
            raw,
            {
              maxBytes: maxDecompressed,
              tooLarge: () =>
                new PaperbotError(
                  'RECORDING_INVALID',
                  `${this.path} decompresses to more than ${maxDecompressed} bytes`,
                  { details: { path: this.path, limit_bytes: maxDecompressed } },
                ),
            },
            gzipEnd,
          )
        : raw;

    let batch: RecordedEvent[] = [];
    let records = 0;
    let lineNumber = 0;
    let lastT = Number.NEGATIVE_INFINITY;
    let decreasingTimes = 0;
    let offset = 0;
    // The start of a line spread over chunks, kept as the chunks themselves and joined once
    // when its newline comes: appending chunk by chunk would copy the line again each time.
    let carry: Buffer[] = [];
    let carryBytes = 0;

    const take = (text: string): void => {
      lineNumber++;
      if (text.length === 0) return;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        throw invalidRecord(lineNumber, 'not JSON');
      }
      const record = checkRecordHeader(value, lineNumber);
      const index = records++;
      // The replay's checks first: a damaged value is damage (skippable), whatever the schema.
      if (check !== undefined && !check(record, lineNumber)) return;
      if (index < verifyLimit) verifyRecord(value, lineNumber);
      if (record.t < lastT) decreasingTimes++;
      lastT = record.t;
      batch.push(record);
    };
    const tooLong = () =>
      new PaperbotError(
        'RECORDING_INVALID',
        `${this.path} line ${lineNumber + 1} is longer than ${maxLineBytes} bytes`,
        { details: { path: this.path, line: lineNumber + 1, limit_bytes: maxLineBytes } },
      );

    for await (const chunk of decoded) {
      let start = 0;
      if (carryBytes > 0) {
        const newline = chunk.indexOf(10);
        if (newline < 0) {
          carry.push(chunk);
          carryBytes += chunk.length;
          if (carryBytes > maxLineBytes) throw tooLong();
          continue;
        }
        if (carryBytes + newline > maxLineBytes) throw tooLong();
        carry.push(chunk.subarray(0, newline));
        const length = carryBytes + newline;
        take(Buffer.concat(carry, length).toString('utf8'));
        offset += length + 1;
        carry = [];
        carryBytes = 0;
        start = newline + 1;
      }
      for (;;) {
        const newline = chunk.indexOf(10, start);
        if (newline < 0) break;
        if (newline - start > maxLineBytes) throw tooLong();
        take(chunk.toString('utf8', start, newline));
        offset += newline + 1 - start;
        start = newline + 1;
        if (batch.length >= batchSize) {
          yield batch;
          batch = [];
        }
      }
      if (start < chunk.length) {
        carry = [chunk.subarray(start)];
        carryBytes = chunk.length - start;
        if (carryBytes > maxLineBytes) throw tooLong();
      }
    }
    if (batch.length > 0) yield batch;

    const dropped = carryBytes;
    let tornTail: TornTail | null = null;
    const gzipReason = GZIP_END_REASON[gzipEnd.value];
    if (gzipReason !== null && this.hashedBytes > 0) {
      tornTail = { offset, droppedBytes: dropped, reason: gzipReason };
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
