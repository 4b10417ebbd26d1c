/**
 * `createLiveVenue`: the live service (or the emulator over loopback) as the kernel's venues,
 * built from a REST client and a stream client the caller created and closes.
 */
import { BehaviorSubject, distinctUntilChanged, map, type Observable } from 'rxjs';
import type { RestClient, StreamClient } from '../../client/index.ts';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import { isPaperbotError, PaperbotError } from '../../core/errors.ts';
import { readRouteReadiness, type RouteReadinessItem } from '../../protocol/index.ts';
import type { Logger } from '../../core/logger.ts';
import type { MarketDataVenue } from '../streams/market-data.ts';
import type { ExecutionVenue } from '../venue.ts';
import { toVenueFailure } from '../venue-error.ts';
import { LiveExecutionVenue } from './execution-venue.ts';
import { LiveMarketData } from './market-data.ts';

export interface LiveVenueOptions {
  readonly rest: RestClient;
  /** Built on `rest`, with the private channels the runtime needs (orders, fills, risk). */
  readonly stream: StreamClient;
  readonly clock: Clock;
  /** The one `Logger` (`fromPino` adapts a pino logger). */
  readonly logger: Logger;
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
   * /v1/routes/readiness, polled).
   */
  readonly routeReady$: Observable<boolean>;
  /**
   * Route readiness with why not and the last read's error, on every change. Hand it to the
   * kernel as `routeReady$`, so the log and the status say which route refuses and why.
   */
  readonly routeReadiness$: Observable<RouteReadinessStatus>;
  /** The latest route readiness (for `/health` and `/status`). */
  routeReadiness(): RouteReadinessStatus;
  /** Reads the markets, subscribes their tickers, connects the stream, reads route readiness. */
  start(): Promise<void>;
  /** Stops polling and the subscriptions. The caller closes the clients afterwards. */
  stop(): Promise<void>;
  /**
   * Stops reading route readiness (a signed read) for good, the rest running on: for a key the
   * venue revoked or expired, which no read can use any more.
   */
  stopRouteReadiness(): void;
}

/** A readiness read that failed, or an answer that cannot be read for a route. */
export interface RouteReadinessError {
  /** The client's or service's code, or ROUTE_READINESS_UNREADABLE. */
  readonly code: string;
  readonly message: string;
  /** What lies under it (the unreadable fields, the transport failure), when known. */
  readonly cause: string | null;
}

export interface RouteReadinessStatus {
  /** Every route the markets prefer reads ready. False until the first readable answer. */
  readonly ready: boolean;
  /** Why not, one sentence; null when ready. */
  readonly reason: string | null;
  /** The last read's failure or unreadable answer; null after a clean read. */
  readonly error: RouteReadinessError | null;
  /** Each route the markets prefer, as last read. */
  readonly routes: readonly {
    readonly routeId: string;
    readonly ready: boolean;
    readonly reasons: readonly string[];
  }[];
  /** When the last read ended (epoch ms), null before any. */
  readonly checkedAt: number | null;
}

/** What one answer of GET /v1/routes/readiness says about the routes the markets prefer. */
export function evaluateRouteReadiness(
  items: readonly RouteReadinessItem[],
  routeIds: ReadonlySet<string>,
): Omit<RouteReadinessStatus, 'checkedAt'> {
  const readings = items.map(readRouteReadiness);
  const routes: { routeId: string; ready: boolean; reasons: readonly string[] }[] = [];
  const problems: string[] = [];
  const notReady: string[] = [];
  for (const routeId of [...routeIds].sort()) {
    const own = readings.filter((reading) => reading.routeId === routeId);
    const unreadable = own.find((reading) => !reading.readable);
    if (unreadable !== undefined && !unreadable.readable) {
      problems.push(unreadable.problem);
      routes.push({ routeId, ready: false, reasons: [unreadable.problem] });
      continue;
    }
    if (own.length === 0) {
      const unnamed = readings.filter((reading) => !reading.readable && reading.routeId === null);
      const named = readings.map((reading) => reading.routeId).filter((id) => id !== null);
      const problem = `no readiness item names route ${routeId} (items name: ${named.join(', ') || 'none'}${
        unnamed.length > 0 ? `; ${unnamed.length} items have no route_id` : ''
      })`;
      problems.push(problem);
      routes.push({ routeId, ready: false, reasons: [problem] });
      continue;
    }
    const ready = own.every((reading) => reading.readable && reading.ready);
    const reasons = own.flatMap((reading) => (reading.readable ? reading.reasons : []));
    routes.push({ routeId, ready, reasons });
    if (!ready)
      notReady.push(`route ${routeId} is not ready (${reasons.join('; ') || 'no reason given'})`);
  }
  if (problems.length > 0) {
    const message = `route readiness cannot be read: ${problems.join('; ')}`;
    return {
      ready: false,
      reason: message,
      error: { code: 'ROUTE_READINESS_UNREADABLE', message, cause: problems.join('; ') },
      routes,
    };
  }
  return {
    ready: notReady.length === 0,
    reason: notReady.length === 0 ? null : notReady.join('; '),
    error: null,
    routes,
  };
}

/** Whether every route in `routeIds` reads ready (`evaluateRouteReadiness`). */
export function routesReady(
  items: readonly RouteReadinessItem[],
  routeIds: ReadonlySet<string>,
): boolean {
  return evaluateRouteReadiness(items, routeIds).ready;
}

const CAUSE_LIMIT = 400;

