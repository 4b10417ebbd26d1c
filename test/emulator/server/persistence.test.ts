import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../src/core/clock.ts';
import {
  EventsPage,
  FillPage,
  MutationStatus,
  Order,
  OrderPage,
  PositionPage,
} from '../../../src/protocol/index.ts';
import {
  expectError,
  limitOrder,
  marketOrder,
  SignedClient,
  START_MS,
  startTestEmulator,
  TestHttp,
  TestSocket,
} from './helpers.ts';

let folder: string;
let http: TestHttp;

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'paperbot-emulator-data-'));
  http = new TestHttp();
});

afterEach(async () => {
  await http.close();
  await rm(folder, { recursive: true, force: true });
});

describe('persistence with a data dir', () => {
  it('keeps keys, accounts, orders, fills, positions, request records and events across a restart on the same port', async () => {
    const clock = new VirtualClock(START_MS);
    const first = await startTestEmulator({ clock, dataDir: folder });
    const credential = first.createKey();
    const revoked = first.createKey({ accountId: credential.accountId });
    first.revokeKey(revoked.keyId);
    const before = new SignedClient(http, first, credential);
    const resting = limitOrder();
    const taking = marketOrder({ quantity: '0.03' });
    expect((await before.post('/v1/orders', resting)).status).toBe(202);
    expect((await before.post('/v1/orders', taking)).status).toBe(202);
    clock.advanceBy(50);
    const socket = await TestSocket.open(first.wsUrl);
    await socket.nextOfType('challenge');
    const snapshot = {
      orders: OrderPage.parse((await before.get('/v1/orders')).json),
      fills: FillPage.parse((await before.get('/v1/fills')).json),
      positions: PositionPage.parse((await before.get('/v1/positions')).json),
      events: EventsPage.parse((await before.get('/v1/events')).json),
      request: MutationStatus.parse((await before.get(`/v1/requests/${resting.request_id}`)).json),
    };
    const port = first.port;
    const token = first.adminToken;
    await first.close();
    await socket.closed;
    expect(first.stats().webSocketConnections).toBe(0);

    const second = await startTestEmulator({ clock, dataDir: folder, port });
    try {
      expect(second.port).toBe(port);
      expect(second.adminToken).toBe(token);
      const after = new SignedClient(http, second, credential);
      expect(OrderPage.parse((await after.get('/v1/orders')).json)).toEqual(snapshot.orders);
      expect(FillPage.parse((await after.get('/v1/fills')).json)).toEqual(snapshot.fills);
      expect(
        PositionPage.parse((await after.get('/v1/positions')).json).data.map((p) => p.position_id),
      ).toEqual(snapshot.positions.data.map((p) => p.position_id));
      expect(EventsPage.parse((await after.get('/v1/events')).json)).toEqual(snapshot.events);
      expect(
        MutationStatus.parse((await after.get(`/v1/requests/${resting.request_id}`)).json),
      ).toEqual(snapshot.request);
      const replay = await after.post('/v1/orders', resting);
      expect(replay.status).toBe(202);
      expect(replay.headers['svc-idempotent-replay']).toBe('true');
      expectError(
        await after.post('/v1/orders', { ...resting, price: '1' }),
        409,
        'IDEMPOTENCY_CONFLICT',
      );
      expectError(
        await new SignedClient(http, second, revoked).get('/v1/account'),
        401,
        'KEY_REVOKED',
      );
      const newOrder = Order.parse((await after.post('/v1/orders', limitOrder())).json);
      expect(snapshot.orders.data.map((order) => order.order_id)).not.toContain(newOrder.order_id);
    } finally {
      await second.close();
    }
  });

  it('keeps the admin token in the data dir with mode 0600', async () => {
    const emulator = await startTestEmulator({ dataDir: folder });
    try {
      const path = join(folder, 'admin-token');
      expect(emulator.adminTokenFile).toBe(path);
      expect((await stat(path)).mode & 0o777).toBe(0o600);
      expect((await readFile(path, 'utf8')).trim()).toBe(emulator.adminToken);
      expect((await stat(folder)).mode & 0o077).toBe(0);
    } finally {
      await emulator.close();
    }
  });

  it('without a data dir keeps nothing and the token only in the process', async () => {
    const first = await startTestEmulator();
    expect(first.adminTokenFile).toBeNull();
    const credential = first.createKey();
    const port = first.port;
    await first.close();
    const second = await startTestEmulator({ port });
    try {
      const reply = await new SignedClient(http, second, credential).get('/v1/account');
      expect(expectError(reply, 401, 'INVALID_SIGNATURE').details).toMatchObject({
        reason: 'unknown_key',
      });
      expect(second.adminToken).not.toBe(first.adminToken);
    } finally {
      await second.close();
    }
  });

  it('close() twice is safe and the port is free at once', async () => {
    const emulator = await startTestEmulator();
    const port = emulator.port;
    const held = await TestSocket.open(emulator.wsUrl);
    await held.nextOfType('challenge');
    await Promise.all([emulator.close(), emulator.close()]);
    await held.closed;
    const again = await startTestEmulator({ port });
    await again.close();
  });
});
