import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AuthFrame,
  Channel,
  ClientFrame,
  channelScope,
  EventsPage,
  isChannel,
  isPrivateChannel,
  marketIdOfChannel,
  PrivateChannel,
  PrivateEvent,
  PublicChannel,
  privateEventChannel,
  ServerFrame,
  TickerSnapshotFrame,
  tickerChannel,
  WEBSOCKET_PATH,
} from '../../src/protocol/index.ts';
import {
  account,
  fill,
  orderStatusEvent,
  position,
  repeat,
  shapesOf,
  TIME,
  uuid,
} from './fixtures.ts';

function auth(): Record<string, unknown> {
  return {
    op: 'auth',
    request_id: 'auth-1',
    key_id: 'key-1',
    timestamp: '1740830400000',
    nonce: 'abcdefghijklmnop',
    scopes: ['orders:read', 'fills:read'],
    last_sequence: 0,
    signature: `${'A'.repeat(86)}==`,
  };
}

function ticker(type: string): Record<string, unknown> {
  return {
    version: 1,
    channel: 'market:BTC-USD:ticker',
    type,
    occurred_at: TIME,
    data: {
      market_id: 'BTC-USD',
      mark_price: '65000.5',
      index_price: null,
      last_price: '65001',
      data_status: 'live',
    },
  };
}

function privateEvent(
  channel: string,
  type: string,
  data: unknown,
  sequence = 5,
): Record<string, unknown> {
  return { version: 1, channel, sequence, event_id: uuid(sequence), type, occurred_at: TIME, data };
}

describe('channels', () => {
  it('private channels are exactly the five, with the contract scopes', () => {
    expect(PrivateChannel.options).toEqual(['account', 'positions', 'risk', 'orders', 'fills']);
    expect(channelScope).toEqual({
      account: 'account:read',
      positions: 'account:read',
      risk: 'account:read',
      orders: 'orders:read',
      fills: 'fills:read',
    });
  });

  it('the public ticker channel is market:<market_id>:ticker with a 3..40 market id', () => {
    expect(PublicChannel.safeParse('market:BTC-USD:ticker').success).toBe(true);
    expect(PublicChannel.safeParse(`market:${repeat(3)}:ticker`).success).toBe(true);
    expect(PublicChannel.safeParse(`market:${repeat(40)}:ticker`).success).toBe(true);
    expect(PublicChannel.safeParse(`market:${repeat(2)}:ticker`).success).toBe(false);
    expect(PublicChannel.safeParse(`market:${repeat(41)}:ticker`).success).toBe(false);
    expect(PublicChannel.safeParse('market:BTC-USD:book').success).toBe(false);
    expect(PublicChannel.safeParse('orders').success).toBe(false);
  });

  it('builds and reads ticker channels (property)', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 3, maxLength: 40 }), (marketId) => {
        const channel = tickerChannel(marketId);
        expect(isChannel(channel)).toBe(true);
        expect(isPrivateChannel(channel)).toBe(false);
        expect(marketIdOfChannel(channel)).toBe(marketId);
      }),
    );
  });

  it('Channel reports one issue for an unknown channel', () => {
    expect(shapesOf(Channel, 'trades')).toEqual([['channel', 'body']]);
    expect(shapesOf(Channel, 'Orders')).toEqual([['channel', 'body']]);
    expect(shapesOf(Channel, 'fills')).toEqual([]);
  });

  it('the WebSocket path', () => {
    expect(WEBSOCKET_PATH).toBe('/v1/ws');
  });
});

