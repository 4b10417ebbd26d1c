/**
 * Funding live and in replay: a strategy buys once and holds across three funding times on the
 * emulator (virtual time, one-minute funding), recorded; the recorder reads the funding rate and
 * time from the market resource (the ticker frame has none) and writes them on its recorded
 * tickers, and a backtest of the same strategy over it is charged what live was
 * charged, to the cent, shown in the report apart from fees (per market and per trade).
 */
import { join } from 'node:path';
import { map, take } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseDecimal } from '../../../src/core/decimal.ts';
import { DEFAULT_EMULATOR_CONFIG_INPUT } from '../../../src/emulator/index.ts';
import { type FundingPaymentEventReading, parseTimestamp } from '../../../src/protocol/index.ts';
import { resolveBacktestConfig } from '../../../src/replay/backtest/config.ts';
import { runBacktest } from '../../../src/replay/backtest/runner.ts';
import { openReplaySource } from '../../../src/replay/backtest/sources.ts';
import { VirtualClock } from '../../../src/core/clock.ts';
import { openRecording, readRecording } from '../../../src/replay/format/recording.ts';
import type { RecordedEvent } from '../../../src/replay/format/records.ts';
import { parseReplayVenueConfig } from '../../../src/replay/venue/config.ts';
import { ReplayVenue } from '../../../src/replay/venue/replay-venue.ts';
import { parseRiskConfig } from '../../../src/runtime/risk/index.ts';
import {
  defineStrategy,
  marketOrder,
  type OrderIntent,
} from '../../../src/runtime/strategy/index.ts';
import { expectedFunding } from '../../emulator/engine/funding-expected.ts';
import {
  marketMakerDocument,
  RISK,
  recordSession,
  SESSION_START,
  temporaryFolder,
} from './helpers.ts';

const INTERVAL = 60_000;
const QUANTITY = '0.05';

/** Buys QUANTITY BTC-PERP on the first trade and holds it. */
const holder = defineStrategy({
  name: 'funding-holder',
  description: 'buys once and holds',
  params: z.strictObject({}),
  create: (context) =>
    context.trades$('BTC-PERP').pipe(
      take(1),
      map((): OrderIntent =>
        marketOrder({ marketId: 'BTC-PERP', side: 'buy', quantity: QUANTITY }),
      ),
    ),
});

let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let session: string;
let live: FundingPaymentEventReading[];
let records: RecordedEvent[];
let fundingTickers: number;

beforeAll(async () => {
  folder = await temporaryFolder('funding');
  session = join(folder.path, 'session');
  await recordSession(session, {
    durationMs: 3 * INTERVAL + 20_000,
    marketIds: ['BTC-PERP'],
    emulatorConfig: {
      ...DEFAULT_EMULATOR_CONFIG_INPUT,
      simulation: { enabled: true, step_ms: 1000, funding_interval_ms: INTERVAL },
      markets: DEFAULT_EMULATOR_CONFIG_INPUT.markets.map((market) => ({
        ...market,
        simulation: { ...market.simulation, basis_volatility_bps: 20 },
      })),
    },
    trading: {
      strategies: [{ id: 'hold', definition: holder, params: {} }],
      risk: parseRiskConfig(RISK),
    },
  });
  live = [];
  records = [];
  fundingTickers = 0;
  const reader = readRecording(await openRecording(session));
  for await (const batch of reader.batches()) {
    for (const record of batch) {
      records.push(record);
      if (record.k === 'private' && record.d.type === 'funding_payment') live.push(record.d);
      if (record.k === 'ticker' && record.d.funding_time !== undefined) fundingTickers++;
    }
  }
});

afterAll(async () => {
  await folder.remove();
});

describe('funding live and in replay', () => {
  it('charges the held position value × rate at each of three funding times, live', () => {
    expect(fundingTickers).toBeGreaterThan(100);
    expect(live.map((event) => parseTimestamp(event.data.funding_time))).toEqual([
      SESSION_START + INTERVAL,
      SESSION_START + 2 * INTERVAL,
      SESSION_START + 3 * INTERVAL,
    ]);
    for (const event of live) {
      expect(event.data).toMatchObject({ side: 'long', quantity: QUANTITY });
      expect(event.data.amount).toBe(expectedFunding(event));
      expect(parseDecimal(event.data.amount).eq(0)).toBe(false);
    }
  });

  it('charges the same in a backtest over the recording, shown apart from fees', async () => {
    const loaded = await resolveBacktestConfig(marketMakerDocument([session]));
    const source = await openReplaySource(loaded.config.data, { cache: 'off' });
    const { report } = await runBacktest({
      config: loaded.config,
      strategies: [
        { id: 'hold', name: 'funding-holder', definition: holder, rawParams: {}, params: {} },
      ],
      source,
    });
    const liveTotal = live
      .reduce((sum, event) => sum.plus(event.data.amount), parseDecimal('0'))
      .toFixed();
    expect(report.summary.funding).toBe(liveTotal);
    expect(report.markets.find((market) => market.market_id === 'BTC-PERP')?.funding).toBe(
      liveTotal,
    );
    expect(report.trades).toHaveLength(1);
    expect(report.trades[0]).toMatchObject({ status: 'open', funding: liveTotal });
    // Funding is apart from fees, and inside the net PnL: gross = realized + unrealized + funding.
    expect(report.summary.gross_pnl_other).toBe('0');
    expect(
      parseDecimal(report.trades[0]!.net_pnl).eq(
        parseDecimal(report.trades[0]!.gross_pnl)
          .plus(report.trades[0]!.unrealized_pnl)
          .minus(report.trades[0]!.fees)
          .plus(liveTotal),
      ),
    ).toBe(true);
  });

  it('settles each funding time in the replay venue exactly as live did', async () => {
    const recording = await openRecording(session);
    const clock = new VirtualClock(SESSION_START);
    const venue = new ReplayVenue({
      clock,
      markets: recording.manifest.markets,
      bookDepth: 10,
      config: parseReplayVenueConfig({}),
      seed: 1,
    });
    const replayed: FundingPaymentEventReading[] = [];
    venue.exchange.onPrivateEvent((_, event) => {
      if (event.type === 'funding_payment') replayed.push(event);
    });
    let sent: Promise<unknown> | null = null;
    for (const record of records) {
      if (record.t > clock.now()) clock.advanceTo(record.t);
      venue.ingest(record);
      if (sent === null && record.k === 'trade') {
        sent = venue.execution.send(
          venue.execution.prepare({
            endpoint: 'placeOrder',
            body: {
              request_id: 'hold-0001',
              client_order_id: 'hold-0001',
              market_id: 'BTC-PERP',
              side: 'buy',
              type: 'market',
              quantity: QUANTITY,
              leverage: 5,
              max_slippage_percent: '1',
            },
          }),
        );
      }
    }
    await sent;
    venue.close();
    expect(replayed).toHaveLength(3);
    for (const [index, event] of replayed.entries()) {
      const recorded = live[index]!;
      for (const field of [
        'funding_time',
        'funding_rate',
        'mark_price',
        'quantity',
        'position_value',
        'amount',
      ] as const) {
        expect(event.data[field]).toBe(recorded.data[field]);
      }
      expect(event.data.amount).toBe(expectedFunding(event));
    }
  });
});
