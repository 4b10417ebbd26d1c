/**
 * Tolerant reading (contract section 7, issue 24), generated over every endpoint's response: an
 * unknown key added at each object level of a valid body is kept, reported once (by shape and
 * path), and never refuses the body; strict reading refuses it where the object is strict. A
 * missing required field names its path; an unknown value of an open enum gets its safe meaning;
 * one bad item of a list never loses the others.
 */
import { describe, expect, it } from 'vitest';
import {
  describeIssues,
  driftOf,
  type EndpointName,
  endpointNames,
  endpoints,
  readServerFrameWith,
  readWire,
  skippedItemsOf,
  withSkippedItems,
} from '../../src/protocol/index.ts';
import * as fixtures from './fixtures.ts';

const TIME = fixtures.TIME;

/** A valid body of every endpoint's success response, as the emulator would send it. */
const samples: Readonly<Record<EndpointName, unknown>> = {
  getTime: { server_time: TIME, epoch_ms: 1_740_830_400_000 },
  getStatus: { status: 'ok', environment: 'practice', api_version: '1.0.0', server_time: TIME },
  listRoutes: [fixtures.route()],
  listMarkets: [fixtures.market()],
  getMarket: fixtures.market(),
  getBook: fixtures.book(),
  listTrades: [fixtures.publicTrade()],
  listCandles: [fixtures.candle()],
  getAccount: fixtures.account(),
  listAccounts: [fixtures.venueAccount()],
  listPositions: { data: [fixtures.position()], page: { next_cursor: null, has_more: false } },
  listOrders: { data: [fixtures.order()], page: { next_cursor: 'c1', has_more: true } },
  placeOrder: fixtures.order(),
  getOrderByClientId: fixtures.order(),
  getOrder: fixtures.order(),
  amendOrder: fixtures.order(),
  cancelOrder: fixtures.order(),
  cancelAllOrders: {
    request_id: 'req-cancel-all-1',
    results: [
      fixtures.order(),
      { error: { code: 'ORDER_NOT_FOUND', message: 'gone', retryable: false, details: {} } },
    ],
  },
  placeBatch: {
    request_id: 'req-batch-0001',
    atomicity: 'non_atomic',
    results: [fixtures.order()],
  },
  simulateOrder: fixtures.simulationResult(),
  closePosition: fixtures.order(),
  setCancelAllAfter: { request_id: 'req-deadman-1', deadline_at: TIME },
  getRequest: fixtures.mutationStatus(),
  listFills: { data: [fixtures.fill()], page: { next_cursor: null, has_more: false } },
  getRoutesReadiness: [
    {
      route_id: 'svc-paper',
      ready: true,
      health: 'ready',
      order_submission_enabled: true,
      reasons: [],
      observed_at: TIME,
    },
  ],
  listEvents: {
    data: [fixtures.orderStatusEvent(1), ...fixtures.payloadEvents(2)],
    has_more: false,
    next_after_sequence: 6,
  },
  health: { status: 'ok' },
  ready: { ready: true },
};

type Path = (string | number)[];

/** Every object in `value` (the root included), by path. */
function objectPaths(value: unknown, path: Path = []): Path[] {
  if (Array.isArray(value)) {
    return value.flatMap((item, index) => objectPaths(item, [...path, index]));
  }
  if (typeof value !== 'object' || value === null) return [];
  return [
    path,
    ...Object.entries(value).flatMap(([key, inner]) => objectPaths(inner, [...path, key])),
  ];
}

function at(value: unknown, path: Path): unknown {
  let current = value;
  for (const part of path) current = (current as Record<string | number, unknown>)[part];
  return current;
}

function withKeyAt(value: unknown, path: Path, key: string, extra: unknown): unknown {
  const copy = structuredClone(value);
  (at(copy, path) as Record<string, unknown>)[key] = extra;
  return copy;
}

/** Objects whose keys the interface leaves open by design (records): a key there is no news. */
const OPEN_RECORDS = new Set(['details', 'provenance', 'result', 'issues']);

