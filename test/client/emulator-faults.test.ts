/**
 * The REST client under the emulator's fault controls: lost responses, late responses, 429
 * storms, 5xx answers and a restart. Each test ends by counting what the service holds: every
 * command applied exactly once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PreparedMutation, RestClient, VenueError } from '../../src/client/index.ts';
import type { Order } from '../../src/protocol/index.ts';
import { Environment, requestId } from './environment.ts';
import { track, turn, until } from './helpers.ts';

let environment: Environment | undefined;
const folders: string[] = [];

afterEach(async () => {
  await environment?.close();
  environment = undefined;
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function limitBuy(price = '50000') {
  const id = requestId('ord');
  return {
    request_id: id,
    client_order_id: `c-${id}`,
    market_id: 'BTC-PERP',
    side: 'buy' as const,
    type: 'limit' as const,
    quantity: '0.01',
    price,
    leverage: 5,
  };
}

async function ordersOf(rest: RestClient, requestIdValue: string): Promise<Order[]> {
  const found: Order[] = [];
  for await (const order of rest.iterateOrders({ limit: 200 })) {
    if (order.request_id === requestIdValue) found.push(order);
  }
  return found;
}

async function failure(promise: Promise<unknown>): Promise<VenueError> {
  try {
    await promise;
  } catch (error) {
    return error as VenueError;
  }
  throw new Error('expected the call to fail');
}

/** What an executor does with an unknown outcome: recover until the command is settled. */
async function settle(rest: RestClient, prepared: PreparedMutation<'placeOrder'>): Promise<Order> {
  for (;;) {
    const result = await rest.recover(prepared);
    if (result.outcome === 'resent') return result.response;
    if (result.outcome === 'completed' && result.response !== null) return result.response;
    await environment?.advance(100, 100);
  }
}

describe('lost responses', () => {
  it('a response dropped after the commit: unknown outcome, recovered, one order', async () => {
    environment = await Environment.start();
    const { rest, emulator } = environment;
    const prepared = rest.prepare('placeOrder', { body: limitBuy() });
    emulator.controls.dropResponses({ endpoint: 'placeOrder', count: 1 });
    const error = await failure(rest.send(prepared));
    expect(error).toMatchObject({
      code: 'TRANSPORT_FAILURE',
      outcome: 'unknown',
    });
    const order = await settle(rest, prepared);
    expect(order.request_id).toBe(prepared.requestId);
    expect(await ordersOf(rest, prepared.requestId)).toHaveLength(1);
  });

  it('a late response: the call times out on the clock, is recovered, one order', async () => {
    environment = await Environment.start();
    const { emulator } = environment;
    // The plain clock: the 5 s timeout must wait for the test to move time.
    const rest = environment.restClient({
      clock: environment.clock,
      requestTimeoutMs: 5_000,
    });
    const prepared = rest.prepare('placeOrder', { body: limitBuy() });
    emulator.controls.delayResponses({
      endpoint: 'placeOrder',
      delayMs: 60_000,
      count: 1,
    });
    const pending = track(rest.send(prepared));
    await until(() => emulator.controls.faults().requests.length === 0, 'the emulator to commit');
    environment.clock.advanceBy(5_000);
    const error = await failure(pending.promise);
    expect(error).toMatchObject({
      code: 'REQUEST_TIMEOUT',
      outcome: 'unknown',
    });
    const order = await settle(rest, prepared);
    expect(order.request_id).toBe(prepared.requestId);
    expect(await ordersOf(rest, prepared.requestId)).toHaveLength(1);
    // The late answer arrives on a socket the client already gave up; nothing breaks.
    await environment.advance(60_000, 10_000);
  });
});

