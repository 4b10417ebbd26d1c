import { describe, expect, it } from 'vitest';
import { Account, Position } from '../../../src/protocol/index.ts';
import { type Harness, openHarness, request } from './fixtures.ts';

/** The account trades `quantity` at `price` against a fresh resting order of a maker. */
function tradeAt(
  harness: Harness,
  account: string,
  side: 'buy' | 'sell',
  price: string,
  quantity: string,
  fields: Record<string, unknown> = {},
): void {
  const maker = harness.exchange.createAccount({ startingBalance: '100000000' });
  harness.exchange.placeOrder(
    maker,
    request({ side: side === 'buy' ? 'sell' : 'buy', price, quantity, ...fields }),
  );
  harness.settle();
  harness.exchange.placeOrder(
    account,
    request({ side, price, quantity, time_in_force: 'IOC', ...fields }),
  );
  harness.settle();
}

function onlyPosition(harness: Harness, account: string): Position | undefined {
  const data = harness.exchange.listPositions(account, { limit: 10 }).data;
  expect(data.length).toBeLessThanOrEqual(1);
  return data[0] === undefined ? undefined : Position.parse(data[0]);
}

/** Mark (and index) price in BTC-PERP ticks of 0.5. */
function setMark(harness: Harness, price: number): void {
  harness.exchange.setReferencePrices('BTC-PERP', price * 2, price * 2);
}

describe('positions and realized PnL', () => {
  it('opens, increases, reduces, flips and closes with average entry and realized PnL', () => {
    const harness = openHarness();
    const account = harness.exchange.createAccount({ startingBalance: '100000' });
    tradeAt(harness, account, 'buy', '64000', '0.1');
    expect(onlyPosition(harness, account)).toMatchObject({
      side: 'long',
      quantity: '0.1',
      entry_price: '64000',
    });
    tradeAt(harness, account, 'buy', '65000', '0.1');
    expect(onlyPosition(harness, account)).toMatchObject({ quantity: '0.2', entry_price: '64500' });
    const idBefore = onlyPosition(harness, account)!.position_id;
    tradeAt(harness, account, 'sell', '66000', '0.1'); // +150 realized
    expect(onlyPosition(harness, account)).toMatchObject({
      side: 'long',
      quantity: '0.1',
      entry_price: '64500',
      position_id: idBefore,
    });
    tradeAt(harness, account, 'sell', '63000', '0.3'); // −150 realized, flips short 0.2
    const short = onlyPosition(harness, account)!;
    expect(short).toMatchObject({ side: 'short', quantity: '0.2', entry_price: '63000' });
    expect(short.position_id).not.toBe(idBefore);
    tradeAt(harness, account, 'buy', '62000', '0.2'); // +200 realized
    expect(onlyPosition(harness, account)).toBeUndefined();
    // fees: 3.2 + 3.25 + 3.3 + 9.45 + 6.2 = 25.4; realized: 150 − 150 + 200 = 200
    expect(Account.parse(harness.exchange.getAccount(account))).toMatchObject({
      total_equity: '100174.6',
      available: '100174.6',
      in_positions: '0',
      unrealized_pnl: '0',
      settlement_asset: 'pUSDC',
      trading_mode: 'paper',
    });
  });
});

