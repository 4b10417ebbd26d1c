/**
 * One market of the replay venue as the venue keeps it: its queues, the mark and snapshot it
 * remembers while the account is not engaged there, and its latest recorded book parsed into
 * ticks and steps (once, rewritten in place by the next) and clipped against the account's own
 * best prices (`replay-venue.ts` decides when a book is held, posted or withdrawn).
 */
import type { QuoteLevel, UnitGrid } from '../../emulator/index.ts';
import type { Book, BookLevel } from '../../protocol/index.ts';
import type { BookRecord, RecordedTickerData } from '../format/records.ts';
import type { FillModelName } from './config.ts';
import { type DisplayedLevel, type DisplayedSide, MarketQueues } from './queue.ts';

/** Level objects a side keeps for later snapshots; a deeper snapshot makes the rest anew. */
const POOLED_LEVELS = 256;

interface ParsedLevel {
  priceTicks: number;
  steps: number;
}

/**
 * One side of a market's latest snapshot as ticks and steps, rewritten in place by the next
 * snapshot: a replay parses every snapshot of a market it trades, and nothing keeps a parsed
 * level past the next one (the engine copies posted levels into its own orders, and queue
 * positions keep numbers).
 */
export class ParsedSide implements DisplayedSide {
  readonly levels: ParsedLevel[] = [];
  complete = false;
  private readonly pool: ParsedLevel[] = [];

  /** Sets the side's next level, reusing a level object of an earlier snapshot when it can. */
  set(index: number, priceTicks: number, steps: number): void {
    let level = this.pool[index];
    if (level === undefined) {
      level = { priceTicks, steps };
      if (index < POOLED_LEVELS) this.pool[index] = level;
    } else {
      level.priceTicks = priceTicks;
      level.steps = steps;
    }
    this.levels[index] = level;
  }
}

export class ParsedBook {
  readonly bids = new ParsedSide();
  readonly asks = new ParsedSide();
}

export interface ClippedLevels {
  readonly bids: QuoteLevel[];
  readonly asks: QuoteLevel[];
}

/** Whether a level is left in when a book is clipped (`clippedLevels`). */
function keptBid(level: DisplayedLevel, ownAsk: number | null): boolean {
  return level.steps > 0 && (ownAsk === null || level.priceTicks < ownAsk);
}

function keptAsk(level: DisplayedLevel, ownBid: number | null): boolean {
  return level.steps > 0 && (ownBid === null || level.priceTicks > ownBid);
}

/**
 * Whether a snapshot's highest bid reaches its lowest ask once clipped against the account's
 * best prices (its levels would trade), without building the clipped levels.
 */
export function crossedWhenClipped(
  parsed: ParsedBook,
  ownBid: number | null,
  ownAsk: number | null,
): boolean {
  let highestBid = Number.NEGATIVE_INFINITY;
  for (const level of parsed.bids.levels) {
    if (keptBid(level, ownAsk) && level.priceTicks > highestBid) highestBid = level.priceTicks;
  }
  for (const level of parsed.asks.levels) {
    if (keptAsk(level, ownBid) && level.priceTicks <= highestBid) return true;
  }
  return false;
}

export class ReplayMarket {
  readonly queues: MarketQueues;
  /** A ticker whose mark the engine has not had yet (the market is not engaged). */
  pendingTicker: RecordedTickerData | null = null;
  /** The latest snapshot's record: its book is built when first read (`BatchOptions.deferred`). */
  bookRecord: BookRecord | null = null;
  /** The latest snapshot parsed (`book`), or null until something reads it (`parsedBook`). */
  parsedLatest: ParsedBook | null = null;
  readonly book = new ParsedBook();
  /** Whether the engine holds the latest recorded book, or holds it back (`held`). */
  bookInEngine = true;
  /**
   * Whether the latest snapshot is held back, not yet in the engine: posted when something
   * reads the book (a command, a submission, a recorded trade), clipped then against the
   * account's best prices of when it came (`heldOwnBid`, `heldOwnAsk`). Most snapshots are
   * replaced while held, so they are never clipped.
   */
  held = false;
  heldOwnBid: number | null = null;
  heldOwnAsk: number | null = null;
  activeOrders = 0;
  hasPosition = false;
  /** Market orders that ended unfilled, and found nothing to trade against. */
  untraded = 0;
  /** Candle data: the interval, and the first trade's time (a candle's open) once seen. */
  candleIntervalMs: number | null = null;
  firstTradeT: number | null = null;

  /**
   * `bookDepth`: the recorded book depth (manifest `settings.book_depth`), below which a
   * snapshot's side is whole.
   */
  constructor(
    readonly marketId: string,
    readonly tick: UnitGrid,
    readonly step: UnitGrid,
    queuePosition: boolean,
    readonly model: FillModelName,
    private readonly bookDepth: number,
  ) {
    this.queues = new MarketQueues(queuePosition);
  }

  get latestBook(): Book | null {
    return this.bookRecord === null ? null : this.bookRecord.d;
  }

  get engaged(): boolean {
    return this.activeOrders > 0 || this.hasPosition;
  }

  priceTicks(text: string): number | null {
    return this.tick.unitsOf(text) ?? this.tick.roundedUnitsOf(text, 'half-even');
  }

  steps(text: string): number | null {
    return this.step.unitsOf(text) ?? this.step.roundedUnitsOf(text, 'down');
  }
  /**
   * The latest book without the levels that would trade with the account's resting orders,
   * whose best prices are `ownBid` and `ownAsk`.
   */
  clippedLevels(ownBid: number | null, ownAsk: number | null): ClippedLevels {
    const parsed = this.parsedBook()!;
    const bids: QuoteLevel[] = [];
    for (const level of parsed.bids.levels) if (keptBid(level, ownAsk)) bids.push(level);
    const asks: QuoteLevel[] = [];
    for (const level of parsed.asks.levels) if (keptAsk(level, ownBid)) asks.push(level);
    return { bids, asks };
  }

  /** The latest snapshot parsed, once (null: there is none). */
  parsedBook(): ParsedBook | null {
    if (this.parsedLatest !== null) return this.parsedLatest;
    const book = this.latestBook;
    if (book === null) return null;
    // The snapshot before is replaced: its parsed levels are rewritten in place.
    this.parseSide(book.bids, this.book.bids);
    this.parseSide(book.asks, this.book.asks);
    this.parsedLatest = this.book;
    return this.parsedLatest;
  }

  // A method, not a closure per book: a replay parses every snapshot of an engaged market.
  private parseSide(levels: readonly BookLevel[], into: ParsedSide): void {
    let count = 0;
    for (const level of levels) {
      const priceTicks = this.priceTicks(level.price);
      const steps = this.steps(level.quantity);
      if (priceTicks !== null && priceTicks >= 1 && steps !== null) {
        into.set(count, priceTicks, steps);
        count++;
      }
    }
    into.levels.length = count;
    into.complete = levels.length < this.bookDepth;
  }
}
