/**
 * The shapes the interface leaves open, as a client reads them (contract section 7): the
 * readiness rule, the small bodies, the events page and the server frames.
 */
import { describe, expect, it } from 'vitest';
import {
  EventsPageReading,
  KnownPrivateEventReading,
  nextAfterSequence,
  PrivateEvent,
  readRouteReadiness,
  readServerFrame,
  RouteReadiness,
  serviceTimeMs,
  StatusReading,
  TimeReading,
} from '../../src/protocol/index.ts';
import * as fixtures from './fixtures.ts';

describe('the readiness rule', () => {
  it('reads the emulator item by its boolean ready', () => {
    const item = RouteReadiness.parse({
      route_id: 'svc-paper',
      ready: false,
      health: 'degraded',
      order_submission_enabled: true,
      reasons: ['route health is degraded'],
      observed_at: fixtures.TIME,
    });
    expect(readRouteReadiness(item)).toEqual({
      readable: true,
      routeId: 'svc-paper',
      ready: false,
      reasons: ['route health is degraded'],
    });
  });

  it.each([
    [{ route_id: 'r', ready: true }, true, []],
    [{ route_id: 'r', ready: false }, false, ['ready is false']],
    [{ route_id: 'r', health: 'READY' }, true, []],
    [{ route_id: 'r', status: 'ready', uptime: 5 }, true, []],
    [{ route_id: 'r', state: 'halted' }, false, ["state is 'halted'"]],
    [{ route_id: 'r', health: 'degraded', status: 'ready' }, false, ["health is 'degraded'"]],
    [{ route_id: 'r', ready: true, health: 'disabled' }, true, []],
    [
      { route_id: 'r', health: 'ready', order_submission_enabled: false },
      false,
      ['order_submission_enabled is false'],
    ],
    [{ route_id: 'r', status: 'paused', reasons: ['venue paused', 7] }, false, ['venue paused']],
  ])('%j reads ready %s', (item, ready, reasons) => {
    expect(readRouteReadiness(item)).toEqual({ readable: true, routeId: 'r', ready, reasons });
  });

  it('refuses to guess: an item without a route_id or any readiness field is unreadable', () => {
    expect(readRouteReadiness({ id: 'svc-paper', ready: true })).toEqual({
      readable: false,
      routeId: null,
      problem: 'a readiness item has no string route_id (fields: id, ready)',
    });
    expect(readRouteReadiness({ route_id: 'svc-paper', ready: 'yes', condition: 'green' })).toEqual(
      {
        readable: false,
        routeId: 'svc-paper',
        problem:
          'the readiness item of route svc-paper has neither a boolean ready nor a health, status or state string (fields: route_id, ready, condition)',
      },
    );
  });
});

describe('small bodies', () => {
  it('takes the service time from epoch_ms, else server_time, else nothing', () => {
    expect(serviceTimeMs(TimeReading.parse({ epoch_ms: 5, server_time: fixtures.TIME }))).toBe(5);
    expect(serviceTimeMs(TimeReading.parse({ server_time: fixtures.TIME, zone: 'UTC' }))).toBe(
      Date.parse(fixtures.TIME),
    );
    expect(serviceTimeMs(TimeReading.parse({ server_time: 'noon' }))).toBeNull();
    expect(serviceTimeMs(TimeReading.parse({ now: 1 }))).toBeNull();
    expect(TimeReading.safeParse({ epoch_ms: '5' }).success).toBe(false);
  });

  it('keeps a status of any shape', () => {
    expect(StatusReading.parse({ status: 'up', extra: [1] })).toEqual({ status: 'up', extra: [1] });
    expect(StatusReading.safeParse([]).success).toBe(false);
  });
});

describe('the events page', () => {
  it('derives the next after_sequence when the page leaves it out', () => {
    const page = EventsPageReading.parse({
      data: [fixtures.orderStatusEvent(4), fixtures.orderStatusEvent(6)],
      has_more: true,
      cursor: 'x',
    });
    expect(page).toMatchObject({ cursor: 'x' });
    expect(nextAfterSequence(page, 3)).toBe(6);
    expect(nextAfterSequence({ data: [], has_more: false }, 9)).toBe(9);
    expect(nextAfterSequence({ data: [], has_more: true, next_after_sequence: 12 }, 9)).toBe(12);
  });

  it('keeps unknown event types, but not a known type that breaks its schema', () => {
    const other = {
      channel: 'risk',
      type: 'margin_call',
      sequence: 3,
      event_id: 'e-3',
      data: { x: 1 },
    };
    expect(EventsPageReading.parse({ data: [other], has_more: false }).data).toEqual([other]);
    const broken = { ...fixtures.orderStatusEvent(1), data: {} };
    expect(EventsPageReading.safeParse({ data: [broken], has_more: false }).success).toBe(false);
    expect(EventsPageReading.safeParse({ data: [] }).success).toBe(false);
  });
});

