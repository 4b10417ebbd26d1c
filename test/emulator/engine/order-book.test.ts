import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BUY, OrderBook, RestingOrder, SELL } from '../../../src/emulator/engine/order-book.ts';

function fillsOf(book: OrderBook<string>, side: 0 | 1, limit: number, steps: number) {
  const fills: string[] = [];
  const left = book.match(side, limit, steps, (maker, filled, price) => {
    fills.push(`${maker.owner}:${filled}@${price}`);
  });
  return { fills, left };
}

describe('OrderBook', () => {
  it('matches in price-time priority at the maker price', () => {
    const book = new OrderBook<string>();
    book.add(new RestingOrder(SELL, 101, 5, 'a-101-first'));
    book.add(new RestingOrder(SELL, 100, 3, 'b-100-first'));
    book.add(new RestingOrder(SELL, 100, 4, 'c-100-second'));
    book.add(new RestingOrder(SELL, 102, 9, 'd-102'));
    const { fills, left } = fillsOf(book, BUY, 101, 10);
    expect(fills).toEqual(['b-100-first:3@100', 'c-100-second:4@100', 'a-101-first:3@101']);
    expect(left).toBe(0);
    expect(book.depth(SELL, 5)).toEqual([
      { priceTicks: 101, steps: 2, orderCount: 1 },
      { priceTicks: 102, steps: 9, orderCount: 1 },
    ]);
  });

  it('leaves the remainder unfilled beyond the limit and fills partially', () => {
    const book = new OrderBook<string>();
    book.add(new RestingOrder(BUY, 99, 2, 'bid-99'));
    book.add(new RestingOrder(BUY, 98, 2, 'bid-98'));
    const { fills, left } = fillsOf(book, SELL, 99, 5);
    expect(fills).toEqual(['bid-99:2@99']);
    expect(left).toBe(3);
    expect(book.bestBid()).toBe(98);
  });

  it('keeps time priority when an order is reduced and drops it when removed', () => {
    const book = new OrderBook<string>();
    const first = new RestingOrder(BUY, 50, 10, 'first');
    const second = new RestingOrder(BUY, 50, 10, 'second');
    book.add(first);
    book.add(second);
    book.reduce(first, 7);
    expect(fillsOf(book, SELL, 50, 4).fills).toEqual(['first:3@50', 'second:1@50']);
    expect(book.remove(second)).toBe(true);
    expect(book.remove(second)).toBe(false);
    expect(book.size).toBe(0);
    expect(book.bestBid()).toBeNull();
  });

  it('lets a listener cancel other resting orders during matching', () => {
    const book = new OrderBook<string>();
    const a = new RestingOrder(SELL, 10, 1, 'a');
    const b = new RestingOrder(SELL, 10, 1, 'b');
    const c = new RestingOrder(SELL, 11, 1, 'c');
    book.add(a);
    book.add(b);
    book.add(c);
    const seen: string[] = [];
    book.match(BUY, 11, 3, (maker) => {
      seen.push(maker.owner);
      if (maker.owner === 'a') book.remove(b);
    });
    expect(seen).toEqual(['a', 'c']);
  });

  it('reports crossing, availability and sweep without executing', () => {
    const book = new OrderBook<string>();
    book.add(new RestingOrder(SELL, 100, 3, 'x'));
    book.add(new RestingOrder(SELL, 102, 3, 'y'));
    expect(book.wouldCross(BUY, 99)).toBe(false);
    expect(book.wouldCross(BUY, 100)).toBe(true);
    expect(book.availableTo(BUY, 101)).toBe(3);
    expect(book.sweep(BUY, 102, 4)).toEqual({ steps: 4, tickSteps: 3 * 100 + 102 });
    expect(book.size).toBe(2);
  });

  it('conserves quantity under random adds, cancels and matches', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            kind: fc.constantFrom('add', 'match', 'cancel'),
            side: fc.constantFrom(BUY, SELL),
            price: fc.integer({ min: 90, max: 110 }),
            steps: fc.integer({ min: 1, max: 20 }),
            pick: fc.nat(),
          }),
          { maxLength: 200 },
        ),
        (commands) => {
          const book = new OrderBook<number>();
          const resting: RestingOrder<number>[] = [];
          let added = 0;
          let matched = 0;
          let cancelled = 0;
          for (const command of commands) {
            if (command.kind === 'add') {
              const left = book.match(command.side, command.price, command.steps, (_m, steps) => {
                matched += steps;
              });
              if (left > 0) {
                const order = new RestingOrder(command.side, command.price, left, added);
                book.add(order);
                resting.push(order);
                added += left;
              }
            } else if (command.kind === 'match') {
              book.match(command.side, command.price, command.steps, (_m, steps) => {
                matched += steps;
              });
            } else if (resting.length > 0) {
              const order = resting[command.pick % resting.length]!;
              if (order.resting) cancelled += order.remaining;
              book.remove(order);
            }
            const bid = book.bestBid();
            const ask = book.bestAsk();
            if (bid !== null && ask !== null) expect(bid).toBeLessThan(ask);
            // Every level listed holds orders, best first, each price once.
            for (const side of [BUY, SELL] as const) {
              const levels = book.depth(side, Number.POSITIVE_INFINITY);
              for (const [index, level] of levels.entries()) {
                expect(level.orderCount).toBeGreaterThan(0);
                expect(book.levelAt(side, level.priceTicks)?.orderCount).toBe(level.orderCount);
                const next = levels[index + 1];
                if (next === undefined) continue;
                if (side === BUY) expect(next.priceTicks).toBeLessThan(level.priceTicks);
                else expect(next.priceTicks).toBeGreaterThan(level.priceTicks);
              }
            }
          }
          let left = 0;
          for (const order of book.orders(BUY)) left += order.remaining;
          for (const order of book.orders(SELL)) left += order.remaining;
          // Every executed step came out of a resting order.
          expect(added).toBe(left + cancelled + matched);
        },
      ),
    );
  });
});