describe('429 storms', () => {
  it('reads wait for Retry-After through a storm of injected 429s', async () => {
    environment = await Environment.start();
    const { rest, emulator, restClock } = environment;
    emulator.controls.failRequests({
      endpoint: 'getAccount',
      code: 'RATE_LIMITED',
      count: 3,
      retryAfterSeconds: 2,
    });
    const account = await rest.getAccount();
    expect(account.account_id).toBe(environment.accountId);
    expect(restClock.waits.filter((wait) => wait === 2_000)).toHaveLength(3);
  });

  it('a real quota: reads ride it out, mutations come back rejected and are resent by the caller', async () => {
    environment = await Environment.start({
      emulator: { rateLimit: { quota: 4, windowMs: 2_000 } },
    });
    const { rest, restClock } = environment;
    for (let index = 0; index < 12; index += 1) await rest.getAccount();
    // Twelve reads against a quota of four per window: the client waited out Retry-After.
    expect(restClock.waits.filter((wait) => wait >= 1_000 && wait <= 2_000).length).toBeGreaterThan(
      0,
    );
    let refusals = 0;
    const placed: Order[] = [];
    for (let index = 0; index < 6; index += 1) {
      const prepared = rest.prepare('placeOrder', {
        body: limitBuy(String(45_000 + index)),
      });
      for (;;) {
        const outcome = await rest.send(prepared).catch((error: VenueError) => error);
        if (!(outcome instanceof Error)) {
          placed.push(outcome);
          break;
        }
        expect(outcome).toMatchObject({
          code: 'RATE_LIMITED',
          outcome: 'rejected',
        });
        refusals += 1;
        environment.clock.advanceBy(outcome.retryAfterMs ?? 1_000);
      }
    }
    expect(refusals).toBeGreaterThan(0);
    expect(new Set(placed.map((order) => order.request_id)).size).toBe(6);
    for (const order of placed) {
      expect(await ordersOf(rest, order.request_id ?? '')).toHaveLength(1);
    }
  });

  it('the client-side limiter keeps a burst under the quota without any 429', async () => {
    environment = await Environment.start({
      emulator: { rateLimit: { quota: 3, windowMs: 5_000 } },
    });
    const rest = environment.restClient({
      rateLimiter: true,
      retry: { maxAttempts: 1 },
    });
    for (let index = 0; index < 10; index += 1) {
      // With retries off, a single 429 would fail the test.
      await rest.getAccount();
    }
    expect(rest.rateLimit()?.limit).toBe(3);
  });

  it('order flow leaves the operators their share: a cancel and a dead-man refresh pass while placements wait', async () => {
    environment = await Environment.start({
      emulator: { rateLimit: { quota: 20, windowMs: 60_000 } },
    });
    // On the test's clock itself (no auto-advance): a wait lasts until the test moves time.
    const rest = environment.restClient({
      rateLimiter: true,
      retry: { maxAttempts: 1 },
      clock: environment.clock,
      clockSync: 'manual',
    });
    const placed: Order[] = [];
    // 20 a window, a tenth kept for operators: order flow stops with 2 left.
    while (rest.rateLimit()?.remaining !== 2) {
      placed.push(await rest.placeOrder(limitBuy('40000')));
      expect(placed.length).toBeLessThan(20);
    }
    const held = track(rest.placeOrder(limitBuy('40000')));
    for (let index = 0; index < 20; index += 1) await turn();
    expect(held.settled()).toBe(false);
    const first = placed[0]!;
    const cancelled = await rest.cancelOrder(
      { order_id: first.order_id },
      { request_id: requestId('cxl') },
    );
    expect(cancelled.status).toBe('CANCELLED');
    const armed = await rest.setCancelAllAfter({
      request_id: requestId('dms'),
      timeout_seconds: 30,
    });
    expect(armed.deadline_at).toBe(new Date(environment.clock.now() + 30_000).toISOString());
    expect(rest.rateLimit()?.remaining).toBe(0);
    expect(held.settled()).toBe(false);
    // The window resets: the held placement goes out, still without a 429.
    environment.clock.advanceBy(60_000);
    const late = await held.promise;
    expect(late.status).not.toBe('REJECTED');
  });
});

describe('5xx answers', () => {
  it('a read is retried through EXECUTION_UNAVAILABLE', async () => {
    environment = await Environment.start();
    const { rest, emulator } = environment;
    emulator.controls.failRequests({
      endpoint: 'listOrders',
      code: 'EXECUTION_UNAVAILABLE',
      count: 2,
    });
    expect((await rest.listOrders()).data).toEqual([]);
    expect(emulator.controls.faults().requests).toHaveLength(0);
  });

  it('a mutation refused with 503 is unknown, recovered by resending the same bytes, one order', async () => {
    environment = await Environment.start();
    const { rest, emulator } = environment;
    const prepared = rest.prepare('placeOrder', { body: limitBuy() });
    emulator.controls.failRequests({ code: 'EXECUTION_UNAVAILABLE', count: 1 });
    const error = await failure(rest.send(prepared));
    expect(error).toMatchObject({
      code: 'EXECUTION_UNAVAILABLE',
      httpStatus: 503,
      outcome: 'unknown',
    });
    const recovered = await rest.recover(prepared);
    expect(recovered.outcome).toBe('resent');
    expect(await ordersOf(rest, prepared.requestId)).toHaveLength(1);
  });

  it('ORDER_CONFIRMATION_PENDING is unknown; recovery finds the committed order, one order', async () => {
    environment = await Environment.start();
    const { rest, emulator } = environment;
    const prepared = rest.prepare('placeOrder', { body: limitBuy() });
    emulator.controls.failRequests({
      code: 'ORDER_CONFIRMATION_PENDING',
      count: 1,
    });
    const error = await failure(rest.send(prepared));
    expect(error).toMatchObject({
      code: 'ORDER_CONFIRMATION_PENDING',
      outcome: 'unknown',
    });
    const order = await settle(rest, prepared);
    expect(order.request_id).toBe(prepared.requestId);
    expect(await ordersOf(rest, prepared.requestId)).toHaveLength(1);
  });
});

describe('emulator restart', () => {
  it('the pool reconnects after a restart on the same port, and stored bytes recover', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'paperbot-client-'));
    folders.push(dataDir);
    environment = await Environment.start({ emulator: { dataDir } });
    const { rest } = environment;
    const before = await rest.placeOrder(limitBuy());
    const prepared = rest.prepare('placeOrder', { body: limitBuy('49000') });
    const stored = Uint8Array.from(prepared.bodyBytes);
    environment.emulator.controls.dropResponses({
      endpoint: 'placeOrder',
      count: 1,
    });
    await failure(rest.send(prepared));

    await environment.restartEmulator();
    for (let index = 0; index < 5; index += 1) await turn();
    expect((await rest.getOrder({ order_id: before.order_id })).order_id).toBe(before.order_id);
    // A restarted executor rebuilds the command from its journal and recovers it.
    const restarted = environment.restClient();
    const rebuilt = restarted.fromStoredMutation('placeOrder', {}, stored);
    const order = await settle(restarted, rebuilt);
    expect(order.request_id).toBe(prepared.requestId);
    expect(await ordersOf(restarted, prepared.requestId)).toHaveLength(1);
  });
});
