/**
 * The real REST and stream clients against a second implementation of the interface that is
 * not the emulator (`foreign-service.ts`): the shapes the interface leaves open are read for
 * the fields the client uses, with every other field kept; the resources it lists stay strict.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RestClient } from '../../src/client/index.ts';
import { type VenueError, isVenueError } from '../../src/client/index.ts';
import { VirtualClock } from '../../src/core/clock.ts';
import type {
  KnownPrivateEventReading,
  OtherPrivateEvent,
  PrivateEvent,
} from '../../src/protocol/index.ts';
import { toVenueFailure } from '../../src/runtime/venue-error.ts';
import { classifyFailure } from '../../src/runtime/execution/classify.ts';
import * as fixtures from '../protocol/fixtures.ts';
import {
  foreignCredential,
  type ForeignService,
  marginCallEvent,
  startForeignService,
} from './foreign-service.ts';
import { START_MS, until, virtualRestClient, virtualStreamClient } from './helpers.ts';

let service: ForeignService;
let clock: VirtualClock;
const closers: (() => Promise<void>)[] = [];

beforeEach(async () => {
  clock = new VirtualClock(START_MS);
  service = await startForeignService({ now: () => clock.now() });
});

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await service.close();
});

function client(): RestClient {
  const rest = virtualRestClient(foreignCredential(service, 'key_foreign_1'), clock);
  closers.push(() => rest.close());
  return rest;
}

async function failure(promise: Promise<unknown>): Promise<VenueError> {
  try {
    await promise;
  } catch (error) {
    if (isVenueError(error)) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

describe('REST: what the interface leaves open is read, not refused', () => {
  it('reads time, status, health and ready answers with other fields, and keeps them', async () => {
    const rest = client();
    const time = await rest.getTime();
    expect(time).toMatchObject({ epoch_seconds: Math.floor(START_MS / 1000), zone: 'UTC' });
    // The offset comes from server_time when epoch_ms is missing.
    const offset = await rest.syncClock();
    expect(offset.offsetMs).toBe(0);
    expect(await rest.getStatus()).toEqual({
      status: 'OPERATIONAL',
      region: 'eu-1',
      build: { sha: 'abc' },
      maintenance: null,
    });
    expect(await rest.health()).toEqual({ healthy: true, checks: { db: 'up' } });
    expect(await rest.ready()).toEqual({ ready: 'yes', since: fixtures.TIME });
  });

  it('reads readiness items of another shape, whole', async () => {
    const rest = client();
    service.setReadiness([
      { route_id: 'svc-paper', ready: true },
      { route_id: 'svc-other', status: 'maintenance', window: { hours: 2 } },
    ]);
    expect(await rest.getRoutesReadiness()).toEqual([
      { route_id: 'svc-paper', ready: true },
      { route_id: 'svc-other', status: 'maintenance', window: { hours: 2 } },
    ]);
  });

  it('pages events without next_after_sequence, keeping unknown event types and extra fields', async () => {
    const rest = client();
    const pages = [];
    for await (const page of rest.eventPages({ after_sequence: 0, limit: 2 })) pages.push(page);
    expect(pages).toHaveLength(2);
    expect(pages[0]).toMatchObject({ has_more: true, page_token: 'opaque-1' });
    expect(pages[1]).toMatchObject({ has_more: false, retained_from: 1 });
    const events = pages.flatMap((page) => page.data);
    expect(events.map((event) => [event.sequence, event.type])).toEqual([
      [1, 'authoritative_status'],
      [2, 'margin_call'],
      [3, 'authoritative_status'],
    ]);
    expect(events[1]).toEqual(marginCallEvent(2));
    // The second page was asked after the highest sequence of the first.
    expect(service.requests.filter((line) => line === 'GET /v1/events')).toHaveLength(2);
  });

  it('pages fill, position, account and risk events with further fields, keeping them', async () => {
    const events = fixtures.payloadEvents(1).map(fixtures.withExtraFields);
    service.override(({ path, query }) =>
      path === '/v1/events'
        ? {
            status: 200,
            body: { data: Number(query.get('after_sequence')) < 5 ? events : [], has_more: false },
          }
        : undefined,
    );
    const rest = client();
    const read = [];
    for await (const event of rest.iterateEvents({ after_sequence: 0 })) read.push(event);
    expect(read).toEqual(events);

    // A fill that lacks a field the client uses is refused, naming it.
    const broken = { ...events[0]!, data: { ...(events[0]!.data as object), fee: 0.3 } };
    service.override(({ path }) =>
      path === '/v1/events'
        ? { status: 200, body: { data: [broken], has_more: false } }
        : undefined,
    );
    const error = await failure(rest.listEvents({ after_sequence: 0 }));
    expect(error.code).toBe('MALFORMED_RESPONSE');
    expect(error.details).toMatchObject({
      issues: [{ type: 'string_type', loc: ['body', 'data', 0, 'data', 'fee'] }],
    });
  });

  it('keeps simulation issues of any shape, and an order provenance and error of any shape', async () => {
    const rest = client();
    const simulation = await rest.simulateOrder(fixtures.marketOrder() as never);
    expect(simulation.decision).toBe('REVIEW');
    expect(simulation.issues).toEqual([
      { severity: 'warning', text: 'size near the limit', refs: ['quantity'], score: 0.4 },
      { rule: 42 },
    ]);
    const order = await rest.placeOrder({
      ...(fixtures.marketOrder() as Record<string, unknown>),
      request_id: 'foreign-req-1',
      client_order_id: 'foreign-client-1',
    } as never);
    expect(order.provenance).toEqual({ source: 'smart-router', hops: [1, 2], signed: false });
    expect(order.error).toEqual({ reason: 'none', detail: { nested: [null, { ok: true }] } });
  });

  it('keeps error details of any shape in the error', async () => {
    const rest = client();
    const error = await failure(rest.getAccount());
    expect(error).toMatchObject({
      code: 'INSUFFICIENT_READY_CAPITAL',
      httpStatus: 409,
      serverRequestId: 'srv-req-7',
      details: { shortfall: { asset: 'pUSDC', amount: '12.5' }, hints: ['top up', 3, null] },
    });
  });
});

describe('REST: what the interface lists stays strict', () => {
  it('refuses an order with an unknown top-level field', async () => {
    const rest = client();
    service.override(({ path }) =>
      path === '/v1/orders/ord-1'
        ? { status: 200, body: { ...fixtures.order(), venue_flags: ['x'] } }
        : undefined,
    );
    const error = await failure(rest.getOrder({ order_id: 'ord-1' }));
    expect(error.code).toBe('MALFORMED_RESPONSE');
    expect(error.details.issues).toEqual([
      expect.objectContaining({ type: 'extra_forbidden', loc: ['body', 'venue_flags'] }),
    ]);
  });

  it('refuses a market without market_id', async () => {
    const rest = client();
    const { market_id: _dropped, ...market } = fixtures.market();
    service.override(({ path }) =>
      path === '/v1/markets/BTC-USD' ? { status: 200, body: market } : undefined,
    );
    const error = await failure(rest.getMarket({ market_id: 'BTC-USD' }));
    expect(error.code).toBe('MALFORMED_RESPONSE');
    expect(error.details.issues).toEqual([
      expect.objectContaining({ type: 'missing', loc: ['body', 'market_id'] }),
    ]);
  });

  it('refuses readiness and events that are not even the open shape, naming what is wrong', async () => {
    const rest = client();
    service.setReadiness({ routes: [] });
    expect((await failure(rest.getRoutesReadiness())).code).toBe('MALFORMED_RESPONSE');
    service.override(({ path }) =>
      path === '/v1/events' ? { status: 200, body: { data: [] } } : undefined,
    );
    const error = await failure(rest.listEvents({ after_sequence: 0 }));
    expect(error.code).toBe('MALFORMED_RESPONSE');
    expect(error.details.issues).toEqual([
      expect.objectContaining({ type: 'missing', loc: ['body', 'has_more'] }),
    ]);
  });
});

describe('REST: a placement answered with another command ids', () => {
  it.each([
    ['request_id', { request_id: 'someone-elses-request' }],
    ['client_order_id', { client_order_id: 'someone-elses-order' }],
  ])(
    'is an unknown outcome when the %s differs, which the runtime resolves by lookup',
    async (field, changed) => {
      const rest = client();
      service.override(({ method, path }, body) => {
        if (method !== 'POST' || path !== '/v1/orders') return undefined;
        const sent = body as Record<string, unknown>;
        return {
          status: 202,
          body: {
            ...fixtures.order(),
            request_id: sent.request_id,
            client_order_id: sent.client_order_id,
            ...changed,
          },
        };
      });
      const error = await failure(
        rest.placeOrder({
          ...(fixtures.marketOrder() as Record<string, unknown>),
          request_id: 'mine-request-1',
          client_order_id: 'mine-order-1',
        } as never),
      );
      expect(error).toMatchObject({
        code: 'RESPONSE_ID_MISMATCH',
        outcome: 'unknown',
        details: { mismatched: [field] },
      });
      expect(error.message).toContain('mine-request-1');
      expect(classifyFailure(toVenueFailure(error))).toMatchObject({
        kind: 'unknown',
        code: 'RESPONSE_ID_MISMATCH',
      });
    },
  );

  it('accepts an answer whose ids match, or leave an id null', async () => {
    const rest = client();
    service.override(({ method, path }, body) => {
      if (method !== 'POST' || path !== '/v1/orders') return undefined;
      const sent = body as Record<string, unknown>;
      return {
        status: 202,
        body: { ...fixtures.order(), request_id: sent.request_id, client_order_id: null },
      };
    });
    const order = await rest.placeOrder({
      ...(fixtures.marketOrder() as Record<string, unknown>),
      request_id: 'mine-request-2',
      client_order_id: 'mine-order-2',
    } as never);
    expect(order.request_id).toBe('mine-request-2');
  });
});

describe('stream: open frames read liberally, unknown types passed on', () => {
  it('authenticates, subscribes and delivers through confirmations, heartbeats and frames of other shapes', async () => {
    const rest = client();
    const stream = virtualStreamClient(rest, clock, { privateChannels: ['orders', 'risk'] });
    closers.push(() => stream.close());
    const events: PrivateEvent[] = [];
    const others: OtherPrivateEvent[] = [];
    const frames: Record<string, unknown>[] = [];
    const errors: VenueError[] = [];
    const resyncs: unknown[] = [];
    stream.events$.subscribe((event) => events.push(event));
    stream.otherEvents$.subscribe((event) => others.push(event));
    stream.otherFrames$.subscribe((frame) => frames.push(frame));
    stream.errors$.subscribe((error) => errors.push(error));
    stream.resync$.subscribe((signal) => resyncs.push(signal));

    await stream.connect();
    expect(stream.state).toBe('live');
    expect(service.clientFrames.map((frame) => frame.op)).toEqual(['auth', 'subscribe']);

    service.broadcast({ type: 'heartbeat', at: fixtures.TIME });
    service.broadcast({ type: 'maintenance_notice', starts_at: fixtures.TIME, text: 'soon' });
    service.broadcast(marginCallEvent(1));
    service.broadcast(fixtures.orderStatusEvent(2));
    service.broadcast({ type: 'heartbeat', sequence: null, server_load: 0.3 });
    service.broadcast({ type: 'heartbeat', sequence: 2 });
    await until(() => events.length === 1 && frames.length === 1, 'the frames');

    expect(events).toEqual([fixtures.orderStatusEvent(2)]);
    expect(others).toEqual([marginCallEvent(1)]);
    expect(frames).toEqual([
      { type: 'maintenance_notice', starts_at: fixtures.TIME, text: 'soon' },
    ]);
    expect(stream.lastSequence).toBe(2);
    expect(errors).toEqual([]);
    expect(resyncs).toEqual([]);
    expect(stream.statistics()).toMatchObject({
      malformedFrames: 0,
      otherFrames: 1,
      otherEvents: 1,
      delivered: 2,
    });
  });

  it('still counts a known event type that breaks its schema as malformed, without stopping', async () => {
    const rest = client();
    const stream = virtualStreamClient(rest, clock, { privateChannels: ['orders'] });
    closers.push(() => stream.close());
    const errors: VenueError[] = [];
    const events: PrivateEvent[] = [];
    stream.errors$.subscribe((error) => errors.push(error));
    stream.events$.subscribe((event) => events.push(event));
    await stream.connect();
    service.broadcast({ ...fixtures.orderStatusEvent(1), data: { entity_id: 'ord-1' } });
    service.broadcast(fixtures.orderStatusEvent(1));
    await until(() => events.length === 1, 'the valid event');
    expect(errors.map((error) => error.code)).toEqual(['MALFORMED_RESPONSE']);
    expect(errors[0]?.message).toContain('authoritative_status');
    expect(stream.state).toBe('live');
  });

  it('delivers fill, position, account and risk events with further fields, keeping them', async () => {
    const rest = client();
    const stream = virtualStreamClient(rest, clock, {
      privateChannels: ['orders', 'fills', 'positions', 'account', 'risk'],
    });
    closers.push(() => stream.close());
    const events: KnownPrivateEventReading[] = [];
    const fills: unknown[] = [];
    const errors: VenueError[] = [];
    stream.events$.subscribe((event) => events.push(event));
    stream.fills$.subscribe((event) => fills.push(event.data));
    stream.errors$.subscribe((error) => errors.push(error));
    await stream.connect();

    const sent = fixtures.payloadEvents(1).map(fixtures.withExtraFields);
    const fill = sent[0]!;
    // A fill whose quantity is a number: malformed, and its sequence is not counted.
    service.broadcast({ ...fill, data: { ...(fill.data as object), quantity: 0.01 } });
    for (const event of sent) service.broadcast(event);
    await until(() => events.length === sent.length, 'the events');

    expect(events).toEqual(sent);
    expect(fills).toEqual([fill.data]);
    expect(stream.lastSequence).toBe(5);
    expect(errors.map((error) => error.code)).toEqual(['MALFORMED_RESPONSE']);
    expect(errors[0]?.message).toContain('data.quantity');
    expect(stream.statistics()).toMatchObject({ malformedFrames: 1, otherEvents: 0, delivered: 5 });
  });
});

describe('tolerant reading (issue 24): drift is kept and reported, one bad event loses nothing', () => {
  function tolerantClient(): RestClient {
    const rest = virtualRestClient(foreignCredential(service, 'key_foreign_2'), clock, 'tolerant');
    closers.push(() => rest.close());
    return rest;
  }

  /** Six order events with extra keys in their data; 3 breaks its schema, 5 is of a new type. */
  function driftedLog(): Record<string, unknown>[] {
    const events = [1, 2, 3, 4, 6].map((sequence) => {
      const event = fixtures.orderStatusEvent(sequence);
      Object.assign(event.data as Record<string, unknown>, {
        reason: 'venue',
        actor: 'engine',
        context: { shard: 1 },
      });
      return { ...event, svc_ext: { tier: 2 } } as Record<string, unknown>;
    });
    delete (events[2]!.data as Record<string, unknown>).to_state;
    const routed = fixtures.privateEvent('orders', 'order.routed', 5, { order_id: 'ord-1' });
    return [...events.slice(0, 4), routed, events[4]!];
  }

  it('an unknown field of a listed resource is kept and counted, not refused', async () => {
    const rest = tolerantClient();
    const notices: string[] = [];
    rest.reading.notices$.subscribe((notice) => {
      if (notice.kind === 'unknown_field') notices.push(`${notice.shape}.${notice.field}`);
    });
    service.override(({ path }) =>
      path === '/v1/markets'
        ? { status: 200, body: [{ ...fixtures.market(), svc_ext: { a: 1 } }] }
        : undefined,
    );
    const markets = await rest.listMarkets();
    expect(markets[0]).toMatchObject({ market_id: fixtures.market().market_id, svc_ext: { a: 1 } });
    await rest.listMarkets();
    expect(notices).toEqual(['Market.svc_ext', 'Market.svc_ext']);
    expect(rest.reading.snapshot()).toMatchObject({ mode: 'tolerant', unknownFields: 1 });
  });

  it('an error envelope with fields of its own is still the service refusal it says', async () => {
    const rest = tolerantClient();
    service.override(({ path }) =>
      path === '/v1/orders/ord-9'
        ? {
            status: 404,
            body: {
              error: {
                code: 'ORDER_NOT_FOUND',
                message: 'no such order',
                request_id: 'r-1',
                retryable: false,
                details: {},
                svc_ext: { trace: 'abc' },
              },
              svc_ext: {},
            },
          }
        : undefined,
    );
    const error = await failure(rest.getOrder({ order_id: 'ord-9' }));
    expect(error).toMatchObject({
      code: 'ORDER_NOT_FOUND',
      httpStatus: 404,
      serverRequestId: 'r-1',
    });
    const strict = await failure(client().getOrder({ order_id: 'ord-9' }));
    expect(strict.code).toBe('MALFORMED_RESPONSE');
  });

  it('a missing field the client uses is an error naming endpoint, status, request id and path', async () => {
    const rest = tolerantClient();
    const { market_id: _, ...broken } = fixtures.market();
    service.override(({ path }) =>
      path === '/v1/markets/BTC-USD' ? { status: 200, body: broken } : undefined,
    );
    const error = await failure(rest.getMarket({ market_id: 'BTC-USD' }));
    expect(error.code).toBe('MALFORMED_RESPONSE');
    expect(error.message).toMatch(
      /^getMarket: the body does not match the interface: body\.market_id: required \(HTTP 200, request foreign-\d+\)$/,
    );
    expect(rest.reading.snapshot().lastProblem?.message).toBe(error.message);
  });

  it('a gap fill applies the good events, hands on the bad one as unreadable, in order', async () => {
    const rest = tolerantClient();
    service.override(({ path, query }) => {
      if (path !== '/v1/events') return undefined;
      const after = Number(query.get('after_sequence') ?? '0');
      const data = driftedLog().filter((event) => (event.sequence as number) > after);
      return { status: 200, body: { data, has_more: false } };
    });
    service.setSequenceHead(6);
    const stream = virtualStreamClient(rest, clock, {
      privateChannels: ['orders'],
      startAfterSequence: 0,
    });
    closers.push(() => stream.close());
    const order: string[] = [];
    const resyncs: unknown[] = [];
    stream.events$.subscribe((event) => order.push(`event ${event.sequence}`));
    stream.otherEvents$.subscribe((event) => order.push(`other ${event.sequence}`));
    stream.unreadableEvents$.subscribe((event) =>
      order.push(`unreadable ${event.sequence} ${event.entityId} ${event.problem}`),
    );
    stream.resync$.subscribe((signal) => resyncs.push(signal));
    await stream.connect();
    await until(() => order.length === 6, 'the six events');
    expect(order).toEqual([
      'event 1',
      'event 2',
      'unreadable 3 ord-1 listEvents: body.data[2].data.to_state: required',
      'event 4',
      'other 5',
      'event 6',
    ]);
    expect(resyncs).toEqual([]);
    expect(stream.lastSequence).toBe(6);
    expect(stream.statistics()).toMatchObject({ unreadableEvents: 1, otherEvents: 1 });
    expect(rest.reading.snapshot()).toMatchObject({ skippedItems: 1 });

    // Live: a bad event is unreadable too, never a gap.
    const live = fixtures.orderStatusEvent(7);
    delete (live.data as Record<string, unknown>).from_state;
    service.broadcast(live);
    service.broadcast(fixtures.orderStatusEvent(8));
    await until(() => order.length === 8, 'the live events');
    expect(order.slice(6)).toEqual([
      expect.stringMatching(
        /^unreadable 7 ord-1 a authoritative_status event: frame\.data\.from_state: required/,
      ),
      'event 8',
    ]);
    expect(resyncs).toEqual([]);
  });

  it('strict reading refuses the same page whole', async () => {
    const rest = client();
    service.override(({ path }) =>
      path === '/v1/events'
        ? { status: 200, body: { data: driftedLog(), has_more: false } }
        : undefined,
    );
    const error = await failure(rest.listEvents({ after_sequence: 0 }));
    expect(error.message).toContain('body.data[0].svc_ext: not in the interface');
  });
});
