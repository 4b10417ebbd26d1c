/**
 * The in-process venue's private stream (`PrivateStreamFeed`): the account's events as the
 * engine numbered them, handed on in sequence order after the event latency, by the same rules
 * as the live stream (`src/runtime/private-stream.ts`): a jump in sequence is a `gap` item, and
 * the fills it may hide are read back from the engine's fill list, newest first, as GET
 * /v1/fills reads them live. So the order tracker, the journal's order events, the gap fill and
 * the read-back run in every backtest as they run live.
 *
 * `dropSequences` is a test seam: the events of those sequences are never handed on, as a live
 * stream may lose them, so a test can show a backtest recovering exactly as live does.
 */
import type { Observable } from 'rxjs';
import { HotStream } from '../../core/streams.ts';
import type { PrivateEvent } from '../../protocol/index.ts';
import { PrivateSequence, privateStreamItem } from '../../runtime/private-stream.ts';
import type {
  FillReadBack,
  FillReadBackStop,
  PrivateStreamFeed,
  PrivateStreamItem,
} from '../../runtime/venue.ts';

export class ReplayPrivateStream implements PrivateStreamFeed {
  readonly items$: Observable<PrivateStreamItem>;

  private readonly stream = new HotStream<PrivateStreamItem>();
  private readonly sequence = new PrivateSequence(null);
  private readonly dropped: ReadonlySet<number>;

  /**
   * `readBack`: the venue's read of its fills down to a stop (a REST read, with its latency);
   * `dropSequences`: sequences never handed on (a test seam, see the header).
   */
  constructor(
    private readonly readBack: (stop: FillReadBackStop) => Promise<FillReadBack>,
    dropSequences: Iterable<number> = [],
  ) {
    this.items$ = this.stream.observable;
    this.dropped = new Set(dropSequences);
  }

  /** Hands on one event of the account (in sequence order), after a gap if it jumps. */
  deliver(event: PrivateEvent): void {
    if (this.dropped.size > 0 && this.dropped.has(event.sequence)) return;
    if (this.sequence.seen(event.sequence)) return;
    const gap = this.sequence.advance(event.sequence);
    if (gap !== null) this.stream.next(gap);
    this.stream.next(privateStreamItem(event));
  }

  readFillsBack(stop: FillReadBackStop): Promise<FillReadBack> {
    return this.readBack(stop);
  }

  complete(): void {
    this.stream.complete();
  }
}

/** Every item of a paged engine listing, page by page (the engine's `{ data, page }` pages). */
export function* pagedItems<T>(
  page: (cursor: string | undefined) => {
    readonly data: readonly T[];
    readonly page: { readonly has_more: boolean; readonly next_cursor: string | null };
  },
): Generator<T> {
  let cursor: string | undefined;
  for (;;) {
    const current = page(cursor);
    yield* current.data;
    if (!current.page.has_more || current.page.next_cursor === null) return;
    cursor = current.page.next_cursor;
  }
}
