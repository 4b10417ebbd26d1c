import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { privateRecord } from '../../src/replay/format/index.ts';
import {
  type ComparableFill,
  comparableFillsFromRecords,
  compareFills,
  DIVERGENCE_SCHEMA,
  divergenceToJson,
  formatDivergenceTable,
} from '../../src/replay/report/index.ts';
import { fillEvent, START_MS } from './fixtures.ts';

function comparable(overrides: Partial<ComparableFill> & { fill_id: string }): ComparableFill {
  return {
    market_id: 'BTC-USD',
    side: 'buy',
    price: '100',
    quantity: '1',
    fee: '0.05',
    t: START_MS,
    order_id: null,
    client_order_id: 'grid:e1:1',
    request_id: null,
    ...overrides,
  };
}

describe('compareFills', () => {
  it('matches by order key and sequence, and lists every kind of difference', () => {
    const live = [
      comparable({ fill_id: 'l1', t: START_MS }),
      comparable({ fill_id: 'l2', t: START_MS + 10, quantity: '0.5' }),
      comparable({
        fill_id: 'l3',
        client_order_id: 'grid:e1:2',
        side: 'sell',
        price: '101',
      }),
      comparable({ fill_id: 'l4', client_order_id: 'grid:e1:3' }),
    ];
    const backtest = [
      comparable({ fill_id: 'b1', t: START_MS }),
      comparable({ fill_id: 'b2', t: START_MS + 250, quantity: '0.4' }),
      comparable({
        fill_id: 'b3',
        client_order_id: 'grid:e1:2',
        side: 'sell',
        price: '100.5',
      }),
      comparable({ fill_id: 'b5', client_order_id: 'grid:e1:9', fee: '0.07' }),
    ];
    const report = compareFills(live, backtest);
    expect(report.schema).toBe(DIVERGENCE_SCHEMA);
    expect(report.summary).toEqual({
      live_fills: 4,
      backtest_fills: 4,
      matched: 3,
      identical: 1,
      price_differences: 1,
      quantity_differences: 1,
      fee_differences: 0,
      timing_differences: 1,
      missing_in_backtest: 1,
      missing_in_live: 1,
      matched_without_order_key: 0,
      live_quantity: '3.5',
      backtest_quantity: '3.4',
      max_absolute_time_difference_ms: 240,
    });
    const second = report.matched.find((pair) => pair.live.fill_id === 'l2')!;
    expect(second).toMatchObject({
      backtest: { fill_id: 'b2' },
      sequence: 2,
      quantity_difference: '-0.1',
      time_difference_ms: 240,
      differs: ['quantity', 'time'],
    });
    const sell = report.matched.find((pair) => pair.side === 'sell')!;
    expect(sell).toMatchObject({
      price_difference: '-0.5',
      differs: ['price'],
    });
    expect(report.missing_in_backtest.map((fill) => fill.fill_id)).toEqual(['l4']);
    expect(report.missing_in_live.map((fill) => fill.fill_id)).toEqual(['b5']);
  });

  it('applies tolerances', () => {
    const report = compareFills(
      [comparable({ fill_id: 'l', price: '100', t: START_MS })],
      [comparable({ fill_id: 'b', price: '100.01', t: START_MS + 40 })],
      { priceTolerance: '0.01', timeToleranceMs: 50 },
    );
    expect(report.summary.identical).toBe(1);
    expect(report.tolerances).toEqual({
      price: '0.01',
      quantity: '0',
      fee: '0',
      time_ms: 50,
    });
  });

  it('uses a custom order key, for runs whose ids differ by journal epoch', () => {
    const dropEpoch = (fill: ComparableFill) =>
      fill.client_order_id?.replace(/^([^:]+):[^:]+:/, '$1:') ?? null;
    const report = compareFills(
      [comparable({ fill_id: 'l', client_order_id: 'grid:live:7' })],
      [comparable({ fill_id: 'b', client_order_id: 'grid:backtest:7' })],
      { orderKey: dropEpoch },
    );
    expect(report.summary.matched).toBe(1);
    expect(report.matched[0]!.order_key).toBe('grid:7');
  });

  it('matches fills without ids by sequence within market and side, and says so', () => {
    const report = compareFills(
      [comparable({ fill_id: 'l', client_order_id: null })],
      [comparable({ fill_id: 'b', client_order_id: null })],
    );
    expect(report.summary).toMatchObject({
      matched: 1,
      matched_without_order_key: 1,
    });
  });

  it('compares a run with itself as identical, and accounts for every fill (property)', () => {
    const fills = fc.array(
      fc.record({
        fill_id: fc.uuid(),
        market_id: fc.constantFrom('BTC-USD', 'ETH-USD'),
        side: fc.constantFrom('buy', 'sell'),
        price: fc.integer({ min: 1, max: 9 }).map(String),
        quantity: fc.integer({ min: 1, max: 9 }).map(String),
        fee: fc.constant('0'),
        t: fc.integer({ min: 0, max: 100 }),
        order_id: fc.constant(null),
        client_order_id: fc.option(fc.constantFrom('a', 'b', 'c'), {
          nil: null,
        }),
        request_id: fc.constant(null),
      }),
      { maxLength: 30 },
    );
    fc.assert(
      fc.property(fills, fills, (live, backtest) => {
        const self = compareFills(live, live);
        expect(self.summary.identical).toBe(live.length);
        const report = compareFills(live, backtest);
        expect(report.summary.matched + report.summary.missing_in_backtest).toBe(live.length);
        expect(report.summary.matched + report.summary.missing_in_live).toBe(backtest.length);
        const used = new Set(report.matched.map((pair) => pair.backtest.fill_id));
        expect(used.size).toBe(report.matched.length);
      }),
      { numRuns: 200 },
    );
  });
});

