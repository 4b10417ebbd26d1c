/**
 * What every imported input shares: the tally of rows read and skipped (with the reason and
 * the first line of each), and the error that names the file and line of a refused row.
 */
import { isPaperbotError, PaperbotError } from '../../core/errors.ts';
import { isoTimestamp } from '../../core/clock.ts';
import { type RecordedEvent, tickerRecord, tradeRecord } from '../format/index.ts';
import type { MarketSpec } from './market-spec.ts';

export interface SkipTally {
  count: number;
  readonly firstLine: number;
}

export class InputTally {
  rowsRead = 0;
  headerLines = 0;
  recordsWritten = 0;
  readonly skipped = new Map<string, SkipTally>();

  constructor(
    readonly path: string,
    readonly kind: 'trades' | 'candles' | 'book',
  ) {}

  skip(reason: string, line: number): void {
    const entry = this.skipped.get(reason);
    if (entry) entry.count++;
    else this.skipped.set(reason, { count: 1, firstLine: line });
  }

  get skippedRows(): number {
    let total = 0;
    for (const entry of this.skipped.values()) total += entry.count;
    return total;
  }
}

/** A record produced from one row, with where it came from (for ordering errors). */
export interface ImportedRecord {
  readonly record: RecordedEvent;
  readonly line: number;
}

/** The ticker an input writes at a traded price (the replay's marks): every price that one. */
export function priceTicker(
  market: MarketSpec,
  t: number,
  line: number,
  price: string,
): ImportedRecord {
  return {
    line,
    record: tickerRecord(t, {
      market_id: market.market_id,
      mark_price: price,
      index_price: price,
      last_price: price,
      data_status: 'live',
    }),
  };
}

/** What differs from one imported trade to the next; the market and route are the input's. */
export interface TradeFields {
  readonly trade_id: string;
  readonly price: string;
  readonly quantity: string;
  readonly side: 'buy' | 'sell';
}

export function importedTrade(
  market: MarketSpec,
  t: number,
  line: number,
  trade: TradeFields,
): ImportedRecord {
  return {
    line,
    record: tradeRecord(t, {
      trade_id: trade.trade_id,
      market_id: market.market_id,
      route_id: market.route_id,
      price: trade.price,
      quantity: trade.quantity,
      side: trade.side,
      occurred_at: isoTimestamp(t),
    }),
  };
}

/** Runs `convert` on one row; a refusal names the file and the line. */
export function atRow<T>(path: string, line: number, convert: () => T): T {
  try {
    return convert();
  } catch (cause) {
    if (isPaperbotError(cause) && cause.code.startsWith('IMPORT_')) {
      throw new PaperbotError(cause.code, `${path} line ${line}: ${cause.message}`, {
        cause,
        details: { path, line },
      });
    }
    throw cause;
  }
}

/** Parses `name=column,name=column` (a layout's columns from the command line). */
export function parseColumnMapping(
  text: string,
  required: readonly string[],
  optional: readonly string[],
): Record<string, string> {
  const known = new Set([...required, ...optional]);
  const mapping: Record<string, string> = {};
  for (const part of text.split(',')) {
    const match = /^\s*([a-z_]+)\s*=\s*(.+?)\s*$/.exec(part);
    if (!match || !known.has(match[1]!)) {
      throw new PaperbotError(
        'INVALID_ARGUMENT',
        `column mapping ${JSON.stringify(part)}: expected name=column with name one of ${[...known].join(', ')}`,
      );
    }
    mapping[match[1]!] = match[2]!;
  }
  const missing = required.filter((name) => mapping[name] === undefined);
  if (missing.length > 0) {
    throw new PaperbotError('INVALID_ARGUMENT', `column mapping lacks ${missing.join(', ')}`);
  }
  return mapping;
}
