import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FaultController } from '../../../src/emulator/server/faults.ts';
import { addressNumber, matchesAny, parseCidr } from '../../../src/emulator/server/ip-allowlist.ts';
import { RateLimiter } from '../../../src/emulator/server/rate-limit.ts';

function blocks(...texts: string[]) {
  return texts.map((text) => {
    const block = parseCidr(text);
    if (block === null) throw new Error(`not a CIDR: ${text}`);
    return block;
  });
}

describe('IP allowlist', () => {
  it('matches IPv4, IPv6 and IPv4-mapped addresses', () => {
    const list = blocks('10.0.0.0/8', '192.168.1.7', 'fd00::/8', '::1');
    expect(matchesAny(list, '10.200.3.4')).toBe(true);
    expect(matchesAny(list, '11.0.0.1')).toBe(false);
    expect(matchesAny(list, '::ffff:10.1.2.3')).toBe(true);
    expect(matchesAny(list, '192.168.1.7')).toBe(true);
    expect(matchesAny(list, '192.168.1.8')).toBe(false);
    expect(matchesAny(list, 'fd12:3456::1')).toBe(true);
    expect(matchesAny(list, 'fe80::1')).toBe(false);
    expect(matchesAny(list, '::1')).toBe(true);
    expect(matchesAny(list, '::2')).toBe(false);
    expect(matchesAny(list, undefined)).toBe(false);
    expect(matchesAny(list, 'not-an-address')).toBe(false);
    expect(matchesAny(blocks('0.0.0.0/0'), '::ffff:1.2.3.4')).toBe(true);
    expect(matchesAny(blocks('0.0.0.0/0'), '::1')).toBe(false);
    expect(matchesAny(blocks('::/0'), '8.8.8.8')).toBe(true);
  });

  it('refuses what is not an address or block', () => {
    for (const text of [
      '',
      '1.2.3',
      '1.2.3.4/33',
      '::1/129',
      '1.2.3.4/-1',
      '1.2.3.4/x',
      'host',
      '300.1.1.1',
    ]) {
      expect(parseCidr(text)).toBeNull();
    }
  });

  it('an IPv4 address equals its mapped IPv6 form, and a /32 matches exactly itself', () => {
    const octet = fc.integer({ min: 0, max: 255 });
    fc.assert(
      fc.property(
        fc.tuple(octet, octet, octet, octet),
        fc.tuple(octet, octet, octet, octet),
        (a, b) => {
          const left = a.join('.');
          const right = b.join('.');
          expect(addressNumber(left)).toBe(addressNumber(`::ffff:${left}`));
          expect(matchesAny(blocks(`${left}/32`), right)).toBe(left === right);
          expect(matchesAny(blocks(`${left}/24`), right)).toBe(
            a.slice(0, 3).join('.') === b.slice(0, 3).join('.'),
          );
        },
      ),
    );
  });
});

describe('RateLimiter', () => {
  it('counts per key in windows aligned to the window length', () => {
    const limiter = new RateLimiter({ quota: 2, windowMs: 1_000 });
    expect(limiter.take('a', 1_500)).toEqual({
      allowed: true,
      limit: 2,
      remaining: 1,
      resetSeconds: 1,
    });
    expect(limiter.take('a', 1_600).remaining).toBe(0);
    expect(limiter.take('a', 1_999).allowed).toBe(false);
    expect(limiter.take('b', 1_999).allowed).toBe(true);
    expect(limiter.take('a', 2_000)).toEqual({
      allowed: true,
      limit: 2,
      remaining: 1,
      resetSeconds: 1,
    });
  });

  it('never allows more than the quota in one window', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.integer({ min: 0, max: 5_000 }), { maxLength: 200 }),
        (quota, offsets) => {
          const limiter = new RateLimiter({ quota, windowMs: 1_000 });
          const allowedPerWindow = new Map<number, number>();
          for (const at of [...offsets].sort((x, y) => x - y)) {
            if (limiter.take('k', at).allowed) {
              const window = Math.floor(at / 1_000);
              allowedPerWindow.set(window, (allowedPerWindow.get(window) ?? 0) + 1);
            }
          }
          for (const count of allowedPerWindow.values()) expect(count).toBeLessThanOrEqual(quota);
        },
      ),
    );
  });

  it('refuses a bad configuration', () => {
    expect(() => new RateLimiter({ quota: 0, windowMs: 1 })).toThrow(RangeError);
    expect(() => new RateLimiter({ quota: 1, windowMs: 0.5 })).toThrow(RangeError);
  });
});

describe('FaultController', () => {
  it('applies request faults to matching requests only, as many times as asked', () => {
    const faults = new FaultController('seed');
    faults.fail({ code: 'EXECUTION_UNAVAILABLE', count: 2 });
    faults.dropResponses({ endpoint: 'getAccount' });
    expect(faults.takeRequestFault('getAccount', false, undefined)).toEqual({
      kind: 'drop',
    });
    expect(faults.takeRequestFault('getAccount', false, undefined)).toBeNull();
    expect(faults.takeRequestFault('placeOrder', true, 'r1')).toMatchObject({
      kind: 'fail',
      commit: false,
    });
    expect(faults.takeRequestFault('cancelOrder', true, 'r2')).toMatchObject({
      kind: 'fail',
    });
    expect(faults.takeRequestFault('placeOrder', true, 'r3')).toBeNull();
    faults.fail({ code: 'ORDER_CONFIRMATION_PENDING', requestId: 'wanted' });
    expect(faults.takeRequestFault('placeOrder', true, 'other')).toBeNull();
    expect(faults.takeRequestFault('placeOrder', true, 'wanted')).toMatchObject({ commit: true });
    expect(faults.snapshot()).toEqual({ requests: [], frames: [] });
  });

  it('draws frame faults from the seeded generator: the same seed, the same losses', () => {
    const pattern = (seed: string) => {
      const faults = new FaultController(seed);
      faults.dropFrames({ probability: 0.3 });
      return Array.from({ length: 50 }, () => faults.takeFrameFault());
    };
    expect(pattern('a')).toEqual(pattern('a'));
    expect(pattern('a')).not.toEqual(pattern('b'));
    const dropped = pattern('a').filter((fault) => fault === 'drop').length;
    expect(dropped).toBeGreaterThan(5);
    expect(dropped).toBeLessThan(30);
  });

  it('refuses nonsense', () => {
    const faults = new FaultController('seed');
    expect(() => faults.dropFrames({ probability: 2 })).toThrow(RangeError);
    expect(() => faults.fail({ code: 'RATE_LIMITED', count: 0 })).toThrow(RangeError);
    expect(() => faults.delayResponses({ delayMs: -1 })).toThrow(RangeError);
  });
});
