import { describe, expect, it } from 'vitest';
import { IdempotencyWindow } from '../../../src/emulator/index.ts';

const record = (requestId: string, price: string) => ({
  request_id: requestId,
  body: { order_id: `o-${requestId}`, price, legs: [{ price }] },
});

describe('IdempotencyWindow', () => {
  it('keeps the last records only, oldest forgotten first; an update keeps its place', () => {
    const window = new IdempotencyWindow(2);
    window.saveIdempotency('acc', 'a', record('a', '1'));
    window.saveIdempotency('acc', 'b', record('b', '2'));
    window.saveIdempotency('acc', 'a', record('a', '3'));
    expect(window.size).toBe(2);
    window.saveIdempotency('acc', 'c', record('c', '4'));
    expect(window.size).toBe(2);
    expect(window.loadIdempotency('acc', 'a')).toBeUndefined();
    expect(window.loadIdempotency('acc', 'b')).toEqual(record('b', '2'));
    expect(window.loadIdempotency('acc', 'c')).toEqual(record('c', '4'));
    expect(window.loadIdempotency('other', 'c')).toBeUndefined();
  });

  it('keeps exactly the last records over many turns of its ring', () => {
    const window = new IdempotencyWindow(3);
    for (let index = 0; index < 9; index++) {
      window.saveIdempotency('acc', `r${index}`, record(`r${index}`, String(index)));
      // An update of a kept record neither adds a record nor moves the oldest out.
      if (index === 7) window.saveIdempotency('acc', 'r6', record('r6', 'updated'));
    }
    expect(window.size).toBe(3);
    expect(window.loadIdempotency('acc', 'r6')).toEqual(record('r6', 'updated'));
    expect(window.loadIdempotency('acc', 'r7')).toEqual(record('r7', '7'));
    expect(window.loadIdempotency('acc', 'r8')).toEqual(record('r8', '8'));
    for (let index = 0; index < 6; index++) {
      expect(window.loadIdempotency('acc', `r${index}`)).toBeUndefined();
    }
    // The updated record kept its place: it is the oldest now.
    window.saveIdempotency('acc', 'r9', record('r9', '9'));
    expect(window.size).toBe(3);
    expect(window.loadIdempotency('acc', 'r6')).toBeUndefined();
    expect(window.loadIdempotency('acc', 'r7')).toEqual(record('r7', '7'));
  });

  it('keeps the recorded answer as handed over and hands out copies', () => {
    const window = new IdempotencyWindow();
    const saved = record('a', '1');
    window.saveIdempotency('acc', 'a', saved);
    const read = window.loadIdempotency('acc', 'a') as ReturnType<typeof record>;
    expect(read).toEqual(saved);
    expect(read).not.toBe(saved);
    expect(read.body.legs[0]).not.toBe(saved.body.legs[0]);
    read.body.price = '9';
    read.body.legs[0]!.price = '9';
    expect(window.loadIdempotency('acc', 'a')).toEqual(record('a', '1'));
  });

  it('refuses a window that holds nothing', () => {
    expect(() => new IdempotencyWindow(0)).toThrow(RangeError);
  });
});
