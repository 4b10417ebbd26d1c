/**
 * The live venue's pure parts: finding the sequence head, the trades cursor, route readiness,
 * and how client errors reach the executor's classification.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { VenueError } from '../../../src/client/index.ts';
import { isoTimestamp } from '../../../src/core/clock.ts';
import type { PublicTrade, RouteReadiness } from '../../../src/protocol/index.ts';
import { classifyFailure } from '../../../src/runtime/execution/classify.ts';
import {
  findSequenceHead,
  routesReady,
  TradeCursor,
  toVenueFailure,
} from '../../../src/runtime/live/index.ts';

describe('findSequenceHead', () => {
  it('finds the head wherever it lies from the hint, in logarithmic probes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 5_000_000 }),
        fc.integer({ min: 0, max: 5_000_000 }),
        async (head, hint) => {
          let probes = 0;
          const found = await findSequenceHead(async (after) => {
            probes += 1;
            return head > after;
          }, hint);
          expect(found).toBe(head);
          expect(probes).toBeLessThanOrEqual(
            2 * Math.ceil(Math.log2(Math.max(head, hint) + 2)) + 3,
          );
        },
      ),
    );
  });

  it('passes a probe failure on', async () => {
    await expect(
      findSequenceHead(async () => {
        throw new Error('log unreadable');
      }, 10),
    ).rejects.toThrow('log unreadable');
  });
});

function trade(id: string, atMs: number): PublicTrade {
  return {
    trade_id: id,
    market_id: 'BTC-PERP',
    route_id: 'svc',
    price: '100',
    quantity: '1',
    side: 'buy',
    occurred_at: isoTimestamp(atMs),
  };
}

describe('TradeCursor', () => {
  it('starts at the first read, then emits each new trade once, oldest first', () => {
    const cursor = new TradeCursor();
    expect(cursor.next([trade('b', 2), trade('a', 1)])).toEqual({ trades: [], gap: false });
    // Newest first, as the venue lists them; 'c' and 'd' share a millisecond.
    const second = cursor.next([trade('e', 4), trade('d', 3), trade('c', 3), trade('b', 2)]);
    expect(second.trades.map((item) => item.trade_id)).toEqual(['c', 'd', 'e']);
    expect(second.gap).toBe(false);
    expect(cursor.next([trade('e', 4), trade('d', 3)]).trades).toEqual([]);
  });

  it('keeps time order: a trade older than one already emitted is dropped', () => {
    const cursor = new TradeCursor();
    cursor.next([trade('a', 10)]);
    expect(
      cursor.next([trade('b', 20), trade('a', 10)]).trades.map((item) => item.trade_id),
    ).toEqual(['b']);
    expect(cursor.next([trade('late', 15), trade('b', 20)]).trades).toEqual([]);
  });

  it('says when a read shares nothing with the previous one (trades were missed)', () => {
    const cursor = new TradeCursor();
    cursor.next([trade('a', 1)]);
    const jump = cursor.next([trade('z', 9), trade('y', 8)]);
    expect(jump.gap).toBe(true);
    expect(jump.trades.map((item) => item.trade_id)).toEqual(['y', 'z']);
  });
});

describe('routesReady', () => {
  const entry = (routeId: string, ready: boolean): RouteReadiness => ({
    route_id: routeId,
    ready,
    health: ready ? 'ready' : 'degraded',
    order_submission_enabled: ready,
    reasons: [],
    observed_at: isoTimestamp(0),
  });

  it('is ready only when every route the markets use is listed ready', () => {
    expect(routesReady([entry('a', true), entry('b', false)], new Set(['a']))).toBe(true);
    expect(routesReady([entry('a', true), entry('b', false)], new Set(['a', 'b']))).toBe(false);
    expect(routesReady([entry('a', true)], new Set(['missing']))).toBe(false);
  });
});

describe('client errors as the executor classifies them', () => {
  const mutation = { endpoint: 'placeOrder' as const };
  const cases: [string, VenueError, 'unknown' | 'rejected'][] = [
    [
      'a timeout',
      new VenueError('REQUEST_TIMEOUT', 'late', {
        source: 'transport',
        ...mutation,
        outcome: 'unknown',
      }),
      'unknown',
    ],
    [
      'a broken connection',
      new VenueError('TRANSPORT_FAILURE', 'reset', {
        source: 'transport',
        ...mutation,
        outcome: 'unknown',
      }),
      'unknown',
    ],
    [
      'a malformed answer to a 4xx',
      new VenueError('MALFORMED_RESPONSE', 'html', {
        source: 'transport',
        ...mutation,
        httpStatus: 400,
        outcome: 'unknown',
      }),
      'unknown',
    ],
    [
      'a 503',
      new VenueError('EXECUTION_UNAVAILABLE', 'down', {
        source: 'service',
        ...mutation,
        httpStatus: 503,
        outcome: 'unknown',
      }),
      'unknown',
    ],
    [
      'an unknown code with a 5xx',
      new VenueError('SOMETHING_NEW', 'new', {
        source: 'service',
        ...mutation,
        httpStatus: 502,
        outcome: 'unknown',
      }),
      'unknown',
    ],
    [
      'ORDER_CONFIRMATION_PENDING (409)',
      new VenueError('ORDER_CONFIRMATION_PENDING', 'later', {
        source: 'service',
        ...mutation,
        httpStatus: 409,
        outcome: 'unknown',
      }),
      'unknown',
    ],
    [
      'a 4xx the client marks unknown',
      new VenueError('CUSTOM_PENDING', 'pending', {
        source: 'service',
        ...mutation,
        httpStatus: 409,
        outcome: 'unknown',
      }),
      'unknown',
    ],
    [
      'a refusal (422)',
      new VenueError('INVALID_REQUEST', 'bad', {
        source: 'service',
        ...mutation,
        httpStatus: 422,
        outcome: 'rejected',
        details: { issues: [{ loc: ['body', 'price'] }] },
      }),
      'rejected',
    ],
  ];

  for (const [name, error, expected] of cases) {
    it(`${name} is ${expected}`, () => {
      const mapped = toVenueFailure(error);
      const failure = classifyFailure(mapped);
      expect(failure.kind).toBe(expected);
      expect(failure.code).toBe(error.code);
      expect(failure.httpStatus).toBe(error.httpStatus);
      expect(mapped).toMatchObject({
        code: error.code,
        details: { httpStatus: error.httpStatus, outcome: error.outcome },
      });
    });
  }

  it('keeps the issues of a refusal', () => {
    const error = cases[cases.length - 1]?.[1] as VenueError;
    const failure = classifyFailure(toVenueFailure(error));
    expect(failure).toMatchObject({ kind: 'rejected', issues: [{ loc: ['body', 'price'] }] });
  });

  it('leaves other errors as they are', () => {
    const plain = new Error('plain');
    expect(toVenueFailure(plain)).toBe(plain);
  });
});