describe('divergence output', () => {
  const report = compareFills(
    [
      comparable({ fill_id: 'l1' }),
      comparable({ fill_id: 'l2', client_order_id: 'grid:e1:2', price: '99' }),
    ],
    [comparable({ fill_id: 'b1', price: '100.5' })],
  );

  it('prints a summary and one row per difference, in time order', () => {
    const text = formatDivergenceTable(report);
    const lines = text.split('\n');
    expect(lines[0]).toBe('live fills 2, backtest fills 1, matched 1 (identical 0)');
    expect(lines[1]).toBe('differences: price 1, quantity 0, fee 0, timing 0');
    expect(lines[2]).toBe('missing in backtest 1, missing in live 0');
    expect(lines[4]).toMatch(/^status\s+market\s+side\s+order\s+seq/);
    expect(lines.slice(6).map((line) => line.split(/\s{2,}/)[0])).toEqual([
      'differs: price',
      'missing in backtest',
    ]);
    expect(formatDivergenceTable(compareFills([], []))).toContain('no differences');
  });

  it('writes stable JSON', () => {
    const json = divergenceToJson(report);
    expect(JSON.parse(json)).toEqual(report);
    expect(
      divergenceToJson(
        compareFills(
          [
            comparable({ fill_id: 'l1' }),
            comparable({
              fill_id: 'l2',
              client_order_id: 'grid:e1:2',
              price: '99',
            }),
          ],
          [comparable({ fill_id: 'b1', price: '100.5' })],
        ),
      ),
    ).toBe(json);
  });

  it('takes fills from recorded private events once each, with the runtime ids of their order', () => {
    const event = fillEvent(1, 'BTC-USD', '100', START_MS);
    const records = [privateRecord(START_MS, event), privateRecord(START_MS + 5, event)];
    const fills = comparableFillsFromRecords(records, (orderId) =>
      orderId === 'ord-1' ? { clientOrderId: 'grid:e1:1', requestId: 'grid:e1:1' } : undefined,
    );
    expect(fills).toEqual([
      {
        fill_id: 'fill-1',
        market_id: 'BTC-USD',
        side: 'buy',
        price: '100',
        quantity: '0.01',
        fee: '0.325',
        t: START_MS,
        order_id: 'ord-1',
        client_order_id: 'grid:e1:1',
        request_id: 'grid:e1:1',
      },
    ]);
  });
});
