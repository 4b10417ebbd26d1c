/**
 * The recording side of a session: `paperbot record` connects the streams to a `RecordingSink`
 * and the sink does the rest — stamping, ordering, trimming books to the configured depth,
 * buffered whole-line writes, periodic flush, fsync and manifest, and the final manifest at
 * close.
 *
 * Flush policy (all timers on the injected clock):
 * - buffered lines are written when they reach `flushCharacters` or every `flushIntervalMs`;
 * - the file is fsynced every `fsyncIntervalMs` and at close;
 * - the manifest (counts of what has been written so far, `complete: false`) is rewritten every
 *   `manifestIntervalMs`, and once more at close with `complete: true`.
 *
 * One session is one file: there is no rotation. A long recording is several sessions (one per
 * `--duration`), which replay can merge by time; that keeps every session's manifest exact for
 * its one file, and keeps the cache one file per session.
 */
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import { isPaperbotError, PaperbotError } from '../../core/errors.ts';
import type { Book, Market, PrivateEvent, PublicTrade } from '../../protocol/index.ts';
import { EventLogWriter } from './event-log-writer.ts';
import {
  type Compression,
  newManifest,
  RecordCounter,
  type RecordingManifest,
  withCounts,
  withIntegrity,
  writeManifest,
} from './manifest.ts';
import {
  bookRecord,
  encodeRecordLine,
  gapRecord,
  privateRecord,
  type RecordedEvent,
  type RecordedTickerData,
  type RecordedStream,
  tickerRecord,
  tradeRecord,
  withTime,
} from './records.ts';

export interface RecordingSinkOptions {
  /** The session folder; created if missing, refused if it already holds anything. */
  readonly directory: string;
  readonly clock: Clock;
  /** Where the data comes from. Credentials, query and fragment are stripped from the URL. */
  readonly source: {
    readonly kind: 'emulator' | 'live';
    readonly baseUrl: string;
  };
  readonly markets: readonly Market[];
  readonly bookDepth: number;
  readonly bookIntervalMs: number;
  /** Whether private events are recorded (a key was given). */
  readonly privateEvents: boolean;
  readonly compression?: Compression;
  readonly flushCharacters?: number;
  readonly flushIntervalMs?: number;
  readonly fsyncIntervalMs?: number;
  readonly manifestIntervalMs?: number;
  /** Called with a background flush or manifest failure; `close` rejects with it too. */
  readonly onError?: (error: PaperbotError) => void;
}

export const SINK_DEFAULTS = {
  compression: 'none' as Compression,
  flushCharacters: 256 * 1024,
  flushIntervalMs: 1_000,
  fsyncIntervalMs: 5_000,
  manifestIntervalMs: 10_000,
};

export class RecordingSink {
  private readonly counter = new RecordCounter();
  private readonly timers: TimerHandle[] = [];
  private lastT = 0;
  private closing: Promise<RecordingManifest> | null = null;
  private failure: PaperbotError | null = null;
  private background: Promise<void> = Promise.resolve();
  /** The last checkpoint queued; each waits for the one before. */
  private checkpoints: Promise<void> = Promise.resolve();
  private flushRequested = false;

  private constructor(
    private readonly options: RecordingSinkOptions,
    private readonly writer: EventLogWriter,
    private manifest: RecordingManifest,
  ) {}

  static async create(options: RecordingSinkOptions): Promise<RecordingSink> {
    if (!Number.isInteger(options.bookDepth) || options.bookDepth < 1) {
      throw new PaperbotError('RECORDING_INVALID_OPTIONS', 'bookDepth must be an integer >= 1');
    }
    if (!Number.isInteger(options.bookIntervalMs) || options.bookIntervalMs < 1) {
      throw new PaperbotError(
        'RECORDING_INVALID_OPTIONS',
        'bookIntervalMs must be an integer >= 1',
      );
    }
    await mkdir(options.directory, { recursive: true });
    const existing = await readdir(options.directory);
    if (existing.length > 0) {
      throw new PaperbotError(
        'RECORDING_EXISTS',
        `${options.directory} is not empty; a recording never overwrites or appends to another`,
        { details: { directory: options.directory } },
      );
    }
    const compression = options.compression ?? SINK_DEFAULTS.compression;
    const manifest = newManifest({
      createdAtMs: options.clock.now(),
      compression,
      source: options.source,
      bookDepth: options.bookDepth,
      bookIntervalMs: options.bookIntervalMs,
      privateEvents: options.privateEvents,
      markets: options.markets,
    });
    await writeManifest(options.directory, manifest);
    const writer = await EventLogWriter.create(
      join(options.directory, manifest.events_file),
      compression,
    );
    const sink = new RecordingSink(options, writer, manifest);
    sink.startTimers();
    return sink;
  }

  get directory(): string {
    return this.options.directory;
  }

  /** Records taken so far, written or still buffered (progress lines). */
  get recordedCount(): number {
    return this.counter.snapshot().total;
  }

  /** The manifest as last written. */
  get currentManifest(): RecordingManifest {
    return this.manifest;
  }

  /** `t` defaults to the sink's clock: the time the recorder received the event. */
  ticker(data: RecordedTickerData, t?: number): void {
    this.append(tickerRecord(this.stamp(t), data));
  }

