import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VirtualClock } from '../../../src/core/clock.ts';
import type { RunningEmulator } from '../../../src/emulator/index.ts';
import {
  Book,
  CandleInterval,
  CandleList,
  HealthResponse,
  Market,
  MarketList,
  PublicTradeList,
  RouteList,
  StatusResponse,
  TimeResponse,
} from '../../../src/protocol/index.ts';
import { expectError, publicGet, START_MS, startTestEmulator, TestHttp } from './helpers.ts';

let emulator: RunningEmulator & { clock: VirtualClock };
const http = new TestHttp();

beforeAll(async () => {
  emulator = await startTestEmulator();
  // Two simulated minutes: synthetic takers trade, so trades and candles exist.
  emulator.clock.advanceBy(120_000);
});

afterAll(async () => {
  await http.close();
  await emulator.close();
});

const get = (target: string) => publicGet(http, emulator, target);

describe('public endpoints', () => {
  it('GET /v1/time answers the emulator clock', async () => {
    const reply = await get('/v1/time');
    expect(reply.status).toBe(200);
    const body = TimeResponse.parse(reply.json);
    expect(body.epoch_ms).toBe(START_MS + 120_000);
    expect(body.server_time).toBe('2026-01-01T00:02:00.000Z');
    expect(reply.headers['svc-request-id']).toMatch(/^req_/);
  });

  it('GET /v1/status, /health and /ready', async () => {
    expect(StatusResponse.parse((await get('/v1/status')).json)).toMatchObject({
      status: 'ok',
      environment: 'practice',
      api_version: '1.0.0',
    });
    expect(HealthResponse.parse((await get('/health')).json)).toEqual({
      status: 'ok',
    });
    const ready = await get('/ready');
    expect(ready.status).toBe(200);
    expect(ready.json).toEqual({ ready: true });
  });

  it('GET /v1/routes lists svc-paper with its Practice capabilities', async () => {
    const routes = RouteList.parse((await get('/v1/routes')).json);
    expect(routes).toHaveLength(1);
    expect(routes[0]).toMatchObject({
      route_id: 'svc-paper',
      settlement_asset: 'pUSDC',
      health: 'ready',
      order_submission_enabled: true,
    });
    expect(routes[0]!.capabilities.time_in_force).toEqual(['GTC', 'IOC']);
  });

  it('GET /v1/markets and one market; an unknown market is 404 UNKNOWN_MARKET', async () => {
    const markets = MarketList.parse((await get('/v1/markets')).json);
    expect(markets.map((market) => market.market_id)).toEqual(['BTC-PERP', 'ETH-PERP', 'SOL-PERP']);
    const one = Market.parse((await get('/v1/markets/ETH-PERP')).json);
    expect(one.market_id).toBe('ETH-PERP');
    expect(one.price_tick).toBe('0.01');
    expectError(await get('/v1/markets/NOPE-PERP'), 404, 'UNKNOWN_MARKET');
  });

  it('a market nobody trades has null last price and volume, never zero, and no trades or candles', async () => {
    const sol = Market.parse((await get('/v1/markets/SOL-PERP')).json);
    expect(sol.last_price).toBeNull();
    expect(sol.volume_24h).toBeNull();
    expect(PublicTradeList.parse((await get('/v1/markets/SOL-PERP/trades')).json)).toEqual([]);
    expect(CandleList.parse((await get('/v1/markets/SOL-PERP/candles')).json)).toEqual([]);
  });

  it('book depth 1..200, default 20', async () => {
    const one = Book.parse((await get('/v1/markets/BTC-PERP/book?depth=1')).json);
    expect(one.bids).toHaveLength(1);
    expect(one.asks).toHaveLength(1);
    const full = Book.parse((await get('/v1/markets/BTC-PERP/book?depth=200')).json);
    expect(full.bids.length).toBeGreaterThan(1);
    const standard = Book.parse((await get('/v1/markets/BTC-PERP/book')).json);
    expect(standard.bids.length).toBeLessThanOrEqual(20);
    for (const depth of ['0', '201', '1.5', 'abc', '']) {
      const error = expectError(
        await get(`/v1/markets/BTC-PERP/book?depth=${depth}`),
        422,
        'INVALID_REQUEST',
      );
      expect(error.details).toMatchObject({
        issues: [{ loc: ['query', 'depth'] }],
      });
    }
    const routed = await get('/v1/markets/BTC-PERP/book?route_id=svc-paper&depth=3');
    expect(Book.parse(routed.json).bids).toHaveLength(3);
    expectError(await get('/v1/markets/BTC-PERP/book?route_id=other'), 422, 'INVALID_REQUEST');
  });

  it('trades limit 1..500, newest first', async () => {
    const trades = PublicTradeList.parse((await get('/v1/markets/BTC-PERP/trades?limit=500')).json);
    expect(trades.length).toBeGreaterThan(0);
    const times = trades.map((trade) => trade.occurred_at);
    expect([...times].sort().reverse()).toEqual(times);
    expect(
      PublicTradeList.parse((await get('/v1/markets/BTC-PERP/trades?limit=1')).json),
    ).toHaveLength(1);
    expectError(await get('/v1/markets/BTC-PERP/trades?limit=0'), 422, 'INVALID_REQUEST');
    expectError(await get('/v1/markets/BTC-PERP/trades?limit=501'), 422, 'INVALID_REQUEST');
  });

  it('candles in all eight intervals, limit 1..1000', async () => {
    for (const interval of CandleInterval.options) {
      const reply = await get(`/v1/markets/BTC-PERP/candles?interval=${interval}&limit=1000`);
      const candles = CandleList.parse(reply.json);
      expect(candles.length).toBeGreaterThan(0);
      expect(candles.every((candle) => candle.interval === interval)).toBe(true);
    }
    const minutes = CandleList.parse(
      (await get('/v1/markets/BTC-PERP/candles?interval=1m&limit=1')).json,
    );
    expect(minutes).toHaveLength(1);
    const hourly = CandleList.parse((await get('/v1/markets/BTC-PERP/candles')).json);
    expect(hourly.every((candle) => candle.interval === '1h')).toBe(true);
    expectError(await get('/v1/markets/BTC-PERP/candles?interval=2h'), 422, 'INVALID_REQUEST');
    expectError(await get('/v1/markets/BTC-PERP/candles?limit=1001'), 422, 'INVALID_REQUEST');
  });

  it('refuses unknown and repeated query parameters', async () => {
    const unknown = expectError(await get('/v1/time?x=1'), 422, 'INVALID_REQUEST');
    expect(unknown.details).toEqual({
      issues: [
        {
          type: 'extra_forbidden',
          loc: ['query', 'x'],
          msg: 'Extra inputs are not permitted',
        },
      ],
    });
    expectError(await get('/v1/markets/BTC-PERP/book?depth=1&depth=2'), 422, 'INVALID_REQUEST');
  });

  it('answers HEAD for GET endpoints with headers and no body', async () => {
    const reply = await http.send(emulator.baseUrl, 'HEAD', '/v1/markets');
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('');
    expect(Number(reply.headers['content-length'])).toBeGreaterThan(100);
    expect(reply.headers['svc-request-id']).toMatch(/^req_/);
  });

  it('unknown paths are 404 and wrong methods 405 with Allow, both as envelopes', async () => {
    expectError(await get('/v2/time'), 404, 'NOT_FOUND');
    expectError(await get('/v1/markets/BTC-PERP/book/extra'), 404, 'NOT_FOUND');
    const wrong = await http.send(emulator.baseUrl, 'DELETE', '/v1/markets');
    expectError(wrong, 405, 'METHOD_NOT_ALLOWED');
    expect(wrong.headers.allow).toBe('GET, HEAD');
    const post = await http.send(emulator.baseUrl, 'PUT', '/v1/orders');
    expect(expectError(post, 405, 'METHOD_NOT_ALLOWED').details).toEqual({
      allowed_methods: ['GET', 'HEAD', 'POST'],
    });
    expectError(await get('/v1/ws'), 426, 'UPGRADE_REQUIRED');
  });

  it('a body on an endpoint that takes none is refused', async () => {
    const reply = await http.send(emulator.baseUrl, 'GET', '/v1/time', {
      a: 1,
    });
    const error = expectError(reply, 422, 'INVALID_REQUEST');
    expect(error.details).toEqual({
      issues: [
        {
          type: 'extra_forbidden',
          loc: ['body'],
          msg: 'This endpoint takes no request body',
        },
      ],
    });
  });

  it('/ready is 503 EXECUTION_UNAVAILABLE while the route is degraded or disabled', async () => {
    for (const health of ['degraded', 'disabled'] as const) {
      emulator.controls.setRouteHealth(health);
      expectError(await get('/ready'), 503, 'EXECUTION_UNAVAILABLE');
      expect(StatusResponse.parse((await get('/v1/status')).json).status).toBe('degraded');
    }
    emulator.controls.setRouteHealth('ready');
    expect((await get('/ready')).status).toBe(200);
  });

  it('never reached the last-resort handler', () => {
    expect(emulator.stats()).toMatchObject({
      internalErrors: 0,
      responseMismatches: 0,
    });
  });
});
