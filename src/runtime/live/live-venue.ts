/**
 * `createLiveVenue`: the live service (or the emulator over loopback) as the kernel's venues,
 * built from a REST client and a stream client the caller created and closes.
 */
import { BehaviorSubject, distinctUntilChanged, type Observable } from 'rxjs';
import type { RestClient, StreamClient } from '../../client/index.ts';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import { PaperbotError } from '../../core/errors.ts';
import type { RouteReadiness } from '../../protocol/index.ts';
import type { ExecutionLogger } from '../execution/logger.ts';
import type { MarketDataVenue } from '../market-data.ts';
import type { ExecutionVenue } from '../venue.ts';
import { toRuntimeError } from './errors.ts';
import { LiveExecutionVenue } from './execution-venue.ts';
import { LiveMarketData } from './market-data.ts';

export interface LiveVenueOptions {
  readonly rest: RestClient;
  /** Built on `rest`, with the private channels the runtime needs (orders, fills, risk). */
  readonly stream: StreamClient;
  readonly clock: Clock;
  /** `(message, fields)`, as the execution side logs (`messageFirst` adapts a pino logger). */
  readonly logger: ExecutionLogger;
  /** Book polling period, while a strategy reads books. Default 1 000 ms. */
  readonly bookPollMs?: number;
  /** Trades polling period, while a strategy reads trades or candles. Default 1 000 ms. */
  readonly tradesPollMs?: number;
  /** Route readiness polling period. Default 5 000 ms. */
  readonly routePollMs?: number;
  /** The markets to offer; every market the venue lists when omitted or null. */
  readonly marketIds?: readonly string[] | null;
  readonly bookDepth?: number;
  readonly tradesLimit?: number;
  /**
   * The private sequence the stream client resumes after (its `startAfterSequence`, read from
   * the journal); null or absent when it starts at the head.
   */
  readonly resumeAfterSequence?: number | null;
}

export interface LiveVenue {
  readonly venue: ExecutionVenue;
  readonly marketData: MarketDataVenue;
  /**
   * True while every route the markets trade on is ready and accepts orders (GET
   * /v1/routes/readiness, polled). Hand it to the kernel as `routeReady$`.
   */
  readonly routeReady$: Observable<boolean>;
  /** Reads the markets, subscribes their tickers, connects the stream, reads route readiness. */
  start(): Promise<void>;
  /** Stops polling and the subscriptions. The caller closes the clients afterwards. */
  stop(): Promise<void>;
}

/** Whether every route `markets` prefer is listed ready. */
export function routesReady(
  readiness: readonly RouteReadiness[],
  routeIds: ReadonlySet<string>,
): boolean {
  for (const routeId of routeIds) {
    const entry = readiness.find((candidate) => candidate.route_id === routeId);
    if (entry === undefined || !entry.ready) return false;
  }
  return true;
}

export function createLiveVenue(options: LiveVenueOptions): LiveVenue {
  const { rest, stream, clock } = options;
  const logger = options.logger;
  const routePollMs = options.routePollMs ?? 5_000;
  if (!(Number.isFinite(routePollMs) && routePollMs > 0)) {
    throw new PaperbotError('INVALID_CONFIG', 'routePollMs must be a positive number of ms');
  }
  const execution = new LiveExecutionVenue({
    rest,
    stream,
    clock,
    logger,
    resumeAfterSequence: options.resumeAfterSequence ?? null,
  });
  const marketData = new LiveMarketData({
    rest,
    stream,
    clock,
    logger,
    bookPollMs: options.bookPollMs ?? 1_000,
    tradesPollMs: options.tradesPollMs ?? 1_000,
    ...(options.bookDepth === undefined ? {} : { bookDepth: options.bookDepth }),
    ...(options.tradesLimit === undefined ? {} : { tradesLimit: options.tradesLimit }),
  });
  const routeReady = new BehaviorSubject(false);
  let routeTimer: TimerHandle | undefined;
  let routeRead: Promise<void> | null = null;
  let running = false;
  let routeFailures = 0;

  const readRoutes = async (): Promise<void> => {
    try {
      const readiness = await rest.getRoutesReadiness();
      routeFailures = 0;
      const routeIds = new Set(marketData.markets().map((market) => market.preferred_route_id));
      const ready = routesReady(readiness, routeIds);
      if (ready !== routeReady.value) {
        logger[ready ? 'info' : 'warn'](`route readiness: ${ready ? 'ready' : 'not ready'}`, {
          routes: readiness.map((entry) => ({
            routeId: entry.route_id,
            ready: entry.ready,
            health: entry.health,
            reasons: entry.reasons,
          })),
        });
        routeReady.next(ready);
      }
    } catch (error) {
      // A failed read keeps the last answer: the venue refuses orders on a route that is not
      // ready anyway, and the reconciler and dead-man switch stop trading on a real outage.
      routeFailures += 1;
      if (routeFailures === 1 || routeFailures % 10 === 0) {
        const failure = toRuntimeError(error);
        logger.warn('route readiness read failed; keeping the last answer', {
          failures: routeFailures,
          code: (failure as { code?: unknown }).code,
        });
      }
    }
  };

  const pollRoutes = (): void => {
    routeTimer = undefined;
    routeRead = readRoutes().finally(() => {
      routeRead = null;
      if (running) routeTimer = clock.setTimeout(pollRoutes, routePollMs);
    });
  };

  return {
    venue: execution,
    marketData,
    routeReady$: routeReady.pipe(distinctUntilChanged()),
    async start() {
      if (running) return;
      running = true;
      execution.start();
      await marketData.load(options.marketIds ?? undefined);
      for (const market of marketData.markets()) marketData.ticker$(market.market_id);
      try {
        await stream.connect();
      } catch (error) {
        throw toRuntimeError(error);
      }
      pollRoutes();
      await routeRead;
    },
    async stop() {
      running = false;
      clock.clearTimeout(routeTimer);
      routeTimer = undefined;
      await routeRead;
      marketData.close();
      execution.stop();
      await Promise.all([marketData.idle(), execution.idle()]);
      routeReady.complete();
    },
  };
}