  /** The book is trimmed to the configured depth. */
  book(book: Book, t?: number): void {
    const depth = this.options.bookDepth;
    const trimmed =
      book.bids.length > depth || book.asks.length > depth
        ? {
            ...book,
            bids: book.bids.slice(0, depth),
            asks: book.asks.slice(0, depth),
          }
        : book;
    this.append(bookRecord(this.stamp(t), trimmed));
  }

  trade(trade: PublicTrade, t?: number): void {
    this.append(tradeRecord(this.stamp(t), trade));
  }

  privateEvent(event: PrivateEvent, t?: number): void {
    if (!this.options.privateEvents) {
      throw new PaperbotError(
        'RECORDING_INVALID_OPTIONS',
        'this recording was created without private events',
      );
    }
    this.append(privateRecord(this.stamp(t), event));
  }

  /** Marks where a stream may have lost data (a disconnect, a resync). */
  gap(stream: RecordedStream, reason: string, marketId?: string, t?: number): void {
    this.append(gapRecord(this.stamp(t), stream, reason, marketId));
  }

  /**
   * Appends a record built elsewhere. Its `t` is raised to the last written `t` if it is
   * earlier: times in a file never decrease, and the payload keeps the venue's own timestamps.
   */
  append(record: RecordedEvent): void {
    if (this.failure) throw this.failure;
    if (this.closing) throw new PaperbotError('RECORDING_CLOSED', 'the recording is closed');
    const stamped = record.t < this.lastT ? withTime(record, this.lastT) : record;
    this.lastT = stamped.t;
    this.writer.append(encodeRecordLine(stamped));
    this.counter.add(stamped);
    if (!this.flushRequested && this.writer.pendingCharacters >= this.flushCharacters) {
      // One flush at a time is enough: it takes every line buffered when it runs.
      this.flushRequested = true;
      this.inBackground(
        this.flushNow().finally(() => {
          this.flushRequested = false;
        }),
      );
    }
  }

  /** Resolves once the background flushes and checkpoints started so far have finished. */
  async idle(): Promise<void> {
    await this.background;
  }

  /** Writes buffered records now. */
  async flush(): Promise<void> {
    await this.flushNow();
  }

  /** Writes everything, fsyncs, writes the final manifest (`complete: true`) and returns it. */
  close(): Promise<RecordingManifest> {
    this.closing ??= this.closeOnce();
    return this.closing;
  }

  private async closeOnce(): Promise<RecordingManifest> {
    for (const timer of this.timers) this.options.clock.clearInterval(timer);
    await this.background;
    const counts = this.counter.snapshot();
    try {
      await this.writer.close();
    } catch (cause) {
      throw this.fail(cause);
    }
    if (this.failure) throw this.failure;
    this.manifest = withIntegrity(this.manifest, counts, this.writer.written());
    await writeManifest(this.options.directory, this.manifest);
    return this.manifest;
  }

  private get flushCharacters(): number {
    return this.options.flushCharacters ?? SINK_DEFAULTS.flushCharacters;
  }

  private stamp(t: number | undefined): number {
    return t ?? this.options.clock.now();
  }

  private startTimers(): void {
    const clock = this.options.clock;
    const every = (periodMs: number, task: () => Promise<void>): void => {
      this.timers.push(clock.setInterval(() => this.inBackground(task()), periodMs));
    };
    every(this.options.flushIntervalMs ?? SINK_DEFAULTS.flushIntervalMs, () => this.flushNow());
    every(this.options.fsyncIntervalMs ?? SINK_DEFAULTS.fsyncIntervalMs, () => this.syncNow());
    every(this.options.manifestIntervalMs ?? SINK_DEFAULTS.manifestIntervalMs, () =>
      this.checkpoint(),
    );
  }

  private async flushNow(): Promise<void> {
    try {
      await this.writer.flush();
    } catch (cause) {
      throw this.fail(cause);
    }
  }

  private async syncNow(): Promise<void> {
    try {
      await this.writer.sync();
    } catch (cause) {
      throw this.fail(cause);
    }
  }

  /**
   * Queues a checkpoint behind the one in progress: two at once would write the same temporary
   * file (a virtual clock that jumps fires several intervals in one step).
   */
  private checkpoint(): Promise<void> {
    const next = this.checkpoints.then(() => this.checkpointNow());
    this.checkpoints = next.catch(() => undefined);
    return next;
  }

  /** Rewrites the manifest with the counts of what is on disk (flushed and fsynced). */
  private async checkpointNow(): Promise<void> {
    const counts = this.counter.snapshot();
    await this.syncNow();
    if (this.closing) return;
    this.manifest = withCounts(this.manifest, counts, false);
    try {
      await writeManifest(this.options.directory, this.manifest);
    } catch (cause) {
      throw this.fail(cause);
    }
  }

  private inBackground(task: Promise<void>): void {
    this.background = this.background.then(
      () => task.catch(() => undefined),
      () => task.catch(() => undefined),
    );
  }

  private fail(cause: unknown): PaperbotError {
    if (!this.failure) {
      this.failure = isPaperbotError(cause)
        ? cause
        : new PaperbotError('RECORDING_WRITE_FAILED', 'writing the recording failed', { cause });
      this.options.onError?.(this.failure);
    }
    return this.failure;
  }
}