function insideOpenRecord(path: Path): boolean {
  return path.some((part) => typeof part === 'string' && OPEN_RECORDS.has(part));
}

describe('tolerant reading of every response shape', () => {
  it('has a sample for every endpoint, valid in strict reading', () => {
    expect(Object.keys(samples).sort()).toEqual([...endpointNames].sort());
    for (const name of endpointNames) {
      const read = readWire(endpoints[name].read, samples[name], 'strict');
      expect({ name, ok: read.ok, drift: read.drift }).toEqual({ name, ok: true, drift: [] });
    }
  });

  for (const name of endpointNames) {
    it(`${name}: an unknown key at every object level is kept and reported once`, () => {
      const schema = endpoints[name].read;
      const sample = samples[name];
      const paths = objectPaths(sample);
      expect(paths.length).toBeGreaterThan(0);
      for (const path of paths) {
        const drifted = withKeyAt(sample, path, 'svc_ext', { tier: 2, tags: ['x'] });
        const read = readWire(schema, drifted, 'tolerant');
        const where = `${name} at ${JSON.stringify(path)}`;
        expect(read.ok, where).toBe(true);
        if (!read.ok) continue;
        expect(read.skipped, where).toEqual([]);
        expect(at(read.value, path), where).toMatchObject({ svc_ext: { tier: 2, tags: ['x'] } });
        const reported = read.drift.filter(
          (item) => item.kind === 'unknown_field' && item.field === 'svc_ext',
        );
        if (insideOpenRecord(path)) {
          expect(reported, where).toEqual([]);
        } else {
          expect(reported, where).toHaveLength(1);
          expect(reported[0], where).toMatchObject({ path });
          expect(typeof reported[0]?.shape, where).toBe('string');
        }
      }
    });
  }

  it('strict reading still refuses an unknown field of a listed resource', () => {
    const drifted = { ...fixtures.market(), svc_ext: {} };
    const strict = readWire(endpoints.getMarket.read, drifted, 'strict');
    expect(strict.ok).toBe(false);
    if (!strict.ok) {
      expect(describeIssues(strict.issues, drifted)).toBe('body.svc_ext: not in the interface');
    }
    expect(readWire(endpoints.getMarket.read, drifted, 'tolerant').ok).toBe(true);
  });

  it('names the shape and field of what it does not know', () => {
    const market = { ...fixtures.market(), svc_ext: {} };
    const route = fixtures.route();
    (route.capabilities as Record<string, unknown>).twap = true;
    expect(driftOf(endpoints.listMarkets.read, [market])).toEqual([
      { kind: 'unknown_field', shape: 'Market', field: 'svc_ext', path: [0] },
    ]);
    expect(driftOf(endpoints.listRoutes.read, [route])).toEqual([
      {
        kind: 'unknown_field',
        shape: 'RouteCapabilities',
        field: 'twap',
        path: [0, 'capabilities'],
      },
    ]);
  });
});

/** A valid server frame of every type the project knows, as the emulator sends it. */
const frames: Readonly<Record<string, Record<string, unknown>>> = {
  challenge: { version: 1, type: 'challenge', challenge: 'c-1', expires_at_ms: 1 },
  authenticated: {
    version: 1,
    type: 'authenticated',
    request_id: 'ws-1',
    key_id: 'key-1',
    scopes: ['orders:read'],
    sequence: 0,
  },
  subscribed: { version: 1, type: 'subscribed', request_id: 'ws-2', channels: ['orders'] },
  unsubscribed: { version: 1, type: 'unsubscribed', request_id: 'ws-3', channels: ['orders'] },
  pong: { version: 1, type: 'pong', request_id: 'ws-4' },
  heartbeat: { version: 1, type: 'heartbeat', occurred_at: TIME, sequence: 3 },
  error: {
    version: 1,
    type: 'error',
    request_id: null,
    error: { code: 'INVALID_REQUEST', message: 'no', retryable: false, details: {} },
  },
  ticker: {
    version: 1,
    channel: 'market:BTC-USD:ticker',
    type: 'ticker.update',
    occurred_at: TIME,
    data: {
      market_id: 'BTC-USD',
      mark_price: '1',
      index_price: '1',
      last_price: null,
      data_status: 'live',
    },
  },
  order_event: fixtures.orderStatusEvent(1),
  ...Object.fromEntries(
    fixtures.payloadEvents(2).map((event) => [`${String(event.type)}_event`, event]),
  ),
};

