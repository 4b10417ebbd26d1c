import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDecimal, toWire, ZERO } from '../../../src/core/decimal.ts';
import {
  openOrderView,
  riskMarketFromWire,
  riskOpenOrdersFromWire,
  riskPositionsFromWire,
} from '../../../src/runtime/risk/view.ts';

const wireMarket = {
  market_id: 'BTC-PERP',
  price_tick: '0.5',
  quantity_step: '0.001',
  minimum_quantity: '0.001',
  minimum_notional: null,
  maximum_leverage: 50,
  mark_price: '60000.5',
  data_status: 'live',
  observed_at: '2025-01-15T12:00:00.250Z',
};

describe('wire builders', () => {
  it('reads a market, parsing its decimals and time', () => {
    const market = riskMarketFromWire(wireMarket);
    expect(toWire(market.priceTick!)).toBe('0.5');
    expect(market.minimumNotional).toBeNull();
    expect(toWire(market.markPrice!)).toBe('60000.5');
    expect(market.observedAt).toBe(Date.UTC(2025, 0, 15, 12, 0, 0, 250));
    expect(market.dataStatus).toBe('live');
    expect(riskMarketFromWire({ ...wireMarket, data_status: 'odd' }).dataStatus).toBe(
      'unavailable',
    );
  });

  it('signs positions by side and nets them per market', () => {
    const positions = riskPositionsFromWire([
      { market_id: 'BTC-PERP', side: 'long', quantity: '0.5', entry_price: '60000' },
      { market_id: 'BTC-PERP', side: 'short', quantity: '0.2', entry_price: '61000' },
      { market_id: 'ETH-PERP', side: 'short', quantity: '3', entry_price: '3000' },
    ]);
    expect(toWire(positions['BTC-PERP']!.quantity)).toBe('0.3');
    expect(toWire(positions['ETH-PERP']!.quantity)).toBe('-3');
  });

  it('keeps orders that may still trade, with what is left of them', () => {
    const order = {
      client_order_id: 'a',
      market_id: 'BTC-PERP',
      side: 'buy',
      price: '59000',
      quantity: '1',
      filled_quantity: '0.25',
      reduce_only: false,
      status: 'PARTIALLY_FILLED',
    };
    const open = riskOpenOrdersFromWire([
      order,
      { ...order, client_order_id: 'b', status: 'FILLED' },
      { ...order, client_order_id: 'c', status: 'UNKNOWN', price: null, filled_quantity: '0' },
      { ...order, client_order_id: 'd', status: 'CANCELLED' },
    ]);
    expect(open.map((one) => [one.clientOrderId, toWire(one.remainingQuantity)])).toEqual([
      ['a', '0.75'],
      ['c', '1'],
    ]);
    expect(open[1]!.price).toBeNull();
  });

  it('leaves as remaining what big.js leaves: quantity less filled, never below zero', () => {
    const amount = fc.constantFrom('0', '0.0', '-0', '0.001', '0.0010', '1', '2.5', '-1', '7.25');
    fc.assert(
      fc.property(fc.option(amount, { nil: null }), amount, (quantity, filled) => {
        const view = openOrderView({
          client_order_id: 'a',
          market_id: 'BTC-PERP',
          side: 'sell',
          price: '100',
          quantity,
          filled_quantity: filled,
          reduce_only: false,
          status: 'OPEN',
        });
        // The rule as it was: the subtraction always done in big.js.
        const left = parseDecimal(quantity ?? '0').minus(parseDecimal(filled));
        const expected = left.lt(ZERO) ? ZERO : left;
        expect(view).not.toBeNull();
        expect(view!.remainingQuantity.eq(expected)).toBe(true);
        expect(toWire(view!.remainingQuantity)).toBe(toWire(expected));
      }),
      { numRuns: 300 },
    );
  });
});