describe('margin', () => {
  it('holds isolated margin, reports available, unrealized PnL and the liquidation price', () => {
    const harness = openHarness();
    const account = harness.exchange.createAccount({ startingBalance: '10000' });
    tradeAt(harness, account, 'buy', '64000', '0.1');
    expect(harness.exchange.getAccount(account)).toMatchObject({
      total_equity: '9996.8',
      in_positions: '640',
      available: '9356.8',
    });
    // (6400 − 640) / (0.1 × 0.995) = 57889.447…: the first tick at or below it
    expect(onlyPosition(harness, account)).toMatchObject({
      margin_mode: 'isolated',
      leverage: '10',
      liquidation_price: '57889',
      mark_price: '64000',
      position_value: '6400',
      unrealized_pnl: '0',
    });
    setMark(harness, 63000);
    // isolated losses are borne by the isolated margin: available does not move
    expect(harness.exchange.getAccount(account)).toMatchObject({
      total_equity: '9896.8',
      unrealized_pnl: '-100',
      available: '9356.8',
    });
  });

  it('backs cross positions with the whole account and counts their losses against available', () => {
    const harness = openHarness();
    const account = harness.exchange.createAccount({ startingBalance: '1000' });
    tradeAt(harness, account, 'buy', '64000', '0.1', { margin_mode: 'cross' });
    // collateral 996.8: (6400 − 996.8) / (0.1 × 0.995) = 54303.517…, down to 54303.5
    expect(onlyPosition(harness, account)).toMatchObject({
      margin_mode: 'cross',
      liquidation_price: '54303.5',
    });
    expect(harness.exchange.getAccount(account)).toMatchObject({ available: '356.8' });
    setMark(harness, 63000);
    expect(harness.exchange.getAccount(account)).toMatchObject({
      available: '256.8',
      unrealized_pnl: '-100',
    });
    // the equity alone (a replay's equity samples) is the account's total_equity
    expect(harness.exchange.totalEquity(account)).toBe('896.8');
    expect(harness.exchange.totalEquity(account)).toBe(
      harness.exchange.getAccount(account).total_equity,
    );
    // a rich account's cross position has no liquidation price
    const rich = harness.exchange.createAccount({ startingBalance: '1000000' });
    tradeAt(harness, rich, 'buy', '63000', '0.1', { margin_mode: 'cross' });
    expect(onlyPosition(harness, rich)!.liquidation_price).toBeNull();
  });

  it('liquidates an isolated position at the mark when it crosses the liquidation price', () => {
    const harness = openHarness();
    const { exchange } = harness;
    const account = exchange.createAccount({ startingBalance: '10000' });
    tradeAt(harness, account, 'buy', '64000', '0.1', { leverage: 50 });
    const position = onlyPosition(harness, account)!;
    // (6400 − 128) / (0.1 × 0.995) = 63035.17…, down to 63035
    expect(position.liquidation_price).toBe('63035');
    const resting = exchange.placeOrder(account, request({ price: '60000', quantity: '0.001' }));
    harness.settle();
    setMark(harness, 63035.5);
    expect(onlyPosition(harness, account)).toBeDefined();
    const before = harness.eventsOf(account).length;
    setMark(harness, 63035);
    expect(onlyPosition(harness, account)).toBeUndefined();
    const events = harness.eventsOf(account).slice(before);
    expect(events.map((event) => event.type)).toEqual([
      'authoritative_status',
      'liquidation',
      'fill',
      'position',
      'account',
    ]);
    expect(events[1]).toMatchObject({
      channel: 'risk',
      data: { position_id: position.position_id, price: '63035', quantity: '0.1' },
    });
    expect(events[2]).toMatchObject({ data: { order_id: null, side: 'sell', fee: '0' } });
    expect(exchange.getOrder(account, resting.order_id)).toMatchObject({
      status: 'CANCELLED',
      error: { code: 'LIQUIDATION' },
    });
    // loss (63035 − 64000) × 0.1 = −96.5 on a wallet of 9996.8
    expect(exchange.getAccount(account)).toMatchObject({ total_equity: '9900.3' });
  });

  it('caps an isolated loss at the margin when the mark gaps through', () => {
    const harness = openHarness();
    const account = harness.exchange.createAccount({ startingBalance: '10000' });
    tradeAt(harness, account, 'buy', '64000', '0.1', { leverage: 50 });
    setMark(harness, 50000);
    expect(harness.exchange.getAccount(account)).toMatchObject({ total_equity: '9868.8' });
  });

  it('liquidates cross positions together and never leaves a negative balance', () => {
    const harness = openHarness();
    const account = harness.exchange.createAccount({ startingBalance: '200' });
    tradeAt(harness, account, 'buy', '64000', '0.02', { margin_mode: 'cross' });
    expect(onlyPosition(harness, account)!.liquidation_price).toBe('54303.5');
    setMark(harness, 54000);
    expect(onlyPosition(harness, account)).toBeUndefined();
    expect(harness.exchange.getAccount(account)).toMatchObject({
      total_equity: '0',
      available: '0',
    });
  });
});
