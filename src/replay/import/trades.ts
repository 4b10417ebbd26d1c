/**
 * Trades CSV to `trade` records, plus a `ticker` record whenever the traded price changes (the
 * replay's marks come from tickers; an imported file has no other source of them).
 *
 * Layouts: `columns` (a mapping given on the command line) and `binance-trades`, the public trade
 * dumps `id,price,qty,quote_qty,time,is_buyer_maker[,is_best_match]`, with or without that
 * header. `side` is the taker's side: `buy`/`sell` (or `b`/`s`), or, through `buyer_maker`, the
 * dumps' flag (a buyer who made the market means the taker sold).
 */
import { isoTimestamp } from '../../core/clock.ts';
import { PaperbotError } from '../../core/errors.ts';
import { tickerRecord, tradeRecord } from '../format/index.ts';
import type { ColumnLayout } from './csv-rows.ts';
import { readOrderedRows } from './ordered-rows.ts';
import type { GridCheck, MarketSpec } from './market-spec.ts';
import { atRow, type ImportedRecord, type InputTally } from './rows.ts';
import type { TimeUnit } from './timestamps.ts';

export const TRADE_FIELDS = {
  required: ['timestamp', 'price', 'quantity'],
  optional: ['side', 'buyer_maker', 'id'],
} as const;

export const BINANCE_TRADES_LAYOUT: ColumnLayout = {
  header: false,
  columns: { id: '0', price: '1', quantity: '2', timestamp: '4', buyer_maker: '5' },
  optionalHeader: ['id', 'price', 'qty', 'quote_qty', 'time', 'is_buyer_maker'],
};

export interface TradeInput {
  readonly path: string;
  readonly layout: ColumnLayout;
  readonly timeUnit: TimeUnit;
  readonly sort: boolean;
}

function takerSide(fields: Readonly<Record<string, string>>): 'buy' | 'sell' {
  const side = fields.side?.toLowerCase();
  if (side !== undefined) {
    if (side === 'buy' || side === 'b') return 'buy';
    if (side === 'sell' || side === 's') return 'sell';
    throw new PaperbotError(
      'IMPORT_INVALID_ROW',
      `side ${JSON.stringify(fields.side)} is not buy or sell`,
    );
  }
  const maker = fields.buyer_maker?.toLowerCase();
  if (maker === 'true' || maker === '1') return 'sell';
  if (maker === 'false' || maker === '0') return 'buy';
  throw new PaperbotError(
    'IMPORT_INVALID_ROW',
    maker === undefined
      ? 'the layout maps neither side nor buyer_maker'
      : `buyer_maker ${JSON.stringify(fields.buyer_maker)} is not true or false`,
  );
}

export async function* importTrades(
  input: TradeInput,
  market: MarketSpec,
  grid: GridCheck,
  tally: InputTally,
): AsyncGenerator<ImportedRecord> {
  let lastPrice: string | null = null;
  for await (const row of readOrderedRows({ ...input, onHeader: () => tally.headerLines++ })) {
    tally.rowsRead++;
    const converted = atRow(input.path, row.line, () => {
      const t = row.t;
      const price = grid.price(row.fields.price!);
      const quantity = grid.quantity(row.fields.quantity!);
      return { t, price, quantity, side: takerSide(row.fields) };
    });
    if (converted.quantity === '0') {
      tally.skip('zero quantity', row.line);
      continue;
    }
    const { t, price } = converted;
    const occurredAt = isoTimestamp(t);
    if (price !== lastPrice) {
      lastPrice = price;
      yield {
        line: row.line,
        record: tickerRecord(t, {
          market_id: market.market_id,
          mark_price: price,
          index_price: price,
          last_price: price,
          data_status: 'live',
        }),
      };
    }
    yield {
      line: row.line,
      record: tradeRecord(t, {
        trade_id: row.fields.id ?? `${row.line}`,
        market_id: market.market_id,
        route_id: market.route_id,
        price,
        quantity: converted.quantity,
        side: converted.side,
        occurred_at: occurredAt,
      }),
    };
  }
}