describe('tolerant reading of every server frame', () => {
  for (const [name, frame] of Object.entries(frames)) {
    it(`${name}: an unknown key at every object level is kept, reported once, never refused`, () => {
      expect(readServerFrameWith(frame, 'strict')).toMatchObject({ drift: [] });
      for (const path of objectPaths(frame)) {
        const drifted = withKeyAt(frame, path, 'svc_ext', { tier: 2 }) as Record<string, unknown>;
        const { reading, drift } = readServerFrameWith(drifted, 'tolerant');
        const where = `${name} at ${JSON.stringify(path)}`;
        expect(reading.kind, where).not.toBe('malformed');
        expect(reading.kind, where).not.toBe('unreadable');
        if (reading.kind === 'malformed' || reading.kind === 'unreadable') continue;
        expect(at(reading.frame, path), where).toMatchObject({ svc_ext: { tier: 2 } });
        const reported = drift.filter((item) => item.field === 'svc_ext');
        expect(reported, where).toHaveLength(insideOpenRecord(path) ? 0 : 1);
      }
    });
  }
});

describe('required fields stay required and typed', () => {
  it('a missing or mistyped field fails in both modes and names its path', () => {
    const { order_id: _, ...noId } = fixtures.order();
    for (const mode of ['tolerant', 'strict'] as const) {
      const missing = readWire(endpoints.getOrder.read, noId, mode);
      expect(missing.ok).toBe(false);
      if (!missing.ok) expect(describeIssues(missing.issues, noId)).toBe('body.order_id: required');
      const mistyped = { ...fixtures.order(), filled_quantity: 0 };
      const wrong = readWire(endpoints.getOrder.read, mistyped, mode);
      expect(wrong.ok).toBe(false);
      if (!wrong.ok) {
        expect(describeIssues(wrong.issues, mistyped)).toMatch(
          /^body\.filled_quantity: (?!required)/,
        );
      }
    }
  });
});

describe('open enums', () => {
  it('an unknown value gets its safe meaning and is reported; strict refuses the closed form', () => {
    const route = { ...fixtures.route(), market_structure: 'hybrid', health: 'paused' };
    const read = readWire(endpoints.listRoutes.read, [route], 'tolerant');
    expect(read.ok).toBe(true);
    if (read.ok) {
      expect(read.value[0]).toMatchObject({ market_structure: 'order_book', health: 'degraded' });
    }
    expect(read.drift).toEqual([
      expect.objectContaining({
        kind: 'unknown_value',
        shape: 'Route',
        field: 'market_structure',
        value: 'hybrid',
        meaning: 'order_book',
      }),
      expect.objectContaining({ field: 'health', value: 'paused', meaning: 'degraded' }),
    ]);
    expect(readWire(endpoints.listRoutes.read, [route], 'strict').ok).toBe(false);
  });

  it('strings the interface leaves open are kept as sent, with a report', () => {
    const order = { ...fixtures.order(), execution_stage: 'ROUTED_L1' };
    const trade = { ...fixtures.publicTrade(), side: 'taker_buy' };
    const readOrder = readWire(endpoints.getOrder.read, order, 'tolerant');
    const readTrade = readWire(endpoints.listTrades.read, [trade], 'strict');
    expect(readOrder.ok && readOrder.value.execution_stage).toBe('ROUTED_L1');
    expect(readTrade.ok && readTrade.value[0]?.side).toBe('taker_buy');
    expect(readOrder.drift).toEqual([
      expect.objectContaining({ field: 'execution_stage', value: 'ROUTED_L1', meaning: null }),
    ]);
    expect(readTrade.drift).toEqual([
      expect.objectContaining({ shape: 'PublicTrade', field: 'side', value: 'taker_buy' }),
    ]);
  });

  it('an event type the project does not know is passed on and reported', () => {
    const page = {
      data: [fixtures.privateEvent('orders', 'order.routed', 1, { order_id: 'ord-1' })],
      has_more: false,
    };
    const read = readWire(endpoints.listEvents.read, page, 'tolerant');
    expect(read.ok && read.value.data[0]?.type).toBe('order.routed');
    expect(read.drift).toEqual([
      expect.objectContaining({ kind: 'unknown_value', field: 'type', value: 'order.routed' }),
    ]);
  });
});

