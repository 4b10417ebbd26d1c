/**
 * The candle history of a recording (`candles.json` beside the manifest): what the service's
 * `GET /v1/markets/{id}/candles` answered when the recording started, per market and interval.
 * A replay serves it to strategies that ask for warm-up candles (`candleHistory` of a strategy
 * definition), so a backtest starts with the history a live start would have read. Optional:
 * a recording without it replays with no history, and the strategy's log says so.
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { PaperbotError } from '../../core/errors.ts';
import { parseOrRefuse } from '../../core/schema-issues.ts';
import { readUserFile } from '../../core/user-file.ts';

/** Candles of a few markets and intervals: far below this. */
const CANDLE_HISTORY_MAX_BYTES = 256 << 20;
import { Candle, CandleInterval } from '../../protocol/index.ts';

export const CANDLE_HISTORY_FILE = 'candles.json';
export const CANDLE_HISTORY_FORMAT = 'paperbot-candle-history';

export const CandleHistory = z.strictObject({
  format: z.literal(CANDLE_HISTORY_FORMAT),
  version: z.literal(1),
  /** When the history was read (RFC 3339); the candles in it closed by then. */
  recorded_at: z.string(),
  /** market id -> interval -> candles, oldest first. */
  candles: z.record(z.string(), z.partialRecord(CandleInterval, z.array(Candle))),
});
export type CandleHistory = z.infer<typeof CandleHistory>;

/** The candles of one market and interval, or none. */
export function historyCandles(
  history: CandleHistory | null,
  marketId: string,
  interval: CandleInterval,
): readonly Candle[] {
  return history?.candles[marketId]?.[interval] ?? [];
}

/** Writes `candles.json` whole (temporary file, then rename). */
export async function writeCandleHistory(directory: string, history: CandleHistory): Promise<void> {
  const target = join(directory, CANDLE_HISTORY_FILE);
  await mkdir(directory, { recursive: true });
  await writeFile(`${target}.tmp`, `${JSON.stringify(history)}\n`, { mode: 0o644 });
  await rename(`${target}.tmp`, target);
}

/** Reads and checks `candles.json`; null when the recording has none. */
export async function readCandleHistory(directory: string): Promise<CandleHistory | null> {
  const path = join(directory, CANDLE_HISTORY_FILE);
  let text: string;
  try {
    // Opened as every user-named file is: a FIFO or device is refused, not waited on.
    text = (
      await readUserFile(path, {
        what: 'candle history',
        maxBytes: CANDLE_HISTORY_MAX_BYTES,
        codes: { unreadable: 'RECORDING_UNREADABLE' },
      })
    ).toString('utf8');
  } catch (error) {
    if (error instanceof PaperbotError && error.code === 'USER_FILE_NOT_FOUND') return null;
    throw error;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new PaperbotError('RECORDING_INVALID_HISTORY', `${path} is not JSON`, { cause });
  }
  return parseOrRefuse(CandleHistory, value, {
    code: 'RECORDING_INVALID_HISTORY',
    where: path,
    topLabel: '(top)',
  });
}
