/**
 * The stream client against the emulator's WebSocket on a loopback socket: every channel, then
 * the fault controls (dropped and duplicated frames, disconnects in the middle of fills, a
 * restart, silence). Each fault test ends with the same check: the events delivered are exactly
 * the account's event log, each once, in order.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Observable } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  RestClient,
  type ResyncSignal,
  type StreamClient,
  type TickerFrame,
  type VenueError,
} from '../../src/client/index.ts';
import type { PrivateEvent } from '../../src/protocol/index.ts';
import { caughtUp, Environment, requestId, stateReached } from './environment.ts';
import { until } from './helpers.ts';

let environment: Environment | undefined;
const folders: string[] = [];

afterEach(async () => {
  await environment?.close();
  environment = undefined;
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function marketOrder(side: 'buy' | 'sell' = 'buy', quantity = '0.01') {
  const id = requestId('mkt');
  return {
    request_id: id,
    client_order_id: `c-${id}`,
    market_id: 'BTC-PERP',
    side,
    type: 'market' as const,
    quantity,
    leverage: 5,
    max_slippage_percent: '1',
  };
}

function limitOrder(price: string) {
  const id = requestId('lim');
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

function record(stream: StreamClient) {
  const events: PrivateEvent[] = [];
  const resyncs: ResyncSignal[] = [];
  const errors: VenueError[] = [];
  stream.events$.subscribe((event) => events.push(event));
  stream.resync$.subscribe((signal) => resyncs.push(signal));
  stream.errors$.subscribe((error) => errors.push(error));
  return { events, resyncs, errors };
}

/** Exactly the log, each event once, in order. */
function expectExactlyTheLog(events: readonly PrivateEvent[], log: readonly PrivateEvent[]): void {
  expect(events.map((event) => event.sequence)).toEqual(log.map((event) => event.sequence));
  expect(events.map((event) => event.event_id)).toEqual(log.map((event) => event.event_id));
  expect(events).toEqual(log);
}

describe('channels', () => {
  it('delivers every private channel, the ticker as snapshot then updates, and answers pings', async () => {
    environment = await Environment.start();
    const stream = environment.stream({ startAfterSequence: 0 });
    const { events, resyncs } = record(stream);
    const byChannel: Record<string, number> = {};
    const channels: Record<string, Observable<unknown>> = {
      orders: stream.orders$,
      fills: stream.fills$,
      positions: stream.positions$,
      account: stream.account$,
      risk: stream.risk$,
    };
    for (const [name, source] of Object.entries(channels)) {
      byChannel[name] = 0;
      source.subscribe(() => {
        byChannel[name] = (byChannel[name] ?? 0) + 1;
      });
    }
    const tickers: TickerFrame[] = [];
    const ticker = stream.ticker$('BTC-PERP').subscribe((frame) => tickers.push(frame));
    await stream.connect();
    expect(stream.state).toBe('live');
    await until(() => tickers.length > 0, 'the ticker snapshot');
    expect(tickers[0]?.type).toBe('ticker.snapshot');

    const { rest, emulator } = environment;
    await rest.placeOrder(marketOrder());
    await rest.placeOrder(limitOrder('50000'));
    await environment.advance(3_000);
    await rest.setCancelAllAfter({
      request_id: requestId('caa'),
      timeout_seconds: 30,
    });
    emulator.controls.fireCancelAllAfter(environment.accountId);
    await caughtUp(environment, stream);

    expectExactlyTheLog(events, environment.log());
    expect(byChannel).toMatchObject({
      orders: expect.any(Number),
      fills: 1,
      positions: 1,
      risk: 1,
    });
    expect(byChannel.orders).toBeGreaterThanOrEqual(4);
    expect(byChannel.account).toBeGreaterThanOrEqual(1);
    expect(tickers.slice(1).some((frame) => frame.type === 'ticker.update')).toBe(true);
    expect(tickers.every((frame) => frame.data.market_id === 'BTC-PERP')).toBe(true);
    expect(Object.isFrozen(events[0])).toBe(true);
    expect(await stream.ping()).toBe(0);
    expect(resyncs).toEqual([]);

    // A second subscriber to the same market starts with the latest state as a snapshot.
    const late: TickerFrame[] = [];
    const second = stream.ticker$('BTC-PERP').subscribe((frame) => late.push(frame));
    expect(late[0]?.type).toBe('ticker.snapshot');
    second.unsubscribe();
    ticker.unsubscribe();
  });

  it('starts after the head when asked for the latest events only', async () => {
    environment = await Environment.start();
    const { rest } = environment;
    await rest.placeOrder(marketOrder());
    await environment.advance(1_000);
    const head = environment.head();
    const stream = environment.stream();
    const { events } = record(stream);
    await stream.connect();
    expect(stream.lastSequence).toBe(head);
    await rest.placeOrder(limitOrder('50000'));
    await environment.advance(1_000);
    await caughtUp(environment, stream);
    expectExactlyTheLog(
      events,
      environment.log().filter((event) => event.sequence > head),
    );
  });

  it('serves the public ticker without a credential', async () => {
    environment = await Environment.start();
    const rest = new RestClient({
      baseUrl: environment.emulator.baseUrl,
      clock: environment.clock,
    });
    environment.clients.push(rest);
    const stream = environment.stream({
      rest,
      url: environment.emulator.wsUrl,
    });
    const frames: TickerFrame[] = [];
    stream.ticker$('ETH-PERP').subscribe((frame) => frames.push(frame));
    await stream.connect();
    await until(() => frames.length > 0, 'the snapshot');
    await environment.advance(3_000);
    await until(() => frames.length > 1, 'an update');
    expect(frames[0]?.type).toBe('ticker.snapshot');
    expect(frames[1]?.type).toBe('ticker.update');
  });

  it('fills channels it does not follow from the log, so nothing is lost', async () => {
    environment = await Environment.start({
      key: { scopes: ['orders:read', 'orders:write'] },
    });
    const stream = environment.stream({ startAfterSequence: 0 });
    const { events, resyncs } = record(stream);
    await stream.connect();
    await environment.rest.placeOrder(marketOrder());
    await environment.advance(2_000);
    await caughtUp(environment, stream);
    expectExactlyTheLog(events, environment.log());
    expect(events.some((event) => event.channel === 'fills')).toBe(true);
    expect(resyncs).toEqual([]);
  });
});

