/**
 * `events.cache`: a binary copy of a session's events, built on the first replay and used by the
 * next ones while it matches the events file (see `binary-codec.ts` for why it decodes faster).
 *
 * Layout: 8 bytes of magic (`PBCACHE1`), a 4-byte header length and a header slot of
 * `HEADER_SLOT` bytes (JSON, padded with spaces), then blocks, each framed by a 4-byte length.
 * The header is written last, into its slot, and the file is renamed into place only then: a
 * cache either exists whole or not at all.
 *
 * The key is the events file's size and SHA-256. The header also keeps the file's mtime: when
 * size and mtime both match, the cache is used without rehashing (any write to an append-only
 * file changes its size; a rewrite of the same size changes its mtime). `verifyHash: true`
 * always rehashes.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { type FileHandle, open, rename, rm, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { z } from 'zod';
import { PaperbotError } from '../../core/errors.ts';
import { BlockEncoder, createBlockDecoder } from './binary-codec.ts';
import type { ReadSummary } from './event-log-reader.ts';
import type { RecordedEvent } from './records.ts';

export const CACHE_MAGIC = 'PBCACHE1';
export const CACHE_VERSION = 1;
const MAGIC_BYTES = Buffer.from(CACHE_MAGIC, 'latin1');
const HEADER_SLOT = 1024;
const BLOCKS_START = MAGIC_BYTES.length + 4 + HEADER_SLOT;

export const CacheHeader = z.strictObject({
  cache_version: z.literal(CACHE_VERSION),
  source: z.strictObject({
    file: z.string(),
    size: z.int().min(0),
    mtime_ms: z.number(),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
  }),
  records: z.int().min(0),
  blocks: z.int().min(0),
  /** The cache file's own size: a shorter file is not used. */
  bytes: z.int().min(0),
  torn_tail: z
    .strictObject({
      offset: z.int().min(0),
      droppedBytes: z.int().min(0),
      reason: z.enum(['unterminated-line', 'truncated-gzip', 'damaged-gzip']),
    })
    .nullable(),
  decreasing_times: z.int().min(0),
});
export type CacheHeader = z.infer<typeof CacheHeader>;

/** The cache's header, or null when there is no usable cache file. */
export async function readCacheHeader(path: string): Promise<CacheHeader | null> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch {
    return null;
  }
  try {
    const prefix = Buffer.alloc(BLOCKS_START);
    const { bytesRead } = await handle.read(prefix, 0, BLOCKS_START, 0);
    if (bytesRead < BLOCKS_START || !prefix.subarray(0, MAGIC_BYTES.length).equals(MAGIC_BYTES)) {
      return null;
    }
    const length = prefix.readUInt32LE(MAGIC_BYTES.length);
    if (length > HEADER_SLOT) return null;
    const start = MAGIC_BYTES.length + 4;
    const parsed = CacheHeader.safeParse(
      JSON.parse(prefix.toString('utf8', start, start + length)),
    );
    if (!parsed.success) return null;
    const { size } = await handle.stat();
    return size === parsed.data.bytes ? parsed.data : null;
  } catch {
    return null;
  } finally {
    await handle.close();
  }
}

export async function hashFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, {
    highWaterMark: 1 << 20,
  })) {
    hash.update(chunk as Buffer);
  }
  return hash.digest('hex');
}

/** Whether the cache was built from the events file as it is now. */
export async function cacheMatches(
  header: CacheHeader,
  eventsPath: string,
  options: { readonly verifyHash?: boolean } = {},
): Promise<boolean> {
  let size: number;
  let mtimeMs: number;
  try {
    const info = await stat(eventsPath);
    size = info.size;
    mtimeMs = info.mtimeMs;
  } catch {
    return false;
  }
  if (header.source.file !== basename(eventsPath) || header.source.size !== size) return false;
  if (header.source.mtime_ms === mtimeMs && !options.verifyHash) return true;
  return (await hashFile(eventsPath)) === header.source.sha256;
}

/** Writes a cache to a temporary file block by block; `finish` puts it in place. */
export class CacheWriter {
  private readonly encoder = new BlockEncoder();
  private blocks = 0;
  private records = 0;
  private position = BLOCKS_START;
  private queue: Promise<void> = Promise.resolve();
  private failed: unknown = null;

