/**
 * The pure parts of execution: the shared command serializer (prepare once, restore the exact
 * bytes), the Rejected/Unknown classification of failures, the backoff, and the serial lane.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PaperbotError } from '../../../src/core/errors.ts';
import { backoffDelay, classifyFailure } from '../../../src/runtime/execution/classify.ts';
import { SerialLane } from '../../../src/runtime/execution/lane.ts';
import {
  bodySha256Hex as sha256Hex,
  prepareCommand,
  restoreCommand,
} from '../../../src/signing/index.ts';
import { decode, serviceError, transportError } from './fixtures.ts';

const placeBody = {
  request_id: 'alpha:epoch:1',
  client_order_id: 'alpha:epoch:1',
  market_id: 'BTC-PERP',
  side: 'buy',
  type: 'limit',
  quantity: 0.5,
  price: '42000.50',
  leverage: 2,
} as const;

describe('command serializer', () => {
  it('serializes once, with defaults applied and decimals canonical', () => {
    const prepared = prepareCommand({ endpoint: 'placeOrder', body: placeBody });
    expect(prepared).toMatchObject({
      endpoint: 'placeOrder',
      path: '/v1/orders',
      requestId: 'alpha:epoch:1',
    });
    expect(prepared.bodySha256).toBe(sha256Hex(prepared.bodyBytes));
    expect(decode(prepared.bodyBytes)).toEqual({
      ...placeBody,
      quantity: '0.5',
      price: '42000.5',
      time_in_force: 'GTC',
      post_only: false,
      reduce_only: false,
      margin_mode: 'isolated',
    });
    expect(Object.isFrozen(prepared)).toBe(true);
  });

  it('restores the exact journaled bytes without re-serializing them', () => {
    // Bytes another serializer could have written: other key order and spacing.
    const text = '{ "request_id":"alpha:epoch:2",  "timeout_seconds": 30 }';
    const bytes = new TextEncoder().encode(text);
    const restored = restoreCommand('setCancelAllAfter', '/v1/cancel-all-after', bytes);
    expect(new TextDecoder().decode(restored.bodyBytes)).toBe(text);
    expect(restored.requestId).toBe('alpha:epoch:2');
    expect(restored.bodySha256).toBe(sha256Hex(bytes));
  });

  it('builds paths with encoded parameters and checks them on restore', () => {
    const prepared = prepareCommand({
      endpoint: 'cancelOrder',
      params: { order_id: 'o/1' },
      body: { request_id: 'alpha:epoch:3' },
    });
    expect(prepared.path).toBe('/v1/orders/o%2F1/cancel');
    expect(restoreCommand('cancelOrder', prepared.path, prepared.bodyBytes).path).toBe(
      prepared.path,
    );
    expect(() => restoreCommand('placeOrder', prepared.path, prepared.bodyBytes)).toThrow(
      expect.objectContaining({ code: 'INVALID_COMMAND' }),
    );
  });

  it('refuses a body outside the contract, and damaged journaled bytes', () => {
    expect(() =>
      prepareCommand({
        endpoint: 'placeOrder',
        body: { ...placeBody, leverage: 0 },
      }),
    ).toThrow(
      expect.objectContaining({
        code: 'INVALID_COMMAND',
        details: expect.objectContaining({
          issues: [expect.objectContaining({ loc: ['body', 'leverage'] })],
        }),
      }),
    );
    const damaged = new TextEncoder().encode('{"request_id":"short"}');
    expect(() => restoreCommand('cancelAllOrders', '/v1/orders/cancel-all', damaged)).toThrow(
      expect.objectContaining({ code: 'INVALID_COMMAND' }),
    );
  });

  it('round-trips any valid cancel-all-after body byte for byte (property)', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[A-Za-z0-9:_-]{8,80}$/),
        fc.integer({ min: 0, max: 86_400 }),
        (requestId, timeoutSeconds) => {
          const prepared = prepareCommand({
            endpoint: 'setCancelAllAfter',
            body: { request_id: requestId, timeout_seconds: timeoutSeconds },
          });
          const restored = restoreCommand(prepared.endpoint, prepared.path, prepared.bodyBytes);
          expect(Buffer.from(restored.bodyBytes)).toEqual(Buffer.from(prepared.bodyBytes));
          expect(restored.bodySha256).toBe(prepared.bodySha256);
          expect(restored.requestId).toBe(requestId);
        },
      ),
    );
  });
});

describe('failure classification', () => {
  it('takes 4xx refusals as rejected, with the issues', () => {
    const error = new PaperbotError('INVALID_REQUEST', 'bad', {
      details: { httpStatus: 422, issues: [{ loc: ['body', 'price'] }] },
    });
    expect(classifyFailure(error)).toEqual({
      kind: 'rejected',
      code: 'INVALID_REQUEST',
      message: 'bad',
      httpStatus: 422,
      issues: [{ loc: ['body', 'price'] }],
    });
    expect(classifyFailure(serviceError('RATE_LIMITED')).kind).toBe('rejected');
  });

  it('takes everything that may have been applied as unknown', () => {
    for (const error of [
      transportError('REQUEST_TIMEOUT'),
      transportError('TRANSPORT_FAILURE'),
      transportError('MALFORMED_RESPONSE'),
      serviceError('EXECUTION_UNAVAILABLE', 503),
      serviceError('ORDER_CONFIRMATION_PENDING'),
      serviceError('IDEMPOTENCY_CONFLICT'),
      new PaperbotError('SOMETHING_NEW', 'no status'),
      new Error('not ours'),
      'a string',
    ]) {
      expect(classifyFailure(error).kind).toBe('unknown');
    }
  });

  it('reads an httpStatus field when details has none', () => {
    const error = Object.assign(new PaperbotError('ROUTE_NOT_READY', 'later'), { httpStatus: 409 });
    expect(classifyFailure(error)).toMatchObject({ kind: 'rejected', httpStatus: 409 });
  });

  it('never calls a 5xx or a status-less error rejected (property)', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[A-Z_]{3,20}$/),
        fc.option(fc.integer({ min: 500, max: 599 }), { nil: undefined }),
        (code, status) => {
          const details = status === undefined ? {} : { httpStatus: status };
          expect(classifyFailure(new PaperbotError(code, code, { details })).kind).toBe('unknown');
        },
      ),
    );
  });
});

describe('backoff', () => {
  it('doubles from the base and never exceeds the cap (property)', () => {
    expect([0, 1, 2, 3].map((attempt) => backoffDelay(attempt, 500, 30_000))).toEqual([
      500, 1_000, 2_000, 4_000,
    ]);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000 }), (attempt) => {
        const delay = backoffDelay(attempt, 500, 30_000);
        expect(delay).toBeLessThanOrEqual(30_000);
        expect(delay).toBeGreaterThanOrEqual(backoffDelay(Math.max(0, attempt - 1), 500, 30_000));
      }),
    );
  });
});

describe('serial lane', () => {
  it('runs one task at a time, urgent ones first', async () => {
    const lane = new SerialLane();
    const order: string[] = [];
    let running = 0;
    const task = (name: string) => async () => {
      running += 1;
      expect(running).toBe(1);
      order.push(name);
      await Promise.resolve();
      running -= 1;
    };
    const done = [lane.run(task('a')), lane.run(task('b')), lane.run(task('urgent'), true)];
    await Promise.all(done);
    await lane.idle();
    expect(order).toEqual(['a', 'urgent', 'b']);
  });

  it('rejects queued tasks when closed', async () => {
    const lane = new SerialLane();
    let release: () => void = () => {};
    const first = lane.run(() => new Promise<void>((resolve) => (release = resolve)));
    const second = lane.run(async () => 'never');
    lane.close();
    await expect(second).rejects.toThrow('closed');
    release();
    await first;
  });

  it('runs posted tasks in turn with awaited ones and hands their failures to the callback', async () => {
    const lane = new SerialLane();
    const order: string[] = [];
    const failures: string[] = [];
    const onFailure = (error: unknown) => failures.push((error as Error).message);
    lane.post(async () => {
      await Promise.resolve();
      order.push('posted a');
    }, onFailure);
    const awaited = lane.run(async () => {
      order.push('awaited');
      return 'answer';
    });
    lane.post(async () => {
      order.push('posted b');
      throw new Error('b failed');
    }, onFailure);
    lane.post(async () => {
      order.push('posted c');
    }, onFailure);
    expect(lane.size).toBe(4);
    await expect(awaited).resolves.toBe('answer');
    await lane.idle();
    expect(order).toEqual(['posted a', 'awaited', 'posted b', 'posted c']);
    expect(failures).toEqual(['b failed']);
  });

  it('keeps going after a task that throws before its first await', async () => {
    const lane = new SerialLane();
    const failures: unknown[] = [];
    const broken = (() => {
      throw new Error('thrown at once');
    }) as unknown as () => Promise<void>;
    lane.post(broken, (error) => failures.push(error));
    await expect(lane.run(broken)).rejects.toThrow('thrown at once');
    await expect(lane.run(async () => 'after')).resolves.toBe('after');
    expect(failures).toHaveLength(1);
  });

  it('tells a posted task dropped by close after the closing code, as LANE_CLOSED', async () => {
    const lane = new SerialLane();
    let release: () => void = () => {};
    const first = lane.run(() => new Promise<void>((resolve) => (release = resolve)));
    const codes: string[] = [];
    lane.post(
      async () => undefined,
      (error) => codes.push((error as PaperbotError).code),
    );
    lane.close();
    // Not during close itself: the caller finishes stopping first, as with a rejected promise.
    expect(codes).toEqual([]);
    await Promise.resolve();
    expect(codes).toEqual(['LANE_CLOSED']);
    const late: unknown[] = [];
    lane.post(
      async () => undefined,
      (error) => late.push(error),
    );
    await Promise.resolve();
    expect(late).toHaveLength(1);
    release();
    await first;
  });
});
