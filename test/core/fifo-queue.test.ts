/**
 * The FIFO queue of the bounded "forget the oldest" memories: items leave in the order they
 * came, across its compactions, and `keep` filters in order.
 */
import { describe, expect, it } from 'vitest';
import { FifoQueue } from '../../src/core/fifo-queue.ts';

describe('FIFO queue', () => {
  it('hands items back in the order they came, across compactions', () => {
    const queue = new FifoQueue<number>();
    let next = 0;
    let expected = 0;
    for (let round = 0; round < 50; round++) {
      for (let index = 0; index < 100; index++) queue.push(next++);
      for (let index = 0; index < 90; index++) expect(queue.shift()).toBe(expected++);
    }
    expect(queue.size).toBe(next - expected);
    while (queue.size > 0) expect(queue.shift()).toBe(expected++);
    expect(queue.shift()).toBeUndefined();
    expect(expected).toBe(5_000);
  });

  it('starts over when emptied, one or two items at a time as the replay venue uses it', () => {
    const queue = new FifoQueue<{ readonly id: number }>();
    for (let id = 0; id < 3_000; id += 2) {
      queue.push({ id });
      queue.push({ id: id + 1 });
      expect(queue.shift()).toEqual({ id });
      expect(queue.size).toBe(1);
      expect(queue.shift()).toEqual({ id: id + 1 });
      expect(queue.size).toBe(0);
      expect(queue.shift()).toBeUndefined();
    }
    queue.push({ id: -1 });
    queue.keep(() => true);
    expect(queue.shift()).toEqual({ id: -1 });
  });

  it('refills an emptied queue, after a burst and after keep, in order', () => {
    const queue = new FifoQueue<number>();
    for (let index = 0; index < 5_000; index++) queue.push(index);
    for (let index = 0; index < 5_000; index++) expect(queue.shift()).toBe(index);
    expect(queue.size).toBe(0);
    for (let round = 0; round < 3; round++) {
      queue.push(round);
      queue.push(round + 10);
      queue.keep((item) => item >= 10);
      queue.push(round + 20);
      expect(queue.size).toBe(2);
      expect(queue.shift()).toBe(round + 10);
      expect(queue.shift()).toBe(round + 20);
      expect(queue.shift()).toBeUndefined();
    }
  });

  it('keeps only the items accepted, in order', () => {
    const queue = new FifoQueue<number>();
    for (let index = 0; index < 10; index++) queue.push(index);
    queue.shift();
    queue.keep((item) => item % 3 !== 0);
    const left: number[] = [];
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) left.push(item);
    expect(left).toEqual([1, 2, 4, 5, 7, 8]);
  });
});
