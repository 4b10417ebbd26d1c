/**
 * The emulator's seeded past through the real client on a loopback port: one-minute candles and
 * trades before the emulator started, the same for the same seed, ending at the market's initial
 * price, as long as configured, and none for a market nobody trades on.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_EMULATOR_CONFIG_INPUT } from '../../src/emulator/config.ts';
import type { Candle } from '../../src/protocol/index.ts';
import { Environment } from './environment.ts';
import { START_MS } from './helpers.ts';

const environments: Environment[] = [];
afterEach(async () => {
  await Promise.all(environments.splice(0).map((environment) => environment.close()));
});

async function start(seed: number, historyMinutes?: number): Promise<Environment> {
  const config =
    historyMinutes === undefined
      ? DEFAULT_EMULATOR_CONFIG_INPUT
      : { ...DEFAULT_EMULATOR_CONFIG_INPUT, history: { length_minutes: historyMinutes } };
  const environment = await Environment.start({
    emulator: { seed, config: { ...config, seed } },
  });
  environments.push(environment);
  return environment;
}

const openTimes = (candles: readonly Candle[]) => candles.map((c) => Date.parse(c.open_time));

describe('the emulator seeded past', () => {
  it('serves 1000 one-minute candles before the start, ending at the initial price', async () => {
    const { rest } = await start(7);
    const candles = await rest.listCandles(
      { market_id: 'BTC-PERP' },
      { interval: '1m', limit: 1000 },
    );
    expect(candles).toHaveLength(1000);
    const times = openTimes(candles);
    // Every minute of the last 1000 before the start, oldest first, none at or after it.
    expect(times.at(-1)).toBe(START_MS - 60_000);
    expect(times.every((time, index) => index === 0 || time - times[index - 1]! === 60_000)).toBe(
      true,
    );
    expect(candles.at(-1)!.close).toBe('64000');
    for (const candle of candles) {
      expect(Number(candle.low)).toBeLessThanOrEqual(Math.min(+candle.open, +candle.close));
      expect(Number(candle.high)).toBeGreaterThanOrEqual(Math.max(+candle.open, +candle.close));
      expect(Number(candle.volume)).toBeGreaterThan(0);
    }
  });

  it('serves trades before the start, newest first, that add up to the last candle', async () => {
    const { rest } = await start(7);
    const trades = await rest.listTrades({ market_id: 'BTC-PERP' }, { limit: 500 });
    expect(trades).toHaveLength(500);
    const times = trades.map((trade) => Date.parse(trade.occurred_at));
    expect(times.every((time, index) => index === 0 || time <= times[index - 1]!)).toBe(true);
    expect(times[0]!).toBeLessThan(START_MS);
    expect(new Set(trades.map((trade) => trade.trade_id)).size).toBe(500);
    expect(trades[0]!.price).toBe('64000');
    const [last] = await rest.listCandles({ market_id: 'BTC-PERP' }, { interval: '1m', limit: 1 });
    const inLastMinute = trades.filter(
      (trade) => Date.parse(trade.occurred_at) >= Date.parse(last!.open_time),
    );
    const volume = inLastMinute.reduce((sum, trade) => sum + Number(trade.quantity), 0);
    expect(volume).toBeCloseTo(Number(last!.volume), 9);
    expect(inLastMinute.at(-1)!.price).toBe(last!.open);
  });

  it('aggregates the one-minute past into longer intervals', async () => {
    const { rest } = await start(7);
    const minutes = await rest.listCandles(
      { market_id: 'ETH-PERP' },
      { interval: '1m', limit: 120 },
    );
    const [previousHour, lastHour] = await rest.listCandles(
      { market_id: 'ETH-PERP' },
      { interval: '1h', limit: 2 },
    );
    const hourStart = Date.parse(lastHour!.open_time);
    expect(hourStart).toBe(START_MS - 3_600_000);
    expect(Date.parse(previousHour!.open_time)).toBe(hourStart - 3_600_000);
    const inHour = minutes.filter((candle) => Date.parse(candle.open_time) >= hourStart);
    expect(inHour).toHaveLength(60);
    expect(lastHour!.open).toBe(inHour[0]!.open);
    expect(lastHour!.close).toBe(inHour.at(-1)!.close);
    expect(Number(lastHour!.high)).toBe(Math.max(...inHour.map((candle) => +candle.high)));
    expect(Number(lastHour!.low)).toBe(Math.min(...inHour.map((candle) => +candle.low)));
  });

  it('is the same for the same seed and differs for another', async () => {
    const read = async (environment: Environment) =>
      environment.rest.listCandles({ market_id: 'BTC-PERP' }, { interval: '5m', limit: 50 });
    const first = await read(await start(7));
    const again = await read(await start(7));
    const other = await read(await start(8));
    expect(again).toEqual(first);
    expect(other).not.toEqual(first);
  });

  it('is as long as configured, and absent at 0 or where nobody trades', async () => {
    const short = await start(7, 30);
    expect(
      await short.rest.listCandles({ market_id: 'BTC-PERP' }, { interval: '1m', limit: 1000 }),
    ).toHaveLength(30);
    const none = await start(7, 0);
    expect(
      await none.rest.listCandles({ market_id: 'BTC-PERP' }, { interval: '1m', limit: 1000 }),
    ).toEqual([]);
    expect(await none.rest.listTrades({ market_id: 'BTC-PERP' }, { limit: 500 })).toEqual([]);
    const full = await start(7);
    expect(
      await full.rest.listCandles({ market_id: 'SOL-PERP' }, { interval: '1m', limit: 1000 }),
    ).toEqual([]);
  });
});
