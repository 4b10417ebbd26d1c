/**
 * MemoryStore's idempotency records: kept as the ledger hands them over (a lazy fingerprint is
 * not hashed by a save), copied when read back, and only the newest `retainedIdempotency` of
 * all accounts, so an emulator without a data dir keeps flat memory.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../../src/emulator/index.ts';

class CountingFingerprint {
  reads = 0;
  toJSON(): string {
    this.reads++;
    return 'ab'.repeat(32);
  }
}

describe('MemoryStore idempotency records', () => {
  it('does not serialize a record when it is saved, and hands out a copy when read', () => {
    const store = new MemoryStore();
    const fingerprint = new CountingFingerprint();
    const body = { order_id: 'o-1', status: 'OPEN' };
    store.saveIdempotency('a-1', 'request-1', { fingerprint, body });
    expect(fingerprint.reads).toBe(0);

    const first = store.loadIdempotency('a-1', 'request-1') as {
      fingerprint: string;
      body: typeof body;
    };
    expect(fingerprint.reads).toBe(1);
    expect(first).toEqual({ fingerprint: 'ab'.repeat(32), body });
    first.body.status = 'CHANGED';
    expect(store.loadIdempotency('a-1', 'request-1')).toEqual({
      fingerprint: 'ab'.repeat(32),
      body: { order_id: 'o-1', status: 'OPEN' },
    });
    expect(store.loadIdempotency('a-2', 'request-1')).toBeUndefined();
  });

  it('keeps the newest records of all accounts, oldest forgotten first', () => {
    const store = new MemoryStore({ retainedIdempotency: 3 });
    store.saveIdempotency('a-1', 'r-1', { n: 1 });
    store.saveIdempotency('a-2', 'r-1', { n: 2 });
    store.saveIdempotency('a-1', 'r-2', { n: 3 });
    // A record saved again (its completion stamped) keeps its place.
    store.saveIdempotency('a-1', 'r-1', { n: 11 });
    expect(store.idempotencySize).toBe(3);
    store.saveIdempotency('a-1', 'r-3', { n: 4 });
    expect(store.idempotencySize).toBe(3);
    expect(store.loadIdempotency('a-1', 'r-1')).toBeUndefined();
    expect(store.loadIdempotency('a-2', 'r-1')).toEqual({ n: 2 });
    expect(store.loadIdempotency('a-1', 'r-2')).toEqual({ n: 3 });
    expect(store.loadIdempotency('a-1', 'r-3')).toEqual({ n: 4 });
    store.saveIdempotency('a-1', 'r-4', { n: 5 });
    expect(store.loadIdempotency('a-2', 'r-1')).toBeUndefined();
    expect(store.retainedIdempotency).toBe(3);
  });

  it('refuses a bound below one', () => {
    expect(() => new MemoryStore({ retainedIdempotency: 0 })).toThrow(RangeError);
    expect(new MemoryStore().retainedIdempotency).toBe(100_000);
  });
});
