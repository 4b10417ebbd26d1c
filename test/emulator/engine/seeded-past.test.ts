/**
 * The seeded past next to the live engine: it leaves the live reads alone (what the digest test
 * covers), and the candles endpoint's reads join a bucket the exchange opened in into one candle.
 */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../src/core/clock.ts';
import {
  defaultEmulatorConfig,
  parseEmulatorConfig,
  DEFAULT_EMULATOR_CONFIG_INPUT,
} from '../../../src/emulator/config.ts';
import { Exchange, MemoryStore } from '../../../src/emulator/index.ts';

// 12:30:30 UTC: half an hour into an hour bucket, mid-minute.
const OPENED = Date.UTC(2025, 0, 6, 12, 30, 30);

function open(config = defaultEmulatorConfig()): { exchange: Exchange; clock: VirtualClock } {
  const clock = new VirtualClock(OPENED);
  return { exchange: Exchange.open({ clock, config, store: new MemoryStore() }), clock };
}

describe('seeded past and live data', () => {
  it('leaves the live reads empty at the start: the past is only in the endpoint reads', () => {
    const { exchange } = open();
    expect(exchange.listCandles('BTC-PERP', '1m', 10)).toEqual([]);
    expect(exchange.listTrades('BTC-PERP', 10)).toEqual([]);
    expect(exchange.listCandlesWithPast('BTC-PERP', '1m', 10)).toHaveLength(10);
  });

  it('joins the hour the exchange opened in, and continues with the live minutes', () => {
    const { exchange, clock } = open();
    const pastHour = exchange.listCandlesWithPast('BTC-PERP', '1h', 1)[0]!;
    exchange.start();
    for (let step = 0; step < 240; step++) clock.advanceBy(1000);
    exchange.stop();
    const live = exchange.listCandles('BTC-PERP', '1m', 1000);
    expect(live.length).toBeGreaterThan(2);
    const minutes = exchange.listCandlesWithPast('BTC-PERP', '1m', 1000);
    // The past's minutes end before the opening minute, where the live ones begin.
    const liveStart = minutes.findIndex((candle) => candle.open_time === live[0]!.open_time);
    expect(minutes.slice(liveStart)).toEqual(live);
    expect(Date.parse(minutes[liveStart - 1]!.open_time)).toBeLessThan(
      Date.parse(live[0]!.open_time),
    );
    const [hour] = exchange.listCandlesWithPast('BTC-PERP', '1h', 1);
    const [liveHour] = exchange.listCandles('BTC-PERP', '1h', 1);
    expect(hour!.open_time).toBe(pastHour.open_time);
    expect(hour!.open).toBe(pastHour.open);
    expect(hour!.close).toBe(liveHour!.close);
    expect(Number(hour!.volume)).toBeCloseTo(Number(pastHour.volume) + Number(liveHour!.volume), 9);
    expect(Number(hour!.high)).toBe(Math.max(Number(pastHour.high), Number(liveHour!.high)));
    // Trades: the live ones first, then the past's, all newest first.
    const trades = exchange.listTradesWithPast('BTC-PERP', 500);
    const liveTrades = exchange.listTrades('BTC-PERP', 500);
    expect(trades.slice(0, liveTrades.length)).toEqual(liveTrades);
    const times = trades.map((trade) => Date.parse(trade.occurred_at));
    expect(times.every((time, index) => index === 0 || time <= times[index - 1]!)).toBe(true);
  });

  it('refuses a past longer than 30 days in the config, with its path', () => {
    expect(() =>
      parseEmulatorConfig({
        ...DEFAULT_EMULATOR_CONFIG_INPUT,
        history: { length_minutes: 50_000 },
      }),
    ).toThrow(/history\.length_minutes/);
  });
});
