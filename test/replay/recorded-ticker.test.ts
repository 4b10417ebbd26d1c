/**
 * The recorded ticker: the wire ticker is the interface's (strict, no funding), the recording's
 * ticker extends it with the recorder's funding, and recordings whose tickers carried the
 * emulator's former `next_funding_time` still read.
 */
import { describe, expect, it } from 'vitest';
import { TickerData } from '../../src/protocol/index.ts';
import {
  RecordedEventSchema,
  tickerRecord,
  wireTickerData,
} from '../../src/replay/format/records.ts';

const WIRE = {
  market_id: 'BTC-PERP',
  mark_price: '64000.5',
  index_price: '64000',
  last_price: '64001',
  data_status: 'live',
} as const;

describe('recorded tickers', () => {
  it('the wire ticker refuses funding: it is not in the interface', () => {
    expect(TickerData.safeParse(WIRE).success).toBe(true);
    const withFunding = TickerData.safeParse({ ...WIRE, funding_rate: '0.0001' });
    expect(withFunding.success).toBe(false);
    expect(withFunding.error?.issues[0]).toMatchObject({ code: 'unrecognized_keys' });
  });

  it("reads the recorder's funding and the older recordings' next_funding_time", () => {
    const recorded = tickerRecord(1, {
      ...WIRE,
      funding_rate: '0.0001',
      funding_time: '2025-01-01T08:00:00.000Z',
    });
    expect(RecordedEventSchema.parse(recorded)).toEqual(recorded);
    const older = tickerRecord(1, {
      ...WIRE,
      funding_rate: '-0.00002',
      next_funding_time: '2025-01-01T08:00:00.000Z',
    });
    expect(RecordedEventSchema.parse(older)).toEqual(older);
    expect(RecordedEventSchema.parse(tickerRecord(1, WIRE))).toEqual(tickerRecord(1, WIRE));
    expect(
      RecordedEventSchema.safeParse({ ...recorded, d: { ...recorded.d, funding: 'x' } }).success,
    ).toBe(false);
    expect(
      RecordedEventSchema.safeParse({ ...recorded, d: { ...recorded.d, funding_time: 'soon' } })
        .success,
    ).toBe(false);
  });

  it('hands strategies the wire ticker, without the funding', () => {
    const data = { ...WIRE, funding_rate: '0.0001', funding_time: '2025-01-01T08:00:00.000Z' };
    expect(wireTickerData(data)).toEqual(WIRE);
    expect(TickerData.parse(wireTickerData(data))).toEqual(WIRE);
  });
});
