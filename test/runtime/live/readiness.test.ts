/**
 * Route readiness as the live venue reads it: the rule over items of any shape (pure), then the
 * venue polling a second implementation of the interface (items `{route_id, ready}`, then
 * items it cannot read, then an answer that is not JSON) and the emulator (a degraded route, a
 * failing read). A failed or unreadable read is an error with its cause, never a silent false.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../src/core/clock.ts';
import { type RunningEmulator, startEmulator } from '../../../src/emulator/index.ts';
import type { Logger } from '../../../src/core/logger.ts';
import {
  createLiveVenue,
  evaluateRouteReadiness,
  type LiveVenue,
  type RouteReadinessStatus,
} from '../../../src/runtime/live/index.ts';
import {
  foreignCredential,
  type ForeignService,
  startForeignService,
} from '../../client/foreign-service.ts';
import { virtualRestClient, virtualStreamClient } from '../../client/helpers.ts';

const START_MS = Date.UTC(2026, 0, 5, 9, 0, 0);
const POLL_MS = 1_000;

interface LoggedLine {
  readonly level: string;
  readonly message: string;
  readonly fields: Record<string, unknown> | undefined;
}

function recordingLogger(lines: LoggedLine[]): Logger {
  const at =
    (level: string) =>
    (message: string, fields?: Record<string, unknown>): void => {
      lines.push({ level, message, fields });
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

async function advance(clock: VirtualClock, totalMs: number, stepMs = 100): Promise<void> {
  for (let moved = 0; moved < totalMs; moved += stepMs) {
    clock.advanceBy(Math.min(stepMs, totalMs - moved));
    for (let index = 0; index < 30; index += 1) await turn();
  }
}

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('evaluateRouteReadiness', () => {
  const routes = new Set(['svc-paper']);

  it('is ready when every route the markets prefer reads ready', () => {
    expect(evaluateRouteReadiness([{ route_id: 'svc-paper', ready: true }], routes)).toEqual({
      ready: true,
      reason: null,
      error: null,
      routes: [{ routeId: 'svc-paper', ready: true, reasons: [] }],
    });
  });

  it('says why a route is not ready', () => {
    expect(
      evaluateRouteReadiness([{ route_id: 'svc-paper', health: 'degraded' }], routes),
    ).toMatchObject({
      ready: false,
      reason: "route svc-paper is not ready (health is 'degraded')",
      error: null,
    });
  });

  it('is an error, with the cause, when the route has no item or an unreadable one', () => {
    const missing = evaluateRouteReadiness([{ route_id: 'svc-other', ready: true }, {}], routes);
    expect(missing).toMatchObject({
      ready: false,
      error: {
        code: 'ROUTE_READINESS_UNREADABLE',
        cause:
          'no readiness item names route svc-paper (items name: svc-other; 1 items have no route_id)',
      },
    });
    const unreadable = evaluateRouteReadiness(
      [{ route_id: 'svc-paper', condition: 'green' }],
      routes,
    );
    expect(unreadable.ready).toBe(false);
    expect(unreadable.error?.code).toBe('ROUTE_READINESS_UNREADABLE');
    expect(unreadable.error?.cause).toContain('fields: route_id, condition');
    expect(unreadable.reason).toContain('route readiness cannot be read');
  });
});

describe('the live venue reading a second implementation', () => {
  async function setup(service: ForeignService, clock: VirtualClock, lines: LoggedLine[]) {
    const rest = virtualRestClient(foreignCredential(service, 'key_foreign_2'), clock);
    const stream = virtualStreamClient(rest, clock);
    const live = createLiveVenue({
      rest,
      stream,
      clock,
      logger: recordingLogger(lines),
      routePollMs: POLL_MS,
      bookPollMs: 3_600_000,
      tradesPollMs: 3_600_000,
    });
    cleanups.push(async () => {
      await live.stop();
      await stream.close();
      await rest.close();
    });
    return live;
  }

  it('reads [{route_id, ready}] as ready, then shows unreadable and failed reads with their cause', async () => {
    const clock = new VirtualClock(START_MS);
    const service = await startForeignService({ now: () => clock.now() });
    cleanups.push(() => service.close());
    const lines: LoggedLine[] = [];
    const live = await setup(service, clock, lines);
    const seen: RouteReadinessStatus[] = [];
    live.routeReadiness$.subscribe((status) => seen.push(status));

    await live.start();
    expect(live.routeReadiness()).toMatchObject({
      ready: true,
      reason: null,
      error: null,
      routes: [{ routeId: 'svc-paper', ready: true }],
    });

    service.setReadiness([{ route_id: 'svc-paper', condition: 'green' }]);
    await advance(clock, POLL_MS);
    expect(live.routeReadiness()).toMatchObject({
      ready: false,
      error: { code: 'ROUTE_READINESS_UNREADABLE' },
    });
    expect(live.routeReadiness().error?.cause).toContain('fields: route_id, condition');

    service.setReadiness([{ route_id: 'svc-paper', ready: true }]);
    await advance(clock, POLL_MS);
    expect(live.routeReadiness()).toMatchObject({ ready: true, error: null });

    service.override(({ path }) =>
      path === '/v1/routes/readiness'
        ? { status: 200, body: null, raw: '<html>maintenance</html>' }
        : undefined,
    );
    await advance(clock, POLL_MS);
    // A failed read keeps the last answer, and shows the failure and its cause.
    expect(live.routeReadiness()).toMatchObject({
      ready: true,
      error: { code: 'MALFORMED_RESPONSE', cause: '<html>maintenance</html>' },
    });
    expect(live.routeReadiness().error?.message).toMatch(/request foreign-\d+/);
    // Every later poll fails the same way (only the server request id differs): nothing new to
    // announce.
    const before = seen.length;
    const logged = lines.length;
    await advance(clock, 3 * POLL_MS);
    expect(seen).toHaveLength(before);
    expect(lines.slice(logged).filter((line) => line.level === 'error')).toEqual([]);

    expect(seen.map((status) => [status.ready, status.error?.code ?? null])).toEqual([
      [false, null],
      [true, null],
      [false, 'ROUTE_READINESS_UNREADABLE'],
      [true, null],
      [true, 'MALFORMED_RESPONSE'],
    ]);
    const readinessLines = lines.filter((line) => line.message.startsWith('route readiness'));
    expect(readinessLines.map((line) => line.level)).toEqual([
      'info',
      'error',
      'info',
      'warn',
      'error',
    ]);
    expect(readinessLines[1]?.message).toContain('route readiness cannot be read');
  });
});

describe('the live venue reading the emulator', () => {
  it('says why a degraded route is not ready, and shows a failing read with its cause', async () => {
    const clock = new VirtualClock(START_MS);
    const emulator: RunningEmulator = await startEmulator({
      clock,
      seed: 3,
      rateLimit: { quota: 1_000_000, windowMs: 60_000 },
    });
    const credential = emulator.createKey();
    const rest = virtualRestClient(credential, clock);
    const stream = virtualStreamClient(rest, clock);
    const lines: LoggedLine[] = [];
    const live: LiveVenue = createLiveVenue({
      rest,
      stream,
      clock,
      logger: recordingLogger(lines),
      routePollMs: POLL_MS,
      bookPollMs: 3_600_000,
      tradesPollMs: 3_600_000,
      marketIds: ['BTC-PERP'],
    });
    cleanups.push(async () => {
      await live.stop();
      await stream.close();
      await rest.close();
      await emulator.close();
    });
    emulator.controls.failRequests({
      code: 'EXECUTION_UNAVAILABLE',
      endpoint: 'getRoutesReadiness',
      count: 1,
    });
    await live.start();
    const failed = live.routeReadiness();
    expect(failed.ready).toBe(false);
    expect(failed.reason).toMatch(/^route readiness read failed: EXECUTION_UNAVAILABLE: /);
    expect(failed.error).toMatchObject({ code: 'EXECUTION_UNAVAILABLE' });
    expect(failed.error?.cause).toMatch(/^the service answered HTTP 503 \(request .+\)$/);

    await advance(clock, POLL_MS);
    expect(live.routeReadiness()).toMatchObject({ ready: true, reason: null, error: null });

    emulator.controls.setRouteHealth('degraded');
    await advance(clock, POLL_MS);
    expect(live.routeReadiness()).toMatchObject({
      ready: false,
      reason: 'route svc-paper is not ready (route health is degraded)',
      error: null,
    });
  });
});