function bounded(text: string): string {
  return text.length <= CAUSE_LIMIT ? text : `${text.slice(0, CAUSE_LIMIT)}…`;
}

/** What lies under a failed read: the issues of a malformed answer, or the underlying error. */
function causeOf(error: unknown): string | null {
  if (!isPaperbotError(error)) return null;
  const issues = error.details.issues;
  if (Array.isArray(issues) && issues.length > 0) return bounded(JSON.stringify(issues));
  const inner = (error as { cause?: unknown }).cause;
  if (inner instanceof Error) return bounded(`${inner.name}: ${inner.message}`);
  const excerpt = (error as { bodyExcerpt?: unknown }).bodyExcerpt;
  if (typeof excerpt === 'string') return bounded(excerpt);
  const status = (error as { httpStatus?: unknown }).httpStatus;
  const serverRequestId = (error as { serverRequestId?: unknown }).serverRequestId;
  if (typeof status !== 'number') return null;
  return `the service answered HTTP ${status}${typeof serverRequestId === 'string' ? ` (request ${serverRequestId})` : ''}`;
}

/** A failed read as the status shows it. */
export function readinessReadError(error: unknown): RouteReadinessError {
  const failure = toVenueFailure(error);
  if (isPaperbotError(failure)) {
    return { code: failure.code, message: failure.message, cause: causeOf(error) };
  }
  return {
    code: 'UNEXPECTED_ERROR',
    message: failure instanceof Error ? failure.message : String(failure),
    cause: null,
  };
}

/**
 * A message without the server request ids it names, so that the same failure read twice is
 * the same reason (and is announced once), while `error.message` keeps them for diagnosis.
 */
function withoutRequestIds(message: string): string {
  return message.replace(/,? request [^\s),;]+/g, '');
}

/** What counts as a change worth announcing: the answer, the reason, the error's code. */
function statusKey(status: RouteReadinessStatus): string {
  return JSON.stringify([status.ready, status.reason, status.error?.code ?? null]);
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
  let readiness: RouteReadinessStatus = {
    ready: false,
    reason: 'route readiness has not been read yet',
    error: null,
    routes: [],
    checkedAt: null,
  };
  const readinessSubject = new BehaviorSubject<RouteReadinessStatus>(readiness);
  let routeTimer: TimerHandle | undefined;
  let routeRead: Promise<void> | null = null;
  let running = false;
  let routeReadingStopped = false;
  let routeFailures = 0;

  /** Keeps the latest; announces (and logs) only a change of answer, reason or error. */
  const publish = (next: RouteReadinessStatus): void => {
    const changed = statusKey(next) !== statusKey(readiness);
    readiness = next;
    if (!changed) return;
    const fields = {
      ready: next.ready,
      reason: next.reason,
      error: next.error,
      routes: next.routes,
    };
    if (next.error !== null)
      logger.error(`route readiness: ${next.reason ?? next.error.message}`, fields);
    else if (next.ready) logger.info('route readiness: ready', fields);
    else logger.warn(`route readiness: ${next.reason ?? 'not ready'}`, fields);
    readinessSubject.next(next);
  };

  const readRoutes = async (): Promise<void> => {
    let items: readonly RouteReadinessItem[];
    try {
      items = await rest.getRoutesReadiness();
    } catch (error) {
      // A failed read keeps the last answer (the venue refuses orders on a route that is not
      // ready anyway, and the reconciler and dead-man switch stop trading on a real outage),
      // but shows the failure and its cause until a read succeeds.
      routeFailures += 1;
      const failure = readinessReadError(error);
      if (routeFailures === 1 || routeFailures % 10 === 0) {
        logger.warn('route readiness read failed; keeping the last answer', {
          failures: routeFailures,
          code: failure.code,
          message: failure.message,
          cause: failure.cause,
        });
      }
      publish({
        ...readiness,
        reason: readiness.ready
          ? null
          : `route readiness read failed: ${failure.code}: ${withoutRequestIds(failure.message)}`,
        error: failure,
        checkedAt: clock.now(),
      });
      return;
    }
    routeFailures = 0;
    const routeIds = new Set(marketData.markets().map((market) => market.preferred_route_id));
    publish({ ...evaluateRouteReadiness(items, routeIds), checkedAt: clock.now() });
  };

  const pollRoutes = (): void => {
    routeTimer = undefined;
    routeRead = readRoutes().finally(() => {
      routeRead = null;
      if (running && !routeReadingStopped) routeTimer = clock.setTimeout(pollRoutes, routePollMs);
    });
  };

  return {
    venue: execution,
    marketData,
    routeReady$: readinessSubject.pipe(
      map((status) => status.ready),
      distinctUntilChanged(),
    ),
    routeReadiness$: readinessSubject.asObservable(),
    routeReadiness: () => readiness,
    async start() {
      if (running) return;
      running = true;
      execution.start();
      await marketData.load(options.marketIds ?? undefined);
      for (const market of marketData.markets()) marketData.ticker$(market.market_id);
      try {
        await stream.connect();
      } catch (error) {
        throw toVenueFailure(error);
      }
      pollRoutes();
      await routeRead;
    },
    stopRouteReadiness() {
      routeReadingStopped = true;
      clock.clearTimeout(routeTimer);
      routeTimer = undefined;
    },
    async stop() {
      running = false;
      clock.clearTimeout(routeTimer);
      routeTimer = undefined;
      await routeRead;
      marketData.close();
      execution.stop();
      await Promise.all([marketData.idle(), execution.idle()]);
      readinessSubject.complete();
    },
  };
}
