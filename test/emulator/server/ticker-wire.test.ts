/**
 * The ticker on the wire is exactly the interface's (`{market_id, mark_price, index_price,
 * last_price, data_status}`), funding published and passed or not: the funding rate and time
 * are on the Market resource only (GET /v1/markets/{id}).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VirtualClock } from '../../../src/core/clock.ts';
import {
  DEFAULT_EMULATOR_CONFIG_INPUT,
  type RunningEmulator,
} from '../../../src/emulator/index.ts';
import { Market, TickerSnapshotFrame, TickerUpdateFrame } from '../../../src/protocol/index.ts';
import { publicGet, startTestEmulator, TestHttp, TestSocket } from './helpers.ts';

const INTERFACE_TICKER_KEYS = [
  'data_status',
  'index_price',
  'last_price',
  'mark_price',
  'market_id',
];
const INTERVAL = 60_000;

let emulator: RunningEmulator & { clock: VirtualClock };
const http = new TestHttp();

beforeAll(async () => {
  emulator = await startTestEmulator({
    config: {
      ...DEFAULT_EMULATOR_CONFIG_INPUT,
      simulation: { enabled: true, step_ms: 1000, funding_interval_ms: INTERVAL },
    },
  });
});

afterAll(async () => {
  await http.close();
  await emulator.close();
});

describe('the ticker frame on the wire', () => {
  it('carries exactly the interface fields across a funding time; the market shows funding', async () => {
    const socket = await TestSocket.open(emulator.wsUrl);
    try {
      await socket.nextOfType('challenge');
      await socket.subscribe(['market:BTC-PERP:ticker']);
      await socket.nextOfType('ticker.snapshot');
      const before = Market.parse((await publicGet(http, emulator, '/v1/markets/BTC-PERP')).json);
      expect(before.funding_rate).not.toBeNull();
      const fundingTime = Date.parse(before.next_funding_time ?? '');
      expect(fundingTime).toBeGreaterThan(emulator.clock.now());
      while (emulator.clock.now() <= fundingTime + 1_000) emulator.clock.advanceBy(1_000);
      await socket.barrier();

      const tickers = socket.frames.filter(
        (frame) => frame.type === 'ticker.snapshot' || frame.type === 'ticker.update',
      );
      expect(tickers.length).toBeGreaterThan(10);
      for (const frame of tickers) {
        // Strict schemas: a field beyond the interface's fails the parse.
        if (frame.type === 'ticker.snapshot') TickerSnapshotFrame.parse(frame);
        else TickerUpdateFrame.parse(frame);
        expect(Object.keys(frame.data as object).sort()).toEqual(INTERFACE_TICKER_KEYS);
      }
      const after = Market.parse((await publicGet(http, emulator, '/v1/markets/BTC-PERP')).json);
      expect(Date.parse(after.next_funding_time ?? '')).toBe(fundingTime + INTERVAL);
    } finally {
      socket.close();
    }
  });
});
