/**
 * Appends whole lines to an events file, plain or gzip, so that an interruption at any moment
 * leaves a file a reader can use up to its last complete line.
 *
 * - Lines are buffered and written by `flush`, all pending lines in one write call. A crash can
 *   tear only the last line, which the reader detects and reports.
 * - Gzip is one stream for the whole file; each flush ends with Z_SYNC_FLUSH, which byte-aligns
 *   the compressed output, so everything up to the last completed flush decompresses even when
 *   the gzip trailer never gets written.
 * - `sync` adds an fsync; `close` flushes, finishes the gzip stream, fsyncs and closes.
 *
 * Operations run one at a time in call order. The first write failure is kept: every later call
 * fails with it, so a recorder cannot keep counting records that never reached the disk.
 */
import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { createGzip, type Gzip, constants as zlibConstants } from 'node:zlib';
import { PaperbotError } from '../../core/errors.ts';
import type { Compression } from './manifest.ts';

export class EventLogWriter {
  private pending: string[] = [];
  private pendingLength = 0;
  private readonly compressed: Buffer[] = [];
  private queue: Promise<void> = Promise.resolve();
  private failure: PaperbotError | null = null;
  private closed = false;
  /** Every byte handed to the file, hashed as written: the manifest's check of the file. */
  private readonly hash = createHash('sha256');
  private bytesWritten = 0;

  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
    private readonly gzip: Gzip | null,
  ) {
    gzip?.on('data', (chunk: Buffer) => this.compressed.push(chunk));
  }

  /** Creates the file; an existing file is never overwritten or appended to. */
  static async create(path: string, compression: Compression): Promise<EventLogWriter> {
    let handle: FileHandle;
    try {
      handle = await open(path, 'wx', 0o644);
    } catch (cause) {
      throw new PaperbotError('RECORDING_WRITE_FAILED', `cannot create ${path}`, { cause });
    }
    const gzip = compression === 'gzip' ? createGzip({ level: 6 }) : null;
    return new EventLogWriter(path, handle, gzip);
  }

  /** Adds one whole line (ending in a newline) to the buffer. */
  append(line: string): void {
    if (this.failure) throw this.failure;
    if (this.closed) throw new PaperbotError('RECORDING_CLOSED', `${this.path} is closed`);
    this.pending.push(line);
    this.pendingLength += line.length;
  }

  /** Characters buffered and not yet handed to the file. */
  get pendingCharacters(): number {
    return this.pendingLength;
  }

  get failed(): PaperbotError | null {
    return this.failure;
  }

  /** Writes every buffered line. */
  flush(): Promise<void> {
    return this.enqueue(() => this.writePending());
  }

  /** Writes every buffered line, then fsyncs. */
  sync(): Promise<void> {
    return this.enqueue(async () => {
      await this.writePending();
      await this.handle.sync();
    });
  }

  /** Flushes, ends the gzip stream (its trailer marks a finished file), fsyncs and closes. */
  close(): Promise<void> {
    if (this.closed) return this.queue;
    this.closed = true;
    return this.enqueue(async () => {
      try {
        await this.writePending();
        if (this.gzip) {
          const gzip = this.gzip;
          await new Promise<void>((resolve, reject) => {
            gzip.once('end', resolve);
            gzip.once('error', reject);
            gzip.end();
          });
          await this.writeCompressed();
        }
        await this.handle.sync();
      } finally {
        await this.handle.close();
      }
    }, true);
  }

  private enqueue(operation: () => Promise<void>, evenIfFailed = false): Promise<void> {
    const run = async (): Promise<void> => {
      if (this.failure && !evenIfFailed) throw this.failure;
      try {
        await operation();
      } catch (cause) {
        this.failure ??= new PaperbotError(
          'RECORDING_WRITE_FAILED',
          `writing ${this.path} failed`,
          {
            cause,
          },
        );
        throw this.failure;
      }
    };
    const result = this.queue.then(run);
    // The queue carries on after a failure; the failure itself reaches every caller.
    this.queue = result.catch(() => undefined);
    return result;
  }

  private async writePending(): Promise<void> {
    if (this.pending.length === 0) return;
    const text = this.pending.join('');
    this.pending = [];
    this.pendingLength = 0;
    if (!this.gzip) {
      await this.writeAll(Buffer.from(text, 'utf8'));
      return;
    }
    const gzip = this.gzip;
    gzip.write(text, 'utf8');
    await new Promise<void>((resolve) => gzip.flush(zlibConstants.Z_SYNC_FLUSH, () => resolve()));
    await this.writeCompressed();
  }

  private async writeCompressed(): Promise<void> {
    if (this.compressed.length === 0) return;
    const bytes = Buffer.concat(this.compressed);
    this.compressed.length = 0;
    await this.writeAll(bytes);
  }

  /** Bytes written so far and their SHA-256 (hex): what the file holds once closed. */
  written(): { readonly bytes: number; readonly sha256: string } {
    return { bytes: this.bytesWritten, sha256: this.hash.copy().digest('hex') };
  }

  private async writeAll(bytes: Buffer): Promise<void> {
    this.hash.update(bytes);
    this.bytesWritten += bytes.length;
    let offset = 0;
    while (offset < bytes.length) {
      const { bytesWritten } = await this.handle.write(bytes, offset, bytes.length - offset);
      offset += bytesWritten;
    }
  }
}