describe('faults', () => {
  it('dropped and duplicated frames: every event exactly once, in order', async () => {
    environment = await Environment.start();
    const stream = environment.stream({ startAfterSequence: 0 });
    const { events, resyncs } = record(stream);
    await stream.connect();
    const { rest, emulator } = environment;
    emulator.controls.dropFrames({ probability: 0.3 });
    emulator.controls.duplicateFrames({ probability: 0.3 });
    for (let index = 0; index < 6; index += 1) {
      await rest.placeOrder(marketOrder(index % 2 === 0 ? 'buy' : 'sell'));
      await environment.advance(500, 100);
    }
    // A heartbeat tells the head, so even a dropped last frame is noticed.
    await environment.advance(10_000);
    await caughtUp(environment, stream);
    expectExactlyTheLog(events, environment.log());
    expect(stream.statistics().gapFills).toBeGreaterThan(0);
    expect(stream.statistics().duplicatesDropped).toBeGreaterThan(0);
    expect(resyncs).toEqual([]);
  });

  for (const abrupt of [false, true]) {
    it(`a ${abrupt ? 'cut' : 'closed'} connection in the middle of fills: every event exactly once`, async () => {
      environment = await Environment.start();
      const stream = environment.stream({ startAfterSequence: 0 });
      const { events, resyncs } = record(stream);
      await stream.connect();
      const { rest, emulator } = environment;
      for (let index = 0; index < 4; index += 1) {
        await rest.placeOrder(marketOrder(index % 2 === 0 ? 'buy' : 'sell'));
        // The order is submitted and filled 20 ms later: cut the stream in between.
        environment.clock.advanceBy(10);
        emulator.controls.disconnectWebSockets({ abrupt });
        await rest.placeOrder(limitOrder(String(50_000 + index)));
        await environment.advance(1_000, 10);
      }
      await environment.advance(10_000);
      await caughtUp(environment, stream);
      await until(() => stream.state === 'live', 'the stream to be live again');
      expectExactlyTheLog(events, environment.log());
      expect(stream.statistics().reconnects).toBeGreaterThanOrEqual(4);
      expect(resyncs).toEqual([]);
    });
  }

  it('an emulator restart on the same port and data: reconnects and resumes exactly once', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'paperbot-stream-'));
    folders.push(dataDir);
    environment = await Environment.start({ emulator: { dataDir } });
    const stream = environment.stream({ startAfterSequence: 0 });
    const { events, resyncs } = record(stream);
    await stream.connect();
    const { rest } = environment;
    await rest.placeOrder(marketOrder());
    await environment.advance(1_000);
    await caughtUp(environment, stream);

    await environment.restartEmulator();
    await until(() => stream.statistics().reconnects > 0, 'the stream to notice the restart');
    await until(() => stream.state === 'live', 'the stream to reconnect');
    await rest.placeOrder(marketOrder('sell'));
    await environment.advance(2_000);
    await caughtUp(environment, stream);
    expectExactlyTheLog(events, environment.log());
    expect(resyncs.filter((signal) => signal.halted)).toEqual([]);
  });

  it('silence: the watchdog reconnects when no heartbeat arrives', async () => {
    environment = await Environment.start({
      emulator: { heartbeatIntervalMs: 3_600_000 },
    });
    const stream = environment.stream({ heartbeatTimeoutMs: 25_000 });
    const { errors } = record(stream);
    await stream.connect();
    await environment.advance(24_000);
    expect(stream.statistics().reconnects).toBe(0);
    await environment.advance(1_000);
    await until(() => stream.statistics().reconnects === 1, 'a reconnect');
    expect(errors.map((error) => error.code)).toContain('HEARTBEAT_TIMEOUT');
    await until(() => stream.state === 'live', 'the stream to be live again');
  });

  it('heartbeats keep a quiet connection alive', async () => {
    environment = await Environment.start();
    const stream = environment.stream({ heartbeatTimeoutMs: 25_000 });
    await stream.connect();
    await environment.advance(60_000);
    expect(stream.statistics().reconnects).toBe(0);
    expect(stream.state).toBe('live');
  });

  it('a sequence going backwards halts delivery until the runtime resets it', async () => {
    environment = await Environment.start();
    const stream = environment.stream({ startAfterSequence: 1_000 });
    const { events, resyncs } = record(stream);
    await stream.connect();
    await until(() => resyncs.length > 0, 'the resync signal');
    expect(resyncs[0]).toMatchObject({
      reason: 'sequence_backwards',
      halted: true,
      lastSequence: 1_000,
    });
    await environment.rest.placeOrder(marketOrder());
    await environment.advance(1_000);
    expect(events).toEqual([]);
    // The runtime reconciled from REST and resumes from the start of this account's log.
    stream.resetSequence(0);
    await environment.advance(10_000);
    await caughtUp(environment, stream);
    expectExactlyTheLog(events, environment.log());
  });

  it('a gap fill that fails signals a resync, and the next fill heals it', async () => {
    environment = await Environment.start();
    const stream = environment.stream({ startAfterSequence: 0 });
    const { events, resyncs } = record(stream);
    await stream.connect();
    const { rest, emulator } = environment;
    emulator.controls.dropFrames({ count: 1 });
    emulator.controls.failRequests({
      endpoint: 'listEvents',
      code: 'EXECUTION_UNAVAILABLE',
      count: 4,
    });
    await rest.placeOrder(marketOrder());
    await environment.advance(1_000, 10);
    await until(() => resyncs.length > 0, 'the resync signal');
    expect(resyncs[0]).toMatchObject({
      reason: 'gap_fill_failed',
      halted: false,
    });
    // The next heartbeat announces the head again; the log answers this time.
    await environment.advance(10_000);
    await caughtUp(environment, stream);
    expectExactlyTheLog(events, environment.log());
  });

  it('a revoked key stops the stream for good', async () => {
    environment = await Environment.start();
    const stream = environment.stream();
    const { errors } = record(stream);
    await stream.connect();
    const failed = stateReached(stream, 'failed');
    environment.emulator.revokeKey(environment.credential.keyId);
    await failed;
    expect(errors.map((error) => error.code)).toContain('KEY_REVOKED');
    await expect(stream.connect()).rejects.toMatchObject({
      code: 'CLIENT_CLOSED',
    });
  });

  it('learns a scope the key lacks from the venue, not from the names in the key file', async () => {
    // Asked for `fills` alone with a key that has only orders:read: the venue's SCOPE_REQUIRED
    // names the scope, and with nothing left to follow the stream fails with the venue's answer.
    environment = await Environment.start({ key: { scopes: ['orders:read'] } });
    const stream = environment.stream({ privateChannels: ['fills'] });
    await expect(stream.connect()).rejects.toMatchObject({
      code: 'SCOPE_REQUIRED',
      source: 'service',
      details: expect.objectContaining({ missing_scopes: ['fills:read'], during: 'auth' }),
    });
    expect(stream.lackingScopes).toEqual(['fills:read']);
  });

  it('drops the channels of the scopes the venue says are missing and follows the rest', async () => {
    environment = await Environment.start({ key: { scopes: ['orders:read', 'orders:write'] } });
    const stream = environment.stream({ startAfterSequence: 0 });
    const errors: string[] = [];
    stream.errors$.subscribe((error) => errors.push(error.message));
    await stream.connect();
    expect(stream.lackingScopes).toEqual(['account:read', 'fills:read']);
    expect(errors.join('\n')).toContain(
      'the venue says the key lacks account:read, fills:read; following only orders',
    );
  });
});
