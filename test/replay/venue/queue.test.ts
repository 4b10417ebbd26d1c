import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BUY, SELL } from '../../../src/emulator/engine/order-book.ts';
import { displayedAt, MarketQueues } from '../../../src/replay/venue/queue.ts';

describe('displayed quantity at a price', () => {
  const bids = {
    levels: [
      { priceTicks: 100, steps: 5 },
      { priceTicks: 98, steps: 7 },
    ],
    complete: false,
  };

  it('is the level quantity, 0 inside the shown range, unknown beyond a trimmed side', () => {
    expect(displayedAt(bids, BUY, 98)).toBe(7);
    expect(displayedAt(bids, BUY, 101)).toBe(0);
    expect(displayedAt(bids, BUY, 99)).toBe(0);
    expect(displayedAt(bids, BUY, 97)).toBe(Number.POSITIVE_INFINITY);
    expect(displayedAt({ ...bids, complete: true }, BUY, 97)).toBe(0);
    expect(displayedAt(null, BUY, 100)).toBe(Number.POSITIVE_INFINITY);
  });

  it('reads asks from the lowest price up', () => {
    const asks = { levels: [{ priceTicks: 101, steps: 3 }], complete: false };
    expect(displayedAt(asks, SELL, 101)).toBe(3);
    expect(displayedAt(asks, SELL, 100)).toBe(0);
    expect(displayedAt(asks, SELL, 102)).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('trade allocation', () => {
  it('fills orders through the price first, then the queue at the price, best first', () => {
    const queues = new MarketQueues(true);
    queues.add('a', BUY, 101, 2, 0);
    queues.add('b', BUY, 100, 5, 3);
    queues.add('c', BUY, 99, 5, 0);
    expect(queues.allocate(SELL, 100, 6)).toEqual({ steps: 3, limitTicks: 100 });
    // 2 to the order at 101; 4 reach 100, 3 of them the queue, 1 the order.
    expect(queues.get('b')!.queueAheadSteps).toBe(0);
    expect(queues.get('c')!.queueAheadSteps).toBe(0);
  });

  it('ignores trades on the other side and unknown queues at the price', () => {
    const queues = new MarketQueues(true);
    queues.add('a', SELL, 105, 2, Number.POSITIVE_INFINITY);
    expect(queues.allocate(SELL, 100, 10)).toBeNull();
    expect(queues.allocate(BUY, 105, 10)).toBeNull();
    expect(queues.allocate(BUY, 106, 10)).toEqual({ steps: 2, limitTicks: 105 });
  });

  const orderArbitrary = fc.record({
    side: fc.constantFrom(BUY, SELL),
    price: fc.integer({ min: 90, max: 110 }),
    remaining: fc.integer({ min: 1, max: 20 }),
    ahead: fc.oneof(fc.integer({ min: 0, max: 30 }), fc.constant(Number.POSITIVE_INFINITY)),
  });

  it('never allocates more than the trade or the reachable orders hold, nor lengthens a queue', () => {
    fc.assert(
      fc.property(
        fc.array(orderArbitrary, { maxLength: 12 }),
        fc.constantFrom(BUY, SELL),
        fc.integer({ min: 90, max: 110 }),
        fc.integer({ min: 1, max: 60 }),
        fc.boolean(),
        (orders, aggressor, price, steps, queuePosition) => {
          const queues = new MarketQueues(queuePosition);
          orders.forEach((order, index) =>
            queues.add(`o${index}`, order.side, order.price, order.remaining, order.ahead),
          );
          const hit = aggressor === SELL ? BUY : SELL;
          const reachable = queues
            .orders(hit)
            .filter((order) =>
              hit === BUY ? order.priceTicks >= price : order.priceTicks <= price,
            );
          const before = new Map(
            queues.orders(hit).map((order) => [order.orderId, order.queueAheadSteps]),
          );
          const allocation = queues.allocate(aggressor, price, steps);
          const total = allocation?.steps ?? 0;
          expect(total).toBeLessThanOrEqual(steps);
          expect(total).toBeLessThanOrEqual(
            reachable.reduce((sum, order) => sum + order.remainingSteps, 0),
          );
          for (const order of queues.orders(hit)) {
            expect(order.queueAheadSteps).toBeLessThanOrEqual(before.get(order.orderId)!);
          }
          if (allocation !== null) {
            // The limit is a reachable price: a synthetic order limited there reaches only them.
            expect(reachable.some((order) => order.priceTicks === allocation.limitTicks)).toBe(
              true,
            );
          }
          if (!queuePosition) {
            expect(total).toBe(
              Math.min(
                steps,
                reachable.reduce((sum, order) => sum + order.remainingSteps, 0),
              ),
            );
          }
        },
      ),
    );
  });

  it('keeps the book order best price first, then time', () => {
    fc.assert(
      fc.property(fc.array(orderArbitrary, { maxLength: 15 }), (orders) => {
        const queues = new MarketQueues(true);
        orders.forEach((order, index) =>
          queues.add(`o${index}`, order.side, order.price, order.remaining, order.ahead),
        );
        for (const side of [BUY, SELL] as const) {
          const list = queues.orders(side);
          for (let index = 1; index < list.length; index++) {
            const previous = list[index - 1]!;
            const current = list[index]!;
            const better =
              side === BUY
                ? previous.priceTicks > current.priceTicks
                : previous.priceTicks < current.priceTicks;
            expect(
              better ||
                (previous.priceTicks === current.priceTicks &&
                  previous.priority < current.priority),
            ).toBe(true);
          }
        }
      }),
    );
  });
});
