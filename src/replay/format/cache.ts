/**
 * `events.cache`: a binary copy of a session's events, built on the first replay and used by the
 * next ones while it matches the events file (see `block-layout.ts` for why it decodes faster).
 *
 * Layout: 8 bytes of magic (`PBCACHE2`), a 4-byte header length and a header slot of
 * `HEADER_SLOT` bytes (JSON, padded with spaces), then the blocks of one `BlockEncoder` sequence,
 * each starting with its own length and padded to 8 bytes (the blocks start at an offset that is
 * a multiple of 8 too, so a block read into an aligned buffer is decoded in place). The header
 * is written last, into its slot, and the file is renamed into place only then: a cache either
 * exists whole or not at all.
 *
 * The key is the events file's size and SHA-256. The header also keeps the file's mtime: when
 * size and mtime both match, the cache is used without rehashing (any write to an append-only
 * file changes its size; a rewrite of the same size changes its mtime). `verifyHash: true`
 * always rehashes. A cache written on a host of the other byte order is not used.
 */
import { createHash, randomUUID } from 'node:crypto';
import { type FileHandle, open, rename, rm, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { z } from 'zod';
import { PaperbotError } from '../../core/errors.ts';
import { closeOnce, openUserFile } from '../../core/user-file.ts';
import { type BlockDecoderOptions, createBlockDecoder } from './block-decoder.ts';
import { BlockEncoder } from './block-encoder.ts';
import { HOST_LITTLE_ENDIAN } from './block-layout.ts';
import type { ReadSummary } from './event-log-reader.ts';
import type { RecordedEvent } from './records.ts';

export const CACHE_MAGIC = 'PBCACHE2';
/**
 * 3: written only from a read that checked every record (time order and values, `integrity.ts`)
 * and found the events file as its manifest claims; a version 2 cache is rebuilt once.
 */
export const CACHE_VERSION = 3;
const MAGIC_BYTES = Buffer.from(CACHE_MAGIC, 'latin1');
const HEADER_SLOT = 1_028;
/** The largest cache (or events file hashed for its key) opened. */
const MAX_CACHE_BYTES = 2 ** 42;
const BLOCKS_START = MAGIC_BYTES.length + 4 + HEADER_SLOT;
/** Records per block: a batch of the replay. */
export const CACHE_BLOCK_RECORDS = 1_024;
/**
 * Bytes read at once (more when one block is larger). A record read later (a book or trade built
 * on first read) keeps its window alive, so a window is kept small: a few of them live at once.
 */
const READ_WINDOW_BYTES = 1 << 20;

export const CacheHeader = z.strictObject({
  cache_version: z.literal(CACHE_VERSION),
  little_endian: z.boolean(),
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
  /** Leading records checked against the record schema while the cache was built. */
  verified_records: z.int().min(0),
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

/** An opened cache file whose header is valid; read its records once, or close it. */
export interface CacheFile {
  readonly path: string;
  readonly header: CacheHeader;
  /**
   * The records block by block, in file order; closes the file at the end. With
   * `deferredKinds`, records of those kinds may come as `DeferredRecord`s (`record-templates.ts`).
   */
  batches(options?: BlockDecoderOptions): AsyncGenerator<RecordedEvent[]>;
  close(): Promise<void>;
}

/** Opens a cache and checks its header, or returns null when there is no usable cache file. */
export async function openCacheFile(path: string): Promise<CacheFile | null> {
  let handle: FileHandle;
  try {
    // Opened as a user-named file: something that is not a regular file is no cache.
    handle = (await openUserFile(path, { what: 'events cache', maxBytes: MAX_CACHE_BYTES })).handle;
  } catch {
    return null;
  }
  let header: CacheHeader | null = null;
  try {
    header = await readHeader(handle);
  } catch {
    header = null;
  }
  if (!header) {
    await handle.close();
    return null;
  }
  const found = header;
  const close = closeOnce(handle);
  return {
    path,
    header: found,
    close,
    batches: async function* (options: BlockDecoderOptions = {}) {
      try {
        yield* readBlocks(handle, path, found, options);
      } finally {
        await close();
      }
    },
  };
}

async function readHeader(handle: FileHandle): Promise<CacheHeader | null> {
  const prefix = Buffer.alloc(BLOCKS_START);
  const { bytesRead } = await handle.read(prefix, 0, BLOCKS_START, 0);
  if (bytesRead < BLOCKS_START || !prefix.subarray(0, MAGIC_BYTES.length).equals(MAGIC_BYTES)) {
    return null;
  }
  const length = prefix.readUInt32LE(MAGIC_BYTES.length);
  if (length > HEADER_SLOT) return null;
  const start = MAGIC_BYTES.length + 4;
  const parsed = CacheHeader.safeParse(JSON.parse(prefix.toString('utf8', start, start + length)));
  if (!parsed.success || parsed.data.little_endian !== HOST_LITTLE_ENDIAN) return null;
  const { size } = await handle.stat();
  return size === parsed.data.bytes ? parsed.data : null;
}

/** The cache's header, or null when there is no usable cache file. */
export async function readCacheHeader(path: string): Promise<CacheHeader | null> {
  const file = await openCacheFile(path);
  await file?.close();
  return file?.header ?? null;
}

export async function hashFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  const file = await openUserFile(path, { what: 'events file', maxBytes: MAX_CACHE_BYTES });
  try {
    for await (const chunk of file.chunks()) hash.update(chunk);
  } finally {
    await file.close();
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

/** What the cache header keeps of the read that built the cache. */
export interface CacheBuild extends ReadSummary {
  /** Leading records checked against the record schema during that read. */
  readonly verifiedRecords: number;
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

  /**
   * Encodes a batch now, as blocks of at most `CACHE_BLOCK_RECORDS`, and writes them in the
   * background, in order. A failure is kept for `finish`: the replay goes on without a cache.
   */
  add(records: readonly RecordedEvent[]): void {
    for (let start = 0; start < records.length && !this.failed; start += CACHE_BLOCK_RECORDS) {
      let block: Buffer;
      try {
        block = this.encoder.encode(
          start === 0 && records.length <= CACHE_BLOCK_RECORDS
            ? records
            : records.slice(start, start + CACHE_BLOCK_RECORDS),
        );
      } catch (error) {
        this.failed = error;
        return;
      }
      const at = this.position;
      this.position += block.length;
      this.blocks++;
      this.records += Math.min(CACHE_BLOCK_RECORDS, records.length - start);
      this.queue = this.queue.then(async () => {
        if (this.failed) return;
        try {
          await this.handle.write(block, 0, block.length, at);
        } catch (error) {
          this.failed = error;
        }
      });
    }
  }

  /** Writes the header, fsyncs and renames the cache into place. */
  async finish(source: CacheHeader['source'], build: CacheBuild): Promise<CacheHeader> {
    await this.queue;
    if (this.failed) {
      await this.abort();
      throw new PaperbotError('RECORDING_CACHE_WRITE_FAILED', `writing ${this.path} failed`, {
        cause: this.failed,
      });
    }
    const header: CacheHeader = {
      cache_version: CACHE_VERSION,
      little_endian: HOST_LITTLE_ENDIAN,
      source,
      records: this.records,
      blocks: this.blocks,
      bytes: this.position,
      verified_records: Math.min(build.verifiedRecords, this.records),
      torn_tail: build.tornTail,
      decreasing_times: build.decreasingTimes,
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

/**
 * Reads the blocks in windows of `READ_WINDOW_BYTES` (several blocks each)
 * into buffers of their own, where every block starts 8-byte aligned, and decodes one block per
 * batch as the replay asks for it.
 */
async function* readBlocks(
  handle: FileHandle,
  path: string,
  header: CacheHeader,
  options: BlockDecoderOptions,
): AsyncGenerator<RecordedEvent[]> {
  const decoder = createBlockDecoder(options);
  let window: Uint8Array = new Uint8Array(0);
  let windowStart = BLOCKS_START;
  let position = BLOCKS_START;
  let records = 0;
  const load = async (length: number): Promise<void> => {
    const size = Math.min(Math.max(length, READ_WINDOW_BYTES), header.bytes - position);
    if (size < length) throw cacheTruncated(path);
    // A buffer of its own (never a slice of Node's pool), so offset 0 is 8-byte aligned.
    const fresh = Buffer.allocUnsafeSlow(size);
    const { bytesRead } = await handle.read(fresh, 0, size, position);
    if (bytesRead < length) throw cacheTruncated(path);
    window = fresh.subarray(0, bytesRead);
    windowStart = position;
  };
  for (let block = 0; block < header.blocks; block++) {
    let at = position - windowStart;
    if (at + 4 > window.length) {
      await load(4);
      at = 0;
    }
    const length = new DataView(window.buffer, window.byteOffset + at, 4).getUint32(
      0,
      HOST_LITTLE_ENDIAN,
    );
    if (length < 8 || length % 8 !== 0) throw cacheCorrupt(path, 'bad block length');
    if (at + length > window.length) {
      await load(length);
      at = 0;
    }
    const decoded = decoder.decode(window.subarray(at, at + length)) as RecordedEvent[];
    position += length;
    records += decoded.length;
    yield decoded;
  }
  if (records !== header.records) throw cacheCorrupt(path, 'record count does not match');
}

function cacheTruncated(path: string): PaperbotError {
  return new PaperbotError('RECORDING_CACHE_CORRUPT', `${path} is shorter than its header says`);
}

function cacheCorrupt(path: string, message: string): PaperbotError {
  return new PaperbotError('RECORDING_CACHE_CORRUPT', `${path} is damaged: ${message}`);
}
