import { connect } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { VirtualClock } from '../../../src/core/clock.ts';
import type { RunningEmulator } from '../../../src/emulator/index.ts';
import {
  AuthenticatedFrame,
  ChallengeFrame,
  ErrorEnvelope,
  ErrorFrame,
  EventsPage,
  HeartbeatFrame,
  PrivateEvent,
  ServerFrame,
  TickerSnapshotFrame,
  TickerUpdateFrame,
} from '../../../src/protocol/index.ts';
import {
  limitOrder,
  marketOrder,
  rawRequest,
  requestId,
  SignedClient,
  startTestEmulator,
  TestHttp,
  TestSocket,
} from './helpers.ts';

type TestEmulator = RunningEmulator & { clock: VirtualClock };
let emulator: TestEmulator;
const http = new TestHttp();
const sockets: TestSocket[] = [];

beforeAll(async () => {
  emulator = await startTestEmulator();
});

afterEach(() => {
  for (const socket of sockets.splice(0)) socket.close();
  emulator.controls.clearFaults();
});

afterAll(async () => {
  await http.close();
  await emulator.close();
});

async function open(): Promise<TestSocket> {
  const socket = await TestSocket.open(emulator.wsUrl);
  sockets.push(socket);
  await socket.nextOfType('challenge');
  return socket;
}

function isEvent(frame: Record<string, unknown>): boolean {
  return typeof frame.event_id === 'string';
}

function errorOf(frame: Record<string, unknown>) {
  return ErrorFrame.parse(frame).error;
}

