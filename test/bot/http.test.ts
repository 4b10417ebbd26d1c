import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Subject } from 'rxjs';
import { request } from 'undici';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { VirtualClock } from '../../src/core/clock.ts';
import {
  type BotHttpServer,
  type HealthReport,
  startBotHttpServer,
} from '../../src/cli/bot/http.ts';
import {
  createBotMetrics,
  type IntentLatency,
  type MetricsStatus,
  type ReconciliationSummary,
} from '../../src/cli/bot/metrics.ts';
import { renderStatus, StatusDocument } from '../../src/cli/bot/status-view.ts';
import type { IntentOutcome, StampedIntent } from '../../src/runtime/intents.ts';
import {
  delay,
  FIXTURE_STRATEGIES,
  spawnBot,
  startPacedEmulator,
  writeBotConfig,
  writeEmulatorKey,
} from './helpers.ts';

const servers: BotHttpServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function get(url: string, method: 'GET' | 'POST' = 'GET') {
  const response = await request(url, { method });
  return {
    status: response.statusCode,
    type: String(response.headers['content-type']),
    text: await response.body.text(),
  };
}

const intent: StampedIntent = {
  strategyId: 'mm',
  sequence: 1,
  requestId: 'mm:epoch:1',
  clientOrderId: 'mm:epoch:1',
  intent: {
    kind: 'place',
    marketId: 'BTC-PERP',
    side: 'buy',
    type: 'limit',
    quantity: '1',
    price: '10',
  },
  emittedAt: 0,
};

function fakeKernel(clock: VirtualClock) {
  const state: { status: MetricsStatus } = {
    status: {
      tradingState: 'ACTIVE',
      mayTrade: true,
      reconciled: true,
      deadman: { phase: 'armed', deadlineAt: clock.now() + 45_000 },
      unknownIntents: 1,
      unresolvedIntents: 0,
      openOrders: [{}, {}],
      positions: [{}],
      account: { total_equity: '10012.5' },
      strategies: [{ id: 'mm', status: 'running' }],
    },
  };
  return {
    state,
    status: () => state.status,
    outcomes$: new Subject<IntentOutcome>(),
    denials$: new Subject<{ denials: { rule: string }[] }>(),
    reconciliation$: new Subject<ReconciliationSummary>(),
    fills$: new Subject<{ market_id: string; side: string }>(),
    intentLatency$: new Subject<IntentLatency>(),
  };
}