describe('one bad item never loses its page', () => {
  function pageOfMany(): { data: Record<string, unknown>[]; has_more: boolean } {
    const data = Array.from({ length: 8 }, (_, index) => fixtures.orderStatusEvent(index + 1));
    for (const event of data) {
      Object.assign(event.data as Record<string, unknown>, {
        reason: 'venue',
        actor: 'engine',
        context: { shard: 1 },
      });
    }
    delete (data[3]!.data as Record<string, unknown>).to_state;
    return { data, has_more: false };
  }

  it('tolerant: the others are read, the bad one is left out with its path', () => {
    const page = pageOfMany();
    const read = readWire(endpoints.listEvents.read, page, 'tolerant');
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(read.value.data.map((event) => event.sequence)).toEqual([1, 2, 3, 5, 6, 7, 8]);
    expect(read.skipped).toHaveLength(1);
    expect(read.skipped[0]?.path).toEqual(['data', 3]);
    expect(read.skipped[0]?.raw).toBe(page.data[3]);
    expect(describeIssues(read.skipped[0]!.issues, page)).toBe(
      'body.data[3].data.to_state: required',
    );
    // The extra keys of every event's data: kept and reported, by path.
    const reasons = read.drift.filter(
      (item) => item.kind === 'unknown_field' && item.field === 'reason',
    );
    expect(reasons).toHaveLength(8);
    expect(reasons[0]).toMatchObject({ shape: 'OrderStatusEventData', path: ['data', 0, 'data'] });
    expect(read.value.data[0]).toMatchObject({ data: { reason: 'venue', actor: 'engine' } });
  });

  it('strict: the page is refused whole, as the emulator must never send it', () => {
    const page = pageOfMany();
    const read = readWire(endpoints.listEvents.read, page, 'strict');
    expect(read.ok).toBe(false);
  });

  it('a bad item outside a list fails the body', () => {
    const page = { ...pageOfMany(), has_more: 'no' };
    expect(readWire(endpoints.listEvents.read, page, 'tolerant').ok).toBe(false);
  });

  it('the items left out travel with the value read', () => {
    const value = withSkippedItems({ data: [] }, [{ path: ['data', 0], issues: [], raw: 1 }]);
    expect(skippedItemsOf(value)).toHaveLength(1);
    expect(skippedItemsOf({ data: [] })).toEqual([]);
  });

  it('a live event that breaks its schema is unreadable, not dropped, when its sequence reads', () => {
    const event = fixtures.orderStatusEvent(9);
    delete (event.data as Record<string, unknown>).to_state;
    const tolerant = readServerFrameWith(event, 'tolerant').reading;
    expect(tolerant).toMatchObject({
      kind: 'unreadable',
      frame: { sequence: 9, channel: 'orders', entityId: 'ord-1' },
    });
    expect(tolerant.kind === 'unreadable' && tolerant.frame.problem).toContain(
      'frame.data.to_state: required',
    );
    expect(readServerFrameWith(event, 'strict').reading.kind).toBe('malformed');
  });
});