describe('WebSocket stream', () => {
  it('sends the challenge first, with expires_at_ms', async () => {
    const socket = await TestSocket.open(emulator.wsUrl);
    sockets.push(socket);
    const first = ChallengeFrame.parse(await socket.next());
    expect(first.expires_at_ms).toBe(emulator.clock.now() + 30_000);
    expect(socket.frames).toHaveLength(1);
  });

  it('answers ping with pong and every frame parses as a server frame', async () => {
    const socket = await open();
    socket.send({ op: 'ping', request_id: 'ping-1' });
    expect(await socket.nextOfType('pong')).toEqual({
      version: 1,
      type: 'pong',
      request_id: 'ping-1',
    });
    for (const frame of socket.frames) ServerFrame.parse(frame);
  });

  it('public ticker: subscribed, snapshot, then updates as the market moves', async () => {
    const socket = await open();
    const confirmed = await socket.subscribe(['market:BTC-PERP:ticker']);
    expect(confirmed).toMatchObject({
      type: 'subscribed',
      channels: ['market:BTC-PERP:ticker'],
    });
    const snapshot = TickerSnapshotFrame.parse(await socket.nextOfType('ticker.snapshot'));
    expect(snapshot.data.market_id).toBe('BTC-PERP');
    expect(snapshot.data.data_status).toBe('live');
    emulator.clock.advanceBy(1_000);
    const update = TickerUpdateFrame.parse(await socket.nextOfType('ticker.update'));
    expect(update.channel).toBe('market:BTC-PERP:ticker');
    const unsubscribed = requestId();
    socket.send({
      op: 'unsubscribe',
      request_id: unsubscribed,
      channels: ['market:BTC-PERP:ticker'],
    });
    expect(await socket.next((frame) => frame.request_id === unsubscribed)).toMatchObject({
      type: 'unsubscribed',
    });
    emulator.clock.advanceBy(1_000);
    await socket.barrier();
    expect(socket.frames.filter((frame) => frame.type === 'ticker.update')).toHaveLength(1);
  });

  it('an unknown market is an error frame UNKNOWN_MARKET', async () => {
    const socket = await open();
    const reply = await socket.subscribe(['market:NOPE-PERP:ticker']);
    expect(errorOf(reply).code).toBe('UNKNOWN_MARKET');
  });

  it('a private subscribe without auth, or without the scope, is SCOPE_REQUIRED', async () => {
    const socket = await open();
    const unauthenticated = await socket.subscribe(['orders']);
    expect(errorOf(unauthenticated)).toMatchObject({
      code: 'SCOPE_REQUIRED',
      details: { channel: 'orders', required_scope: 'orders:read' },
    });
    const credential = emulator.createKey({ scopes: ['orders:read'] });
    await socket.authenticate(credential, emulator.clock.now());
    expect(errorOf(await socket.subscribe(['fills'])).code).toBe('SCOPE_REQUIRED');
    expect(errorOf(await socket.subscribe(['account'])).code).toBe('SCOPE_REQUIRED');
    expect((await socket.subscribe(['orders'])).type).toBe('subscribed');
  });

  it('auth asking for scopes the key lacks is SCOPE_REQUIRED', async () => {
    const socket = await open();
    const credential = emulator.createKey({ scopes: ['orders:read'] });
    const reply = await socket.authenticate(credential, emulator.clock.now(), {
      scopes: ['orders:read', 'fills:read'],
    });
    expect(errorOf(reply)).toMatchObject({
      code: 'SCOPE_REQUIRED',
      details: { missing_scopes: ['fills:read'] },
    });
  });

  it('authenticates with the account sequence, replays retained events above last_sequence, then live ones', async () => {
    const credential = emulator.createKey();
    const trader = new SignedClient(http, emulator, credential);
    await trader.post('/v1/orders', marketOrder());
    emulator.clock.advanceBy(50);
    const socket = await open();
    const authenticated = AuthenticatedFrame.parse(
      await socket.authenticate(credential, emulator.clock.now(), {
        lastSequence: 2,
      }),
    );
    const sequence = authenticated.sequence;
    expect(sequence).toBeGreaterThan(4);
    expect(authenticated.scopes).toEqual(credential.scopes);
    await socket.subscribe(['orders']);
    await socket.barrier();
    const replayed = socket.frames.filter(isEvent);
    const retained = EventsPage.parse((await trader.get('/v1/events?after_sequence=2')).json).data;
    expect(replayed).toEqual(retained.filter((event) => event.channel === 'orders'));
    expect(replayed.length).toBeGreaterThan(0);
    // Subscribing to fills later replays fills above last_sequence too.
    await socket.subscribe(['fills', 'account', 'positions', 'risk']);
    await socket.barrier();
    const after = socket.frames.filter(isEvent).map((frame) => PrivateEvent.parse(frame));
    expect(new Set(after.map((event) => event.sequence)).size).toBe(sequence - 2);
    // Live events follow, in sequence order.
    const live = await trader.post('/v1/orders', limitOrder());
    expect(live.status).toBe(202);
    const pending = PrivateEvent.parse(
      await socket.next((frame) => frame.sequence === sequence + 1),
    );
    expect(pending).toMatchObject({
      type: 'authoritative_status',
      data: { to_state: 'PENDING' },
    });
  });

  it('heartbeats every 10 s on the clock: sequence null before auth, the account sequence after', async () => {
    const socket = await open();
    emulator.clock.advanceBy(10_000);
    const before = HeartbeatFrame.parse(await socket.nextOfType('heartbeat'));
    expect(before.sequence).toBeNull();
    const credential = emulator.createKey();
    await new SignedClient(http, emulator, credential).post('/v1/orders', limitOrder());
    await socket.authenticate(credential, emulator.clock.now());
    emulator.clock.advanceBy(10_000);
    const after = HeartbeatFrame.parse(await socket.nextOfType('heartbeat'));
    expect(after.sequence).toBeGreaterThanOrEqual(1);
  });

  it('an expired challenge, a reused one and a bad signature fail auth', async () => {
    const credential = emulator.createKey();
    const late = await open();
    emulator.clock.advanceBy(30_001);
    expect(errorOf(await late.authenticate(credential, emulator.clock.now()))).toMatchObject({
      code: 'INVALID_SIGNATURE',
      details: { reason: 'challenge_expired' },
    });
    const twice = await open();
    expect((await twice.authenticate(credential, emulator.clock.now())).type).toBe('authenticated');
    expect(errorOf(await twice.authenticate(credential, emulator.clock.now()))).toMatchObject({
      code: 'INVALID_SIGNATURE',
      details: { reason: 'challenge_reused' },
    });
    const wrong = await open();
    const other = await open();
    const otherChallenge = String(other.frames[0]!.challenge);
    expect(
      errorOf(
        await wrong.authenticate(credential, emulator.clock.now(), {
          challenge: otherChallenge,
        }),
      ),
    ).toMatchObject({
      code: 'INVALID_SIGNATURE',
      details: { reason: 'bad_signature' },
    });
  });

  it('malformed frames are INVALID_REQUEST error frames and the connection stays usable', async () => {
    const socket = await open();
    for (const frame of [
      'not json',
      '[]',
      '{"op":"dance","request_id":"r-1"}',
      '{"op":"subscribe","request_id":"r-2","channels":["nope"]}',
      '{"op":"ping"}',
    ]) {
      socket.send(frame);
      const error = errorOf(await socket.nextOfType('error'));
      expect(error.code).toBe('INVALID_REQUEST');
    }
    socket.socket.send(Buffer.from([1, 2, 3]), { binary: true });
    expect(errorOf(await socket.nextOfType('error')).code).toBe('INVALID_REQUEST');
    socket.send('{"op":"subscribe","request_id":"r-3","channels":[]}');
    const echoed = ErrorFrame.parse(await socket.nextOfType('error'));
    expect(echoed.request_id).toBe('r-3');
    await socket.barrier();
  });

  it('a revoked key stops private updates', async () => {
    const credential = emulator.createKey();
    const trader = new SignedClient(http, emulator, credential);
    const socket = await open();
    await socket.authenticate(credential, emulator.clock.now());
    await socket.subscribe(['orders']);
    emulator.revokeKey(credential.keyId);
    expect(errorOf(await socket.nextOfType('error')).code).toBe('KEY_REVOKED');
    const second = emulator.createKey({ accountId: credential.accountId });
    await new SignedClient(http, emulator, second).post('/v1/orders', limitOrder());
    await socket.barrier();
    expect(socket.frames.some((frame) => frame.channel === 'orders')).toBe(false);
    expect(errorOf(await socket.subscribe(['orders'])).code).toBe('SCOPE_REQUIRED');
    expect(trader.credential.keyId).toBe(credential.keyId);
  });

  it('refuses bad upgrades with the envelope and SVC-REQUEST-ID', async () => {
    const headers = {
      connection: 'Upgrade',
      upgrade: 'websocket',
      'sec-websocket-version': '13',
      'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
    };
    const wrongPath = await rawUpgrade('/v1/other', headers);
    expect(wrongPath.status).toBe(404);
    expect(wrongPath.requestId).toMatch(/^req_/);
    expect(ErrorEnvelope.parse(wrongPath.json).error.code).toBe('NOT_FOUND');
    const badKey = await rawUpgrade('/v1/ws', {
      ...headers,
      'sec-websocket-key': 'short',
    });
    expect(badKey.status).toBe(400);
    expect(ErrorEnvelope.parse(badKey.json).error).toMatchObject({
      code: 'BAD_REQUEST',
      request_id: badKey.requestId,
    });
    const badVersion = await rawUpgrade('/v1/ws', {
      ...headers,
      'sec-websocket-version': '7',
    });
    expect(badVersion.status).toBe(400);
    const accepted = await rawRequest(emulator.port, 'GET', '/v1/ws');
    expect(accepted.status).toBe(426);
  });
});

async function rawUpgrade(path: string, headers: Record<string, string>) {
  const text = await new Promise<string>((resolve, reject) => {
    const socket = connect(emulator.port, '127.0.0.1', () => {
      socket.write(
        `GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n${Object.entries(headers)
          .map(([name, value]) => `${name}: ${value}`)
          .join('\r\n')}\r\n\r\n`,
      );
    });
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk.toString();
    });
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
  });
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const status = Number(head.split(' ')[1]);
  const requestId = /svc-request-id: (\S+)/i.exec(head)?.[1];
  return { status, requestId, json: JSON.parse(body) as unknown };
}