/** The value of one sample line, e.g. `paperbot_may_trade 1`. */
function sample(text: string, name: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

describe('metrics', () => {
  it('counts kernel events and reads state gauges from the status when scraped', async () => {
    const clock = new VirtualClock(1_000_000);
    const kernel = fakeKernel(clock);
    const stream = { state: 'live', resync$: new Subject<{ reason: string }>() };
    const metrics = createBotMetrics({ clock, processMetrics: false });
    const before = await metrics.registry.metrics();
    expect(sample(before, 'paperbot_up')).toBe(0);

    metrics.attachKernel(kernel);
    metrics.attachStream(stream);
    kernel.outcomes$.next({ status: 'accepted', intent, orderId: 'o1' });
    kernel.outcomes$.next({ status: 'accepted', intent, orderId: 'o2' });
    kernel.outcomes$.next({ status: 'unknown', intent, reason: 'timeout' });
    kernel.outcomes$.next({ status: 'resolved', intent, resolution: 'accepted', orderId: 'o3' });
    kernel.denials$.next({
      denials: [{ rule: 'max_order_notional' }, { rule: 'price_band_percent' }],
    });
    kernel.denials$.next({ denials: [{ rule: 'max_order_notional' }] });
    kernel.fills$.next({ market_id: 'BTC-PERP', side: 'buy' });
    kernel.reconciliation$.next({
      ok: true,
      missingLocally: [],
      foreignOrders: [{}, {}],
      missingAtVenue: [{}],
      stateMismatches: [],
      positionMismatches: [],
    });
    kernel.reconciliation$.next({
      ok: false,
      missingLocally: [],
      foreignOrders: [],
      missingAtVenue: [],
      stateMismatches: [],
      positionMismatches: [],
    });
    kernel.intentLatency$.next({ tickToPlaceMs: 12, placeMs: 4 });
    kernel.intentLatency$.next({ tickToPlaceMs: null, placeMs: 3000 });
    stream.resync$.next({ reason: 'gap' });
    clock.advanceTo(1_010_000);

    const text = await metrics.registry.metrics();
    expect(sample(text, 'paperbot_up')).toBe(1);
    expect(sample(text, 'paperbot_intent_outcomes_total{strategy="mm",outcome="accepted"}')).toBe(
      2,
    );
    expect(sample(text, 'paperbot_intent_outcomes_total{strategy="mm",outcome="unknown"}')).toBe(1);
    expect(
      sample(text, 'paperbot_intent_outcomes_total{strategy="mm",outcome="resolved_accepted"}'),
    ).toBe(1);
    expect(sample(text, 'paperbot_risk_denials_total{rule="max_order_notional"}')).toBe(2);
    expect(sample(text, 'paperbot_risk_denials_total{rule="price_band_percent"}')).toBe(1);
    expect(sample(text, 'paperbot_fills_total{market="BTC-PERP",side="buy"}')).toBe(1);
    expect(sample(text, 'paperbot_reconciliations_total{result="ok"}')).toBe(1);
    expect(sample(text, 'paperbot_reconciliations_total{result="failed"}')).toBe(1);
    expect(sample(text, 'paperbot_reconciliation_differences_total{kind="foreign_orders"}')).toBe(
      2,
    );
    expect(sample(text, 'paperbot_reconciliation_differences_total{kind="missing_at_venue"}')).toBe(
      1,
    );
    expect(sample(text, 'paperbot_stream_resyncs_total{reason="gap"}')).toBe(1);
    expect(sample(text, 'paperbot_tick_to_place_seconds_count')).toBe(1);
    expect(sample(text, 'paperbot_tick_to_place_seconds_bucket{le="0.025"}')).toBe(1);
    expect(sample(text, 'paperbot_tick_to_place_seconds_bucket{le="0.01"}')).toBe(0);
    expect(sample(text, 'paperbot_place_seconds_count')).toBe(2);
    expect(sample(text, 'paperbot_place_seconds_sum')).toBeCloseTo(3.004);
    expect(sample(text, 'paperbot_trading_state{state="ACTIVE"}')).toBe(1);
    expect(sample(text, 'paperbot_trading_state{state="HALTED"}')).toBe(0);
    expect(sample(text, 'paperbot_may_trade')).toBe(1);
    expect(sample(text, 'paperbot_unknown_intents')).toBe(1);
    expect(sample(text, 'paperbot_open_orders')).toBe(2);
    expect(sample(text, 'paperbot_positions')).toBe(1);
    expect(sample(text, 'paperbot_account_equity')).toBe(10012.5);
    expect(sample(text, 'paperbot_deadman_armed')).toBe(1);
    expect(sample(text, 'paperbot_deadman_seconds_to_deadline')).toBe(35);
    expect(sample(text, 'paperbot_strategy_running{strategy="mm",status="running"}')).toBe(1);
    expect(sample(text, 'paperbot_stream_state{state="live"}')).toBe(1);
    expect(sample(text, 'paperbot_stream_state{state="backoff"}')).toBe(0);

    kernel.state.status = {
      ...kernel.state.status,
      tradingState: 'HALTED',
      mayTrade: false,
      deadman: { phase: 'disarmed', deadlineAt: null },
    };
    const later = await metrics.registry.metrics();
    expect(sample(later, 'paperbot_trading_state{state="HALTED"}')).toBe(1);
    expect(sample(later, 'paperbot_trading_state{state="ACTIVE"}')).toBe(0);
    expect(sample(later, 'paperbot_may_trade')).toBe(0);
    expect(sample(later, 'paperbot_deadman_armed')).toBe(0);

    metrics.dispose();
    kernel.fills$.next({ market_id: 'BTC-PERP', side: 'buy' });
    const disposed = await metrics.registry.metrics();
    expect(sample(disposed, 'paperbot_fills_total{market="BTC-PERP",side="buy"}')).toBe(1);
    expect(sample(disposed, 'paperbot_up')).toBe(0);
  });

  it('includes the Node.js process metrics by default, on its own registry', async () => {
    const metrics = createBotMetrics({ clock: new VirtualClock(0) });
    const text = await metrics.registry.metrics();
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toContain('nodejs_eventloop_lag_seconds');
    // Two registries side by side do not clash (none is the global default).
    expect(() => createBotMetrics({ clock: new VirtualClock(0) })).not.toThrow();
  });
});

describe('the bot HTTP endpoint', () => {
  it('serves /metrics, /health and /status on a loopback port', async () => {
    const clock = new VirtualClock(0);
    const metrics = createBotMetrics({ clock, processMetrics: false });
    let health: HealthReport = { phase: 'starting', tradingState: null, mayTrade: false };
    let status: unknown = null;
    const server = await startBotHttpServer({
      host: '127.0.0.1',
      port: 0,
      registry: metrics.registry,
      health: () => health,
      status: () => status,
    });
    servers.push(server);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);

    const starting = await get(`${server.url}/health`);
    expect(starting.status).toBe(503);
    expect(JSON.parse(starting.text)).toEqual({
      status: 'starting',
      trading_state: null,
      may_trade: false,
    });
    expect((await get(`${server.url}/status`)).status).toBe(503);

    health = { phase: 'running', tradingState: 'REDUCING', mayTrade: true };
    status = { tradingState: 'REDUCING', positions: [] };
    const running = await get(`${server.url}/health`);
    expect(running.status).toBe(200);
    expect(running.type).toMatch(/^application\/json/);
    expect(JSON.parse(running.text)).toEqual({
      status: 'ok',
      trading_state: 'REDUCING',
      may_trade: true,
    });
    const document = await get(`${server.url}/status?verbose=1`);
    expect(document.status).toBe(200);
    expect(JSON.parse(document.text)).toEqual(status);

    const scraped = await get(`${server.url}/metrics`);
    expect(scraped.status).toBe(200);
    expect(scraped.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(scraped.text).toContain('# TYPE paperbot_intent_outcomes_total counter');

    health = { phase: 'stopping', tradingState: null, mayTrade: false };
    expect((await get(`${server.url}/health`)).status).toBe(503);
    expect((await get(`${server.url}/nothing`)).status).toBe(404);
    expect((await get(`${server.url}/health`, 'POST')).status).toBe(405);
  });

  it('answers 500 with a message when the status cannot be built, and keeps serving', async () => {
    const metrics = createBotMetrics({ clock: new VirtualClock(0), processMetrics: false });
    const server = await startBotHttpServer({
      host: '127.0.0.1',
      port: 0,
      registry: metrics.registry,
      health: () => ({ phase: 'running', tradingState: 'ACTIVE', mayTrade: true }),
      status: () => {
        throw new Error('journal closed');
      },
    });
    servers.push(server);
    const failed = await get(`${server.url}/status`);
    expect(failed.status).toBe(500);
    expect(JSON.parse(failed.text)).toEqual({ error: 'journal closed' });
    expect((await get(`${server.url}/health`)).status).toBe(200);
  });

  it('refuses a port in use with METRICS_LISTEN_FAILED', async () => {
    const metrics = createBotMetrics({ clock: new VirtualClock(0), processMetrics: false });
    const options = {
      host: '127.0.0.1',
      registry: metrics.registry,
      health: (): HealthReport => ({ phase: 'running', tradingState: null, mayTrade: false }),
      status: () => null,
    };
    const first = await startBotHttpServer({ ...options, port: 0 });
    servers.push(first);
    await expect(startBotHttpServer({ ...options, port: first.port })).rejects.toMatchObject({
      code: 'METRICS_LISTEN_FAILED',
    });
  });
});

describe('a gate that refuses every intent is visible', () => {
  const refusing = [
    {
      gate: 'route readiness',
      reason:
        'route readiness read failed: MALFORMED_RESPONSE: getRoutesReadiness: the body does not match the interface (HTTP 200)',
    },
  ];
  const readiness = {
    ready: false,
    reason: refusing[0]!.reason,
    error: {
      code: 'MALFORMED_RESPONSE',
      message: 'getRoutesReadiness: the body does not match the interface (HTTP 200)',
      cause: '[{"type":"list_type","loc":["body"],"msg":"Input should be a valid list"}]',
    },
    checkedAt: Date.UTC(2030, 0, 1, 0, 5, 0),
    routes: [],
  };

  it('/health says degraded, which gate refuses and why, and the readiness error with its cause', async () => {
    const metrics = createBotMetrics({ clock: new VirtualClock(0), processMetrics: false });
    let health: HealthReport = {
      phase: 'running',
      tradingState: 'ACTIVE',
      mayTrade: false,
      refusing,
      routeReadiness: readiness,
    };
    const status = { mayTrade: false, refusing, routeReadiness: readiness };
    const server = await startBotHttpServer({
      host: '127.0.0.1',
      port: 0,
      registry: metrics.registry,
      health: () => health,
      status: () => status,
    });
    servers.push(server);
    const answer = await get(`${server.url}/health`);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toEqual({
      status: 'degraded',
      trading_state: 'ACTIVE',
      may_trade: false,
      refusing,
      route_readiness: {
        ready: false,
        reason: readiness.reason,
        error: readiness.error,
        checked_at: '2030-01-01T00:05:00.000Z',
      },
    });
    expect(JSON.parse((await get(`${server.url}/status`)).text)).toEqual(status);

    // Ready again, the last read clean: the body is the plain one.
    health = {
      phase: 'running',
      tradingState: 'ACTIVE',
      mayTrade: true,
      refusing: [],
      routeReadiness: { ...readiness, ready: true, reason: null, error: null },
    };
    expect(JSON.parse((await get(`${server.url}/health`)).text)).toEqual({
      status: 'ok',
      trading_state: 'ACTIVE',
      may_trade: true,
    });
  });

  it('paperbot status prints the refusing gate and the readiness error with its cause', () => {
    const document = StatusDocument.parse({
      bot: {
        pid: 7,
        startedAt: '2030-01-01T00:00:00.000Z',
        now: '2030-01-01T00:05:12.000Z',
        venue: { baseUrl: 'http://127.0.0.1:8787', embedded: false, accountId: 'acct_1' },
        journal: '/tmp/journal.sqlite',
      },
      tradingState: 'ACTIVE',
      tradingReason: null,
      mayTrade: false,
      refusing,
      routeReadiness: readiness,
      reconciled: true,
      deadman: null,
      unknownIntents: 0,
      unresolvedIntents: 0,
      account: null,
      positions: [],
      openOrders: [],
      strategies: [],
      counters: { intents: 3, denied: 3, rejected: 0, accepted: 0, unknown: 0, fills: 0 },
      pnl: { equity: null, startEquity: null, session: null, unrealized: null },
    });
    const text = renderStatus(document, 'http://127.0.0.1:9464');
    expect(text).toContain(`Refusing:   route readiness: ${refusing[0]!.reason}`);
    expect(text).toContain(
      `Route:      not ready: MALFORMED_RESPONSE: ${readiness.error.message} (cause: ${readiness.error.cause})`,
    );
  });
});

describe('a real bot whose route readiness cannot be read', () => {
  it('shows the error and its cause on /health and /status, and logs the refusal, never "trading permitted"', async () => {
    const paced = await startPacedEmulator();
    const directory = mkdtempSync(join(tmpdir(), 'paperbot-readiness-'));
    onTestFinished(async () => {
      await paced.close();
      rmSync(directory, { recursive: true, force: true });
    });
    paced.emulator.controls.failRequests({
      code: 'EXECUTION_UNAVAILABLE',
      endpoint: 'getRoutesReadiness',
      count: 1_000_000,
    });
    const key = await writeEmulatorKey(paced.emulator, directory);
    const configPath = writeBotConfig(directory, {
      venue: { key_file: key.path },
      strategies_dir: FIXTURE_STRATEGIES,
      strategies: [
        {
          id: 'rest',
          name: 'steady-submitter',
          params: { marketId: 'BTC-PERP', intervalMs: 50, maxOpen: 1, churn: false },
        },
      ],
      risk: { kill_switch: { file: null, signal: null } },
      journal: { path: join(directory, 'journal.sqlite') },
      metrics: { host: '127.0.0.1', port: 0 },
      market_data: { markets: ['BTC-PERP'] },
    });
    const child = spawnBot(configPath);
    onTestFinished(async () => {
      if (child.process.exitCode === null) child.process.kill('SIGKILL');
      await child.exited;
    });
    const started = await child.waitFor((record) => record.event === 'bot.started', 'the start');
    const base = String(started.metrics).replace(/\/metrics$/, '');
    const refusal =
      'trading refused, no new exposure (route readiness: route readiness read failed: EXECUTION_UNAVAILABLE';
    await child.waitFor(
      (record) => typeof record.msg === 'string' && record.msg.startsWith(refusal),
      'the refusal that names only the route',
    );
    // The strategy keeps emitting; the gate denies each (counted in /status).
    let denied = 0;
    for (let attempt = 0; attempt < 200 && denied === 0; attempt += 1) {
      const document = JSON.parse((await get(`${base}/status`)).text) as {
        counters?: { denied?: number };
      };
      denied = document.counters?.denied ?? 0;
      if (denied === 0) await delay(25);
    }
    expect(denied).toBeGreaterThan(0);

    const health = await get(`${base}/health`);
    expect(health.status).toBe(200);
    const body = JSON.parse(health.text) as Record<string, unknown>;
    expect(body).toMatchObject({
      status: 'degraded',
      may_trade: false,
      refusing: [{ gate: 'route readiness' }],
      route_readiness: {
        ready: false,
        error: { code: 'EXECUTION_UNAVAILABLE' },
      },
    });
    const readiness = body.route_readiness as { error: { cause: string } };
    expect(readiness.error.cause).toMatch(/^the service answered HTTP 503 \(request .+\)$/);

    const status = JSON.parse((await get(`${base}/status`)).text) as Record<string, unknown>;
    expect(status).toMatchObject({
      mayTrade: false,
      refusing: [{ gate: 'route readiness' }],
      routeReadiness: { ready: false, error: { code: 'EXECUTION_UNAVAILABLE' } },
    });

    const messages = child.records.map((record) => record.msg);
    expect(messages).not.toContain('trading permitted');
    expect(
      messages.filter((msg) => typeof msg === 'string' && msg.startsWith(refusal)),
    ).toHaveLength(1);
    expect(paced.emulator.exchange.listOrders(key.accountId, { limit: 10 }).data).toEqual([]);

    child.process.kill('SIGTERM');
    await child.exited;
  });
});
