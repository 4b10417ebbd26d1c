/**
 * Candles CSV (open time, open, high, low, close, volume) to records. A candle says nothing about
 * the order of its prices, so each becomes four synthetic trades on a fixed path at a quarter of
 * the interval apart: open, then the extreme away from the close, then the other, then close
 * (O-L-H-C for a rising candle, O-H-L-C otherwise), each a quarter of the volume rounded down to
 * the step, each with a ticker. A candle whose volume is under four steps gives the tickers only.
 */
import { parseDecimal, toWire } from '../../core/decimal.ts';
import { roundQuantity } from '../../core/grid.ts';
import type { ColumnLayout } from './csv-rows.ts';
import { readOrderedRows } from './ordered-rows.ts';
import type { GridCheck, MarketSpec } from './market-spec.ts';
import { atRow, type ImportedRecord, importedTrade, type InputTally, priceTicker } from './rows.ts';
import type { TimeUnit } from './timestamps.ts';

export const CANDLE_FIELDS = {
  required: ['timestamp', 'open', 'high', 'low', 'close', 'volume'],
  optional: [],
} as const;

export interface CandleInput {
  readonly path: string;
  readonly layout: ColumnLayout;
  readonly timeUnit: TimeUnit;
  readonly sort: boolean;
  readonly intervalMs: number;
}

export async function* importCandles(
  input: CandleInput,
  market: MarketSpec,
  grid: GridCheck,
  tally: InputTally,
): AsyncGenerator<ImportedRecord> {
  const step = parseDecimal(market.quantity_step);
  for await (const row of readOrderedRows(input, tally)) {
    const candle = atRow(input.path, row.line, () => {
      const t = row.t;
      const open = grid.price(row.fields.open!);
      const high = grid.price(row.fields.high!);
      const low = grid.price(row.fields.low!);
      const close = grid.price(row.fields.close!);
      const volume = grid.volume(row.fields.volume!);
      return { t, open, high, low, close, volume };
    });
    const rising = parseDecimal(candle.close).gte(parseDecimal(candle.open));
    const path = rising
      ? [candle.open, candle.low, candle.high, candle.close]
      : [candle.open, candle.high, candle.low, candle.close];
    const quantity = toWire(roundQuantity(candle.volume.div(4), step));
    if (quantity === '0') tally.skip('volume under four steps: tickers only', row.line);
    for (let index = 0; index < 4; index++) {
      const t = candle.t + Math.floor((index * input.intervalMs) / 4);
      const price = path[index]!;
      yield priceTicker(market, t, row.line, price);
      if (quantity === '0') continue;
      yield importedTrade(market, t, row.line, {
        trade_id: `${row.line}-${index}`,
        price,
        quantity,
        side: takerSide(path, index, rising),
      });
    }
  }
}

/** A move up was bought, a move down sold; the open takes the side of the candle. */
function takerSide(path: readonly string[], index: number, rising: boolean): 'buy' | 'sell' {
  if (index === 0) return rising ? 'buy' : 'sell';
  return parseDecimal(path[index]!).gte(parseDecimal(path[index - 1]!)) ? 'buy' : 'sell';
}
