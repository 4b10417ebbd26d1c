/**
 * Amend semantics, settled across the runtime: `amend.quantity` is the order's new total size.
 * The strategy's own-order book, the executor and the emulator all read it that way.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseDecimal } from '../../../src/core/decimal.ts';
import {
  intentRequestId,
  type OrderIntent,
  type StampedIntent,
} from '../../../src/runtime/intents.ts';
import { OwnOrders } from '../../../src/runtime/strategy/own-orders.ts';
import { testOrder } from '../../../src/runtime/testing/fixtures.ts';
import { KernelWorld, Probe, probeStrategy, until } from './world.ts';

const PREFIX = 'alpha:e1:';

function stamped(intent: OrderIntent, sequence: number): StampedIntent {
  const requestId = intentRequestId('alpha', 'e1', sequence);
  return Object.freeze({
    strategyId: 'alpha',
    sequence,
    requestId,
    clientOrderId: intent.kind === 'place' || intent.kind === 'amend' ? requestId : null,
    intent,
    emittedAt: 0,
  });
}

const flat = () => parseDecimal('0');

describe('OwnOrders and amend.quantity as the new total', () => {
  function partlyFilled(): OwnOrders {
    const own = new OwnOrders(PREFIX);
    const place = stamped(
      {
        kind: 'place',
        marketId: 'BTC-PERP',
        side: 'buy',
        type: 'limit',
        quantity: '1',
        price: '100',
      },
      1,
    );
    own.recordIntent(place, flat);
    own.applyOrder(
      testOrder({
        order_id: 'o-1',
        market_id: 'BTC-PERP',
        client_order_id: place.requestId,
        quantity: '1',
        filled_quantity: '0.3',
        price: '100',
        status: 'PARTIALLY_FILLED',
      }),
    );
    return own;
  }

  it('the replacement carries the new total less what already filled', () => {
    const own = partlyFilled();
    own.recordIntent(
      stamped({ kind: 'amend', clientOrderId: `${PREFIX}1`, quantity: '0.8', price: '99' }, 2),
      flat,
    );
    const replacement = own.open().find((order) => order.clientOrderId === `${PREFIX}2`);
    expect(replacement?.quantity.toString()).toBe('0.5');
    expect(replacement?.price?.toString()).toBe('99');
    expect(own.open().find((order) => order.clientOrderId === `${PREFIX}1`)?.cancelRequested).toBe(
      true,
    );
  });

  it('an amendment without a quantity keeps the total: the replacement is the remainder', () => {
    const own = partlyFilled();
    own.recordIntent(stamped({ kind: 'amend', clientOrderId: `${PREFIX}1`, price: '99' }, 2), flat);
    const replacement = own.open().find((order) => order.clientOrderId === `${PREFIX}2`);
    expect(replacement?.quantity.toString()).toBe('0.7');
  });

  it('a new total already reached makes no replacement; a refusal withdraws the cancel request', () => {
    const own = partlyFilled();
    const amend = stamped({ kind: 'amend', clientOrderId: `${PREFIX}1`, quantity: '0.3' }, 2);
    own.recordIntent(amend, flat);
    expect(own.open().map((order) => order.clientOrderId)).toEqual([`${PREFIX}1`]);
    expect(own.open()[0]?.cancelRequested).toBe(true);
    own.applyOutcome({ status: 'rejected', intent: amend, code: 'X', message: 'no' });
    expect(own.open()[0]?.cancelRequested).toBe(false);
  });
});

describe('amend against the emulator', () => {
  let world: KernelWorld | undefined;

  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  it('replaces a resting order with one of the new total size and price', async () => {
    world = await KernelWorld.start();
    const probe = new Probe();
    const process = await world.boot({
      strategies: [{ id: 'probe', definition: probeStrategy(probe), params: {} }],
    });
    await process.kernel.start();
    await until(() => probe.context !== null, 'the strategy to start');
    const epoch = process.journal.epoch;
    probe.emit({
      kind: 'place',
      marketId: 'BTC-PERP',
      side: 'buy',
      type: 'limit',
      quantity: '0.020',
      price: '63000',
    });
    const placed = `probe:${epoch}:1`;
    await until(() => probe.outcomesOf(placed).length > 0, 'the placement');
    await world.advance(200, 20);
    probe.emit({ kind: 'amend', clientOrderId: placed, quantity: '0.030', price: '62990' });
    const amended = `probe:${epoch}:2`;
    await until(() => probe.outcomesOf(amended).length > 0, 'the amendment');
    expect(probe.outcomesOf(amended)).toMatchObject([{ status: 'accepted' }]);
    await world.advanceUntil(
      () =>
        probe.context?.openOrders().length === 1 &&
        probe.context.openOrders()[0]?.status === 'OPEN',
      'only the replacement to be open',
    );
    const open = probe.context?.openOrders()[0];
    expect(open?.clientOrderId).toBe(amended);
    expect(open?.quantity.toString()).toBe('0.03');
    expect(open?.price?.toString()).toBe('62990');
    const venueOpen = world.orders().filter((order) => order.status === 'OPEN');
    expect(venueOpen.map((order) => [order.quantity, order.price])).toEqual([['0.03', '62990']]);
  });
});
