import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mergeByTime, type RecordedEvent, tickerRecord } from '../../src/replay/format/index.ts';
import { ticker } from './fixtures.ts';

async function* inBatches(
  records: readonly RecordedEvent[],
  size: number,
): AsyncGenerator<readonly RecordedEvent[]> {
  for (let start = 0; start < records.length; start += size) {
    yield records.slice(start, start + size);
  }
}

async function collect(source: AsyncIterable<readonly RecordedEvent[]>): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = [];
  for await (const batch of source) out.push(...batch);
  return out;
}

/** Source s, record i: market id tells where a record came from. */
function session(source: number, times: readonly number[]): RecordedEvent[] {
  return times.map((t, index) => tickerRecord(t, ticker(`M${source}-${index}`, '1')));
}

describe('mergeByTime', () => {
  it('orders by time, ties by source order, then file order (property)', async () => {
    const sortedTimes = fc
      .array(fc.integer({ min: 0, max: 50 }), { maxLength: 40 })
      .map((times) => [...times].sort((a, b) => a - b));
    await fc.assert(
      fc.asyncProperty(
        fc.array(sortedTimes, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 7 }),
        async (sources, batchSize) => {
          const sessions = sources.map((times, source) => session(source, times));
          const merged = await collect(
            mergeByTime(
              sessions.map((records) => inBatches(records, batchSize)),
              batchSize,
            ),
          );
          // The reference: a stable sort by t of the sources concatenated in order.
          const expected = sessions.flat().sort((a, b) => a.t - b.t);
          expect(merged).toEqual(expected);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('closes every source when the consumer stops early', async () => {
    const closed: number[] = [];
    async function* source(id: number): AsyncGenerator<readonly RecordedEvent[]> {
      try {
        for (let t = 0; t < 100; t++) yield [tickerRecord(t, ticker('BTC-USD', '1'))];
      } finally {
        closed.push(id);
      }
    }
    for await (const _ of mergeByTime([source(1), source(2)], 1)) break;
    expect(closed.sort()).toEqual([1, 2]);
  });
});
