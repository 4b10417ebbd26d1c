/**
 * `Exchange.holdSubmissions`: a driver (the replay's taker model) may hold a market's user
 * orders accepted but unmatched, then submit them one side at a time (`submitHeld`).
 */
import { describe, expect, it } from 'vitest';
import { BUY, SELL } from '../../../src/emulator/index.ts';
import { marketOrder, openHarness, provideLiquidity, request } from './fixtures.ts';

describe('held submissions', () => {
  it('keeps a held order PENDING until the driver submits its side, then matches it', () => {
    const harness = openHarness();
    const { exchange } = harness;
    exchange.holdSubmissions((marketId) => marketId === 'BTC-PERP');
    provideLiquidity(harness, [{ side: 'sell', price: '64000', quantity: '1' }]);
    const account = exchange.createAccount({ startingBalance: '1000000' });
    const buy = exchange.placeOrder(account, marketOrder({ side: 'buy', quantity: '0.1' }));
    harness.settle();
    // The maker's ask was held too (same market): nothing rests, nothing fills.
    expect(exchange.getOrder(account, buy.order_id).status).toBe('PENDING');
    expect(exchange.heldSubmissionCount('BTC-PERP')).toBe(2);
    // Sells first: the maker's ask rests; the buy still waits.
    expect(exchange.submitHeld('BTC-PERP', SELL)).toBe(1);
    expect(exchange.getOrder(account, buy.order_id).status).toBe('PENDING');
    expect(exchange.submitHeld('BTC-PERP', BUY)).toBe(1);
    const filled = exchange.getOrder(account, buy.order_id);
    expect(filled.status).toBe('FILLED');
    expect(filled.filled_quantity).toBe('0.1');
    expect(exchange.heldSubmissionCount('BTC-PERP')).toBe(0);
  });

  it('drops a held order cancelled meanwhile, and leaves other markets alone', () => {
    const harness = openHarness();
    const { exchange } = harness;
    exchange.holdSubmissions((marketId) => marketId === 'BTC-PERP');
    const account = exchange.createAccount({ startingBalance: '1000000' });
    const held = exchange.placeOrder(account, request({ side: 'buy', price: '63000' }));
    const other = exchange.placeOrder(
      account,
      request({ market_id: 'ETH-PERP', side: 'buy', price: '3000', quantity: '1' }),
    );
    harness.settle();
    expect(exchange.getOrder(account, other.order_id).status).toBe('OPEN');
    exchange.cancelOrder(account, held.order_id, 'cancel-held');
    expect(exchange.heldSubmissionCount('BTC-PERP')).toBe(0);
    expect(exchange.submitHeld('BTC-PERP', BUY)).toBe(0);
    expect(exchange.getOrder(account, held.order_id).status).toBe('CANCELLED');
  });
});