  private constructor(
    readonly path: string,
    private readonly temporary: string,
    private readonly handle: FileHandle,
  ) {}

  static async create(path: string): Promise<CacheWriter> {
    // Several replays (a sweep's workers) may build the same cache at once: each writes its own
    // temporary file and the last rename wins, every candidate being complete and equivalent.
    const temporary = `${path}.${randomUUID()}.tmp`;
    const handle = await open(temporary, 'w', 0o644);
    return new CacheWriter(path, temporary, handle);
  }

  /** Encodes one batch as a block now and writes it in the background, in order. */
  add(records: readonly RecordedEvent[]): void {
    if (records.length === 0 || this.failed) return;
    const block = this.encoder.encode(records);
    const frame = Buffer.allocUnsafe(4);
    frame.writeUInt32LE(block.length, 0);
    const at = this.position;
    this.position += 4 + block.length;
    this.blocks++;
    this.records += records.length;
    this.queue = this.queue.then(async () => {
      if (this.failed) return;
      try {
        await this.handle.writev([frame, block], at);
      } catch (error) {
        this.failed = error;
      }
    });
  }

  /** Writes the header, fsyncs and renames the cache into place. */
  async finish(source: CacheHeader['source'], summary: ReadSummary): Promise<CacheHeader> {
    await this.queue;
    if (this.failed) {
      await this.abort();
      throw new PaperbotError('RECORDING_CACHE_WRITE_FAILED', `writing ${this.path} failed`, {
        cause: this.failed,
      });
    }
    const header: CacheHeader = {
      cache_version: CACHE_VERSION,
      source,
      records: this.records,
      blocks: this.blocks,
      bytes: this.position,
      torn_tail: summary.tornTail,
      decreasing_times: summary.decreasingTimes,
    };
    const json = Buffer.from(JSON.stringify(header), 'utf8');
    if (json.length > HEADER_SLOT) {
      await this.abort();
      throw new PaperbotError('RECORDING_CACHE_WRITE_FAILED', 'cache header too long');
    }
    const prefix = Buffer.alloc(BLOCKS_START, 0x20);
    MAGIC_BYTES.copy(prefix, 0);
    prefix.writeUInt32LE(json.length, MAGIC_BYTES.length);
    json.copy(prefix, MAGIC_BYTES.length + 4);
    await this.handle.write(prefix, 0, prefix.length, 0);
    await this.handle.sync();
    await this.handle.close();
    await rename(this.temporary, this.path);
    return header;
  }

  /** Drops the temporary file (an early stop, or a failure). */
  async abort(): Promise<void> {
    await this.queue;
    await this.handle.close().catch(() => undefined);
    await rm(this.temporary, { force: true });
  }
}

/** Reads a cache's records block by block, in file order, several blocks per read call. */
export async function* readCacheBatches(
  path: string,
  header: CacheHeader,
): AsyncGenerator<RecordedEvent[]> {
  const decoder = createBlockDecoder();
  const handle = await open(path, 'r');
  let window = Buffer.alloc(0);
  let windowStart = 0;
  const bytesAt = async (position: number, length: number): Promise<Buffer> => {
    const end = position + length;
    if (position >= windowStart && end <= windowStart + window.length) {
      return window.subarray(position - windowStart, end - windowStart);
    }
    const size = Math.max(length, READ_WINDOW_BYTES);
    const fresh = Buffer.allocUnsafe(size);
    const { bytesRead } = await handle.read(fresh, 0, size, position);
    if (bytesRead < length) throw cacheTruncated(path);
    window = fresh.subarray(0, bytesRead);
    windowStart = position;
    return window.subarray(0, length);
  };
  try {
    let position = BLOCKS_START;
    for (let block = 0; block < header.blocks; block++) {
      const length = (await bytesAt(position, 4)).readUInt32LE(0);
      const bytes = await bytesAt(position + 4, length);
      position += 4 + length;
      yield decoder.decode(bytes) as RecordedEvent[];
    }
  } finally {
    await handle.close();
  }
}

const READ_WINDOW_BYTES = 8 << 20;

function cacheTruncated(path: string): PaperbotError {
  return new PaperbotError('RECORDING_CACHE_CORRUPT', `${path} is shorter than its header says`);
}
