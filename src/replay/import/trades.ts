/**
 * Trades CSV to `trade` records, plus a `ticker` record whenever the traded price changes (the
 * replay's marks come from tickers; an imported file has no other source of them).
 *
 * Layouts: `columns` (a mapping given on the command line) and `binance-trades`, the public trade
 * dumps `id,price,qty,quote_qty,time,is_buyer_maker[,is_best_match]`, with or without that
 * header. `side` is the taker's side: `buy`/`sell` (or `b`/`s`), or, through `buyer_maker`, the
 * dumps' flag (a buyer who made the market means the taker sold).
 */
import { PaperbotError } from '../../core/errors.ts';
import type { ColumnLayout } from './csv-rows.ts';
import { readOrderedRows } from './ordered-rows.ts';
import type { GridCheck, MarketSpec } from './market-spec.ts';
import { atRow, type ImportedRecord, importedTrade, type InputTally, priceTicker } from './rows.ts';
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
  for await (const row of readOrderedRows(input, tally)) {
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
    if (price !== lastPrice) {
      lastPrice = price;
      yield priceTicker(market, t, row.line, price);
    }
    yield importedTrade(market, t, row.line, {
      trade_id: row.fields.id ?? `${row.line}`,
      price,
      quantity: converted.quantity,
      side: converted.side,
    });
  }
}