describe('client frames', () => {
  it('auth carries request_id, key_id, timestamp, nonce, scopes, last_sequence, signature', () => {
    expect(shapesOf(ClientFrame, auth())).toEqual([]);
    expect(AuthFrame.parse(auth())).toEqual(auth());
    const missing = Object.keys(auth()).filter((key) => key !== 'op');
    for (const key of missing) {
      const frame = auth();
      delete frame[key];
      expect(shapesOf(ClientFrame, frame)).toEqual([['missing', `body.${key}`]]);
    }
    expect(shapesOf(ClientFrame, { ...auth(), scopes: ['orders:admin'] })).toEqual([
      ['enum', 'body.scopes.0'],
    ]);
    expect(shapesOf(ClientFrame, { ...auth(), last_sequence: -1 })).toEqual([
      ['greater_than_equal', 'body.last_sequence'],
    ]);
    expect(shapesOf(ClientFrame, { ...auth(), timestamp: 1_740_830_400_000 })).toEqual([
      ['string_type', 'body.timestamp'],
    ]);
    expect(shapesOf(ClientFrame, { ...auth(), extra: true })).toEqual([
      ['extra_forbidden', 'body.extra'],
    ]);
  });

  it('subscribe, unsubscribe and ping', () => {
    const channels = ['orders', 'market:BTC-USD:ticker'];
    expect(shapesOf(ClientFrame, { op: 'subscribe', request_id: 's1', channels })).toEqual([]);
    expect(shapesOf(ClientFrame, { op: 'unsubscribe', request_id: 'u1', channels })).toEqual([]);
    expect(shapesOf(ClientFrame, { op: 'ping', request_id: 'p1' })).toEqual([]);
    expect(shapesOf(ClientFrame, { op: 'subscribe', request_id: 's1', channels: [] })).toEqual([
      ['too_short', 'body.channels'],
    ]);
    expect(
      shapesOf(ClientFrame, { op: 'subscribe', request_id: 's1', channels: ['orders', 'book'] }),
    ).toEqual([['channel', 'body.channels.1']]);
    expect(shapesOf(ClientFrame, { op: 'ping' })).toEqual([['missing', 'body.request_id']]);
    expect(shapesOf(ClientFrame, { op: 'ping', request_id: '' })).toEqual([
      ['string_too_short', 'body.request_id'],
    ]);
    expect(shapesOf(ClientFrame, { op: 'ping', request_id: repeat(81) })).toEqual([
      ['string_too_long', 'body.request_id'],
    ]);
    expect(shapesOf(ClientFrame, { op: 'ping', request_id: 'has space' })).toEqual([
      ['string_pattern_mismatch', 'body.request_id'],
    ]);
  });
});

describe('server frames', () => {
  const frames: Array<[string, Record<string, unknown>]> = [
    [
      'challenge',
      { version: 1, type: 'challenge', challenge: 'c-123', expires_at_ms: 1_740_830_430_000 },
    ],
    [
      'authenticated',
      {
        version: 1,
        type: 'authenticated',
        request_id: 'auth-1',
        key_id: 'key-1',
        scopes: ['orders:read'],
        sequence: 0,
      },
    ],
    ['subscribed', { version: 1, type: 'subscribed', request_id: 's1', channels: ['orders'] }],
    ['unsubscribed', { version: 1, type: 'unsubscribed', request_id: 'u1', channels: ['orders'] }],
    ['pong', { version: 1, type: 'pong', request_id: 'p1' }],
    ['heartbeat', { version: 1, type: 'heartbeat', occurred_at: TIME, sequence: null }],
    ['heartbeat after auth', { version: 1, type: 'heartbeat', occurred_at: TIME, sequence: 12 }],
    [
      'error',
      {
        version: 1,
        type: 'error',
        request_id: null,
        error: {
          code: 'SCOPE_REQUIRED',
          message: 'needs fills:read',
          retryable: false,
          details: {},
        },
      },
    ],
    ['ticker.snapshot', ticker('ticker.snapshot')],
    ['ticker.update', ticker('ticker.update')],
    ['authoritative_status', orderStatusEvent(1)],
    ['fill', privateEvent('fills', 'fill', fill())],
    ['position', privateEvent('positions', 'position', position())],
    ['account', privateEvent('account', 'account', account())],
    [
      'cancel_all_after.triggered',
      privateEvent('risk', 'cancel_all_after.triggered', {
        deadline_at: TIME,
        triggered_at: TIME,
        cancelled_order_ids: ['ord-1', 'ord-2'],
      }),
    ],
    [
      'liquidation',
      privateEvent('risk', 'liquidation', {
        position_id: 'pos-00000001',
        market_id: 'BTC-USD',
        price: '60000',
        quantity: '0.5',
      }),
    ],
  ];

  it.each(frames)('%s parses as a ServerFrame and refuses unknown fields', (_name, frame) => {
    expect(shapesOf(ServerFrame, frame)).toEqual([]);
    expect(shapesOf(ServerFrame, { ...frame, extra: 1 })).toEqual([
      ['extra_forbidden', 'body.extra'],
    ]);
    expect(shapesOf(ServerFrame, { ...frame, version: 2 })).toEqual([
      ['literal_error', 'body.version'],
    ]);
  });

  it('ticker prices are decimal strings or null; data_status is market data status', () => {
    const frame = ticker('ticker.snapshot');
    const data = frame.data as Record<string, unknown>;
    expect(
      shapesOf(TickerSnapshotFrame, { ...frame, data: { ...data, mark_price: 65000 } }),
    ).toEqual([['string_type', 'body.data.mark_price']]);
    expect(
      shapesOf(TickerSnapshotFrame, { ...frame, data: { ...data, data_status: 'degraded' } }),
    ).toEqual([['enum', 'body.data.data_status']]);
    expect(shapesOf(TickerSnapshotFrame, { ...frame, channel: 'orders' })).toEqual([
      ['string_pattern_mismatch', 'body.channel'],
    ]);
  });
});