describe('server frames', () => {
  it('reads control frames of other shapes', () => {
    expect(readServerFrame({ type: 'heartbeat' })).toEqual({
      kind: 'heartbeat',
      frame: { type: 'heartbeat' },
    });
    expect(readServerFrame({ type: 'subscribed', channels: ['orders'], id: 9 })).toMatchObject({
      kind: 'subscribed',
    });
    expect(readServerFrame({ type: 'pong' })).toMatchObject({ kind: 'pong' });
    expect(readServerFrame({ type: 'authenticated', user: 'u' })).toMatchObject({
      kind: 'authenticated',
      frame: { user: 'u' },
    });
    expect(
      readServerFrame({ type: 'error', error: { code: 'X', message: 'm', trace: 't' } }),
    ).toEqual({
      kind: 'error',
      frame: {
        type: 'error',
        error: { code: 'X', message: 'm', trace: 't', retryable: false, details: {} },
      },
    });
  });

  it('passes unknown types on, and reports what is broken', () => {
    expect(readServerFrame({ type: 'notice', text: 'hi' })).toEqual({
      kind: 'other',
      frame: { type: 'notice', text: 'hi' },
    });
    expect(
      readServerFrame({ type: 'margin_call', channel: 'risk', sequence: 2, event_id: 'e' }),
    ).toMatchObject({ kind: 'event' });
    expect(readServerFrame({ type: 'heartbeat', sequence: -1 })).toMatchObject({
      kind: 'malformed',
    });
    expect(readServerFrame('text')).toEqual({
      kind: 'malformed',
      problem: 'a frame is not a JSON object',
    });
    expect(readServerFrame({ kind: 'x' })).toEqual({
      kind: 'malformed',
      problem: 'a frame has no type',
    });
  });
});

describe('private events other than the order event', () => {
  const cases = fixtures.payloadEvents(1).map((event) => [event.type as string, event] as const);

  it.each(cases)(
    'a %s event keeps a further envelope field and a further data field',
    (_, event) => {
      const extended = fixtures.withExtraFields(event);
      expect(readServerFrame(extended)).toEqual({ kind: 'event', frame: extended });
      expect(KnownPrivateEventReading.parse(extended)).toEqual(extended);
      // What the emulator sends stays exact: its own schema refuses both fields.
      expect(PrivateEvent.safeParse(extended).success).toBe(false);
      expect(PrivateEvent.parse(event)).toEqual(event);
    },
  );

  function changed(
    event: Record<string, unknown>,
    data: Record<string, unknown>,
  ): Record<string, unknown> {
    return { ...event, data: { ...(event.data as Record<string, unknown>), ...data } };
  }

  function without(event: Record<string, unknown>, field: string): Record<string, unknown> {
    const data = { ...(event.data as Record<string, unknown>) };
    delete data[field];
    return { ...event, data };
  }

  it('refuses a missing or mistyped payload field, naming it', () => {
    const [fill, position, account, trigger, liquidation] = fixtures
      .payloadEvents(1)
      .map(fixtures.withExtraFields) as [
      Record<string, unknown>,
      Record<string, unknown>,
      Record<string, unknown>,
      Record<string, unknown>,
      Record<string, unknown>,
    ];
    const problems = [
      readServerFrame(without(fill, 'fee')),
      readServerFrame(changed(fill, { quantity: 0.01 })),
      readServerFrame(changed(fill, { price: 'about 65000' })),
      readServerFrame(changed(position, { quantity: 0.5 })),
      readServerFrame(without(account, 'total_equity')),
      readServerFrame(changed(trigger, { deadline_at: 'soon' })),
      readServerFrame(without(liquidation, 'price')),
    ].map((reading) => (reading.kind === 'malformed' ? reading.problem : reading.kind));
    expect(problems).toEqual([
      expect.stringMatching(/^a fill event: frame\.data\.fee: /),
      expect.stringMatching(/^a fill event: frame\.data\.quantity: /),
      expect.stringMatching(/^a fill event: frame\.data\.price: /),
      expect.stringMatching(/^a position event: frame\.data\.quantity: /),
      expect.stringMatching(/^an? account event: frame\.data\.total_equity: /),
      expect.stringMatching(/^a cancel_all_after\.triggered event: frame\.data\.deadline_at: /),
      expect.stringMatching(/^a liquidation event: frame\.data\.price: /),
    ]);
  });

  it('refuses a broken envelope of a known type, and data that is not an object', () => {
    const fill = fixtures.withExtraFields(fixtures.payloadEvents(1)[0]!);
    const { event_id: _, ...withoutId } = fill;
    const readings = [
      readServerFrame(withoutId),
      readServerFrame({ ...fill, sequence: '1' }),
      readServerFrame({ ...fill, channel: 'orders' }),
      readServerFrame({ ...fill, occurred_at: 'yesterday' }),
      readServerFrame({ ...fill, data: ['fill-1'] }),
    ];
    expect(
      readings.map((reading) => (reading.kind === 'malformed' ? reading.problem : reading.kind)),
    ).toEqual([
      expect.stringMatching(/^a fill event: frame\.event_id: /),
      expect.stringMatching(/^a fill event: frame\.sequence: /),
      expect.stringMatching(/^a fill event: frame\.channel: /),
      expect.stringMatching(/^a fill event: frame\.occurred_at: /),
      expect.stringMatching(/^a fill event: frame\.data: /),
    ]);
  });

  it('keeps the order event as the interface shows it: no further field, in envelope or data', () => {
    const order = fixtures.orderStatusEvent(1);
    expect(readServerFrame(order)).toEqual({ kind: 'event', frame: order });
    expect(readServerFrame({ ...order, shard: 'eu-1' })).toMatchObject({
      kind: 'malformed',
      problem: expect.stringContaining('shard'),
    });
    expect(readServerFrame(fixtures.withExtraFields(order))).toMatchObject({
      kind: 'malformed',
      problem: expect.stringContaining('venue_note'),
    });
  });

  it('reads a page of them, keeping every further field', () => {
    const events = fixtures.payloadEvents(1).map(fixtures.withExtraFields);
    const page = EventsPageReading.parse({ data: events, has_more: false });
    expect(page.data).toEqual(events);
    expect(nextAfterSequence(page, 0)).toBe(5);
    const broken = { ...events[0]!, data: { ...(events[0]!.data as object), fee: 0.3 } };
    const refused = EventsPageReading.safeParse({ data: [broken], has_more: false });
    expect(refused.error?.issues.map((issue) => issue.path)).toEqual([['data', 0, 'data', 'fee']]);
  });
});