describe('private events', () => {
  it('an order event carries exactly entity_type, entity_id, from_state and to_state', () => {
    const event = orderStatusEvent(3);
    expect(PrivateEvent.parse(event)).toEqual(event);
    const data = event.data as Record<string, unknown>;
    expect(shapesOf(PrivateEvent, { ...event, data: { ...data, from_state: null } })).toEqual([]);
    expect(shapesOf(PrivateEvent, { ...event, data: { ...data, order_id: 'ord-1' } })).toEqual([
      ['extra_forbidden', 'body.data.order_id'],
    ]);
    expect(shapesOf(PrivateEvent, { ...event, data: { ...data, to_state: 'open' } })).toEqual([
      ['enum', 'body.data.to_state'],
    ]);
    expect(shapesOf(PrivateEvent, { ...event, data: { ...data, to_state: null } })).toEqual([
      ['enum', 'body.data.to_state'],
    ]);
    const { entity_type: _removed, ...withoutType } = data;
    expect(shapesOf(PrivateEvent, { ...event, data: withoutType })).toEqual([
      ['missing', 'body.data.entity_type'],
    ]);
  });

  it('needs a positive integer sequence and a UUID event_id', () => {
    expect(shapesOf(PrivateEvent, orderStatusEvent(0))).toEqual([
      ['greater_than_equal', 'body.sequence'],
    ]);
    expect(shapesOf(PrivateEvent, { ...orderStatusEvent(1), sequence: 1.5 })).toEqual([
      ['int_from_float', 'body.sequence'],
    ]);
    expect(shapesOf(PrivateEvent, { ...orderStatusEvent(1), event_id: 'evt-1' })).toEqual([
      ['uuid_parsing', 'body.event_id'],
    ]);
  });

  it('ties each type to its channel', () => {
    expect(shapesOf(PrivateEvent, { ...orderStatusEvent(1), channel: 'fills' })).toEqual([
      ['literal_error', 'body.channel'],
    ]);
    expect(privateEventChannel).toEqual({
      authoritative_status: 'orders',
      fill: 'fills',
      position: 'positions',
      account: 'account',
      'cancel_all_after.triggered': 'risk',
      liquidation: 'risk',
      funding_payment: 'account',
    });
  });

  it('carries the resource schemas as data', () => {
    expect(shapesOf(PrivateEvent, privateEvent('fills', 'fill', { ...fill(), extra: 1 }))).toEqual([
      ['extra_forbidden', 'body.data.extra'],
    ]);
    expect(
      shapesOf(PrivateEvent, privateEvent('risk', 'liquidation', { position_id: 'p' })),
    ).toEqual([
      ['missing', 'body.data.market_id'],
      ['missing', 'body.data.price'],
      ['missing', 'body.data.quantity'],
    ]);
  });

  it('EventsPage: data of events, has_more and next_after_sequence', () => {
    const page = {
      data: [orderStatusEvent(1), orderStatusEvent(2)],
      has_more: false,
      next_after_sequence: 2,
    };
    expect(shapesOf(EventsPage, page)).toEqual([]);
    expect(shapesOf(EventsPage, { data: [], has_more: false, next_after_sequence: 0 })).toEqual([]);
    expect(shapesOf(EventsPage, { data: [], has_more: false })).toEqual([
      ['missing', 'body.next_after_sequence'],
    ]);
    expect(shapesOf(EventsPage, { ...page, events: [] })).toEqual([
      ['extra_forbidden', 'body.events'],
    ]);
  });
});
