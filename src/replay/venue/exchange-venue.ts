/**
 * `ExecutionVenue` over an in-process emulator `Exchange`, on an injected clock: the execution
 * side of the replay venue, and of an in-process emulator session (a "live" run on virtual time
 * whose private events are recorded, as the divergence tests do).
 *
 * It behaves as the service does over the wire, minus the wire:
 * - `prepare` / `restore` are the runtime's shared serializer, so journaled bytes are the bytes
 *   any venue would send; `send` applies exactly those bytes.
 * - A command reaches the engine after the order latency and its answer comes back after the
 *   response latency, both on the clock. Refusals keep the service's code and HTTP status.
 * - Mutations are idempotent on `request_id` through the emulator's own idempotency ledger: the
 *   same request again gets the first answer, other content under the same id
 *   IDEMPOTENCY_CONFLICT; `getRequest` answers from the same ledger.
 * - The account's private events reach `orderEvents$`, `fills$` and `riskEvents$` after the
 *   event latency, in sequence order. Nothing here loses continuity, so `resync$` never emits.
 * - No wall clock and no randomness of its own: jitter comes from the seeded latency model.
 */
import { type Observable, Subject } from 'rxjs';
import type { Clock } from '../../core/clock.ts';
import { isPaperbotError, PaperbotError } from '../../core/errors.ts';
import type { Exchange } from '../../emulator/engine/exchange.ts';
import {
  commandTypeOf,
  IdempotencyLedger,
  isStoredOutcome,
} from '../../emulator/server/idempotency.ts';
import { MemoryStore } from '../../emulator/store/memory-store.ts';
import type { Store } from '../../emulator/store/store.ts';
import {
  type Account,
  type AmendOrderRequest,
  buildErrorEnvelope,
  buildPath,
  type CancelAllAfterRequest,
  type CancelAllRequest,
  type ClosePositionRequest,
  endpoints,
  type ErrorCode,
  errorStatus,
  type Fill,
  type MutationStatus,
  matchEndpoint,
  normalizeAmendOrderRequest,
  normalizeClosePositionRequest,
  normalizeOrderRequest,
  type Order,
  type OrderRequest,
  type OrderStatusEvent,
  type Position,
  type PrivateEvent,
  type ResponseOf,
  TERMINAL_ORDER_STATUSES,
} from '../../protocol/index.ts';
import {
  COMMAND_ENDPOINTS,
  type CommandEndpoint,
  type ExecutionVenue,
  type PreparedCommand,
  prepareVenueCommand,
  type ResyncSignal,
  type RiskEvent,
  restoreVenueCommand,
  type VenueCommandOf,
} from '../../runtime/venue.ts';
import type { LatencyModel } from './latency.ts';

const decoder = new TextDecoder('utf-8', { fatal: true });
const POSITION_PAGE = 500;

/**
 * The one path of each command endpoint without path parameters, when matching it gives that
 * endpoint: such a path needs no matching per command (one is matched for every placement and
 * every simulation).
 */
const FIXED_PATHS = new Map<string, string>();
for (const name of COMMAND_ENDPOINTS) {
  let path: string;
  try {
    path = buildPath(name as 'placeOrder');
  } catch {
    continue;
  }
  const match = matchEndpoint(endpoints[name].method, path);
  if (match?.name === name && Object.keys(match.params).length === 0) FIXED_PATHS.set(name, path);
}
const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});

/** What the replay venue adds around the engine (all optional). */
export interface ExchangeVenueHooks {
  /**
   * Called when a command is applied, before the engine sees it, with the market it concerns
   * (null for account-wide commands): the replay brings that market's recorded book and marks
   * into the engine here.
   */
  readonly beforeCommand?: (marketId: string | null) => void;
  /** Called synchronously for each private event of the account, as the engine emits it. */
  readonly onEngineEvent?: (event: PrivateEvent) => void;
  /**
   * The market of one of the account's orders when the caller keeps it (the replay does, for
   * its active orders), sparing an order read per cancel; undefined: the engine is asked.
   */
  readonly marketOfOrder?: (orderId: string) => string | undefined;
}

export interface ExchangeVenueOptions {
  readonly exchange: Exchange;
  /** The account whose commands and events this venue carries. */
  readonly accountId: string;
  readonly clock: Clock;
  /**
   * Where the idempotency ledger keeps its records: the exchange's store, or a
   * `DeferredIdempotencyStore` when nothing outlives the venue.
   */
  readonly store: Store;
  readonly latency: LatencyModel;
  readonly hooks?: ExchangeVenueHooks;
}

interface ParsedCommand {
  readonly params: Readonly<Record<string, string>>;
  readonly body: { readonly request_id: string } & Record<string, unknown>;
  /**
   * What a repeat of the request id must match: the endpoint, the path and the body's hash.
   * Bytes, not meaning: every body here comes from the runtime's one serializer, and a
   * resend is the same bytes (design rule 5).
   */
  readonly fingerprint: string;
}

type Outcome = { readonly value: unknown } | { readonly error: PaperbotError };

interface PendingDelivery {
  readonly dueAt: number;
  readonly events: PrivateEvent[];
}

/**
 * A store for the idempotency ledger of a venue nothing outlives (a replay): records are kept as
 * the ledger hands them over and serialized only when read back, which only a resend or a
 * request-status read does, where `MemoryStore` serializes every answer as it is recorded. Reads
 * give the same fresh copies: the ledger saves new objects and never changes them afterwards,
 * and the venue freezes each answer before recording it.
 */
export class DeferredIdempotencyStore extends MemoryStore {
  /** By account, then by request id. */
  private readonly records = new Map<string, Map<string, unknown>>();

  override saveIdempotency(accountId: string, requestId: string, record: unknown): void {
    let byRequest = this.records.get(accountId);
    if (byRequest === undefined) {
      byRequest = new Map();
      this.records.set(accountId, byRequest);
    }
    byRequest.set(requestId, record);
  }

  override loadIdempotency(accountId: string, requestId: string): unknown | undefined {
    const record = this.records.get(accountId)?.get(requestId);
    return record === undefined ? undefined : (JSON.parse(JSON.stringify(record)) as unknown);
  }
}

/** Freezes a JSON value and everything in it (already frozen parts are taken as they are). */
function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  const members = value as Readonly<Record<string, unknown>>;
  for (const name in members) {
    const member = members[name];
    if (typeof member === 'object' && member !== null) deepFreeze(member);
  }
}

/** A refusal as the runtime expects it from a venue: the code, the HTTP status, the details. */
export function venueError(error: unknown): PaperbotError {
  if (isPaperbotError(error)) {
    const status =
      (error as { httpStatus?: unknown }).httpStatus ??
      (error as { status?: unknown }).status ??
      error.details.httpStatus ??
      errorStatus[error.code as ErrorCode] ??
      500;
    return new PaperbotError(error.code, error.message, {
      cause: error,
      retryable: error.retryable,
      details: { ...error.details, httpStatus: status },
    });
  }
  return new PaperbotError(
    'EXECUTION_UNAVAILABLE',
    error instanceof Error ? error.message : String(error),
    { cause: error, retryable: true, details: { httpStatus: 503, outcome: 'unknown' } },
  );
}

function marketOfCommand(endpoint: CommandEndpoint, body: Record<string, unknown>): string | null {
  if (endpoint === 'placeOrder' || endpoint === 'simulateOrder') {
    return typeof body.market_id === 'string' ? body.market_id : null;
  }
  if (endpoint === 'cancelAllOrders') {
    return typeof body.market_id === 'string' ? body.market_id : null;
  }
  return null;
}

export class ExchangeExecutionVenue implements ExecutionVenue {
  readonly orderEvents$: Observable<OrderStatusEvent>;
  readonly fills$: Observable<Fill>;
  readonly riskEvents$: Observable<RiskEvent>;
  readonly resync$: Observable<ResyncSignal>;

  /**
   * Counts calls into the venue and deliveries out of it. A replay loop compares it before and
   * after a step to know whether asynchronous work may have started and must be let run.
   */
  activity = 0;

  readonly exchange: Exchange;
  readonly accountId: string;
  private readonly clock: Clock;
  private readonly latency: LatencyModel;
  private readonly hooks: ExchangeVenueHooks;
  private readonly ledger: IdempotencyLedger;
  private readonly orderSubject = new Subject<OrderStatusEvent>();
  private readonly fillSubject = new Subject<Fill>();
  private readonly riskSubject = new Subject<RiskEvent>();
  private readonly resyncSubject = new Subject<ResyncSignal>();
  /** Commands this venue prepared or restored: their bytes are known to be valid bodies. */
  private readonly checked = new WeakSet<PreparedCommand>();
  /** Request ids the ledger holds an answer for. */
  private readonly requestIds = new Set<string>();
  /** Active orders of the account, in the order they were created. */
  private readonly activeOrders = new Set<string>();
  private readonly deliveries: PendingDelivery[] = [];
  private readonly unsubscribe: () => void;
  private closed = false;

  constructor(options: ExchangeVenueOptions) {
    this.exchange = options.exchange;
    this.accountId = options.accountId;
    this.clock = options.clock;
    this.latency = options.latency;
    this.hooks = options.hooks ?? {};
    this.ledger = new IdempotencyLedger(options.store, {
      orderStatus: (accountId, orderId) => {
        try {
          return this.exchange.getOrder(accountId, orderId).status;
        } catch {
          return null;
        }
      },
    });
    this.orderEvents$ = this.orderSubject.asObservable();
    this.fills$ = this.fillSubject.asObservable();
    this.riskEvents$ = this.riskSubject.asObservable();
    this.resync$ = this.resyncSubject.asObservable();
    this.unsubscribe = this.exchange.onPrivateEvent((accountId, event) => {
      if (accountId === this.accountId) this.onEngineEvent(event);
    });
  }

  /** Stops listening to the engine and completes the streams; pending deliveries are dropped. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe();
    this.orderSubject.complete();
    this.fillSubject.complete();
    this.riskSubject.complete();
    this.resyncSubject.complete();
  }

  /** Ids of the account's active orders, oldest first. */
  activeOrderIds(): readonly string[] {
    return [...this.activeOrders];
  }

  prepare<E extends CommandEndpoint>(command: VenueCommandOf<E>): PreparedCommand<E> {
    this.activity++;
    const prepared = prepareVenueCommand(command);
    this.checked.add(prepared);
    return prepared;
  }

  restore<E extends CommandEndpoint>(
    endpoint: E,
    path: string,
    bodyBytes: Uint8Array,
  ): PreparedCommand<E> {
    this.activity++;
    const prepared = restoreVenueCommand(endpoint, path, bodyBytes);
    this.checked.add(prepared);
    return prepared;
  }

  send<E extends CommandEndpoint>(
    prepared: PreparedCommand<E>,
    signal?: AbortSignal,
  ): Promise<ResponseOf<E>> {
    this.activity++;
    let command: ParsedCommand;
    try {
      command = this.parse(prepared);
    } catch (error) {
      return Promise.reject(venueError(error));
    }
    return new Promise<ResponseOf<E>>((resolve, reject) => {
      let answered = false;
      // Made only for a signal: a function given a name costs a name definition under tsx.
      let onAbort: (() => void) | undefined;
      if (signal !== undefined) {
        onAbort = () => {
          if (answered) return;
          answered = true;
          // The command still reaches the venue: giving up waiting says nothing of its effect.
          reject(
            new PaperbotError(
              'REQUEST_TIMEOUT',
              `${prepared.endpoint}: the caller stopped waiting`,
              { details: { outcome: 'unknown', requestId: prepared.requestId } },
            ),
          );
        };
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      }
      this.clock.setTimeout(() => {
        this.activity++;
        const outcome = this.apply(prepared.endpoint, command);
        this.clock.setTimeout(() => {
          this.activity++;
          if (answered) return;
          answered = true;
          if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
          if ('error' in outcome) reject(outcome.error);
          else resolve(outcome.value as ResponseOf<E>);
        }, this.latency.response());
      }, this.latency.order());
    });
  }

  getRequest(requestId: string): Promise<MutationStatus> {
    return this.read(() => this.ledger.status(this.accountId, requestId, this.clock.now()));
  }

  getOrder(orderId: string): Promise<Order> {
    return this.read(() => this.exchange.getOrder(this.accountId, orderId));
  }

  getOrderByClientId(clientOrderId: string): Promise<Order> {
    return this.read(() => this.exchange.getOrderByClientId(this.accountId, clientOrderId));
  }

  listOpenOrders(): Promise<Order[]> {
    return this.read(() =>
      [...this.activeOrders].map((orderId) => this.exchange.getOrder(this.accountId, orderId)),
    );
  }

  listPositions(): Promise<Position[]> {
    return this.read(() => this.positionsNow());
  }

  getAccount(): Promise<Account> {
    return this.read(() => this.exchange.getAccount(this.accountId));
  }

  /** The account's positions now, synchronously (for equity samples and reports). */
  positionsNow(): Position[] {
    const positions: Position[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = this.exchange.listPositions(this.accountId, {
        limit: POSITION_PAGE,
        ...(cursor === undefined ? {} : { cursor }),
      });
      positions.push(...page.data);
      if (!page.page.has_more || page.page.next_cursor === null) return positions;
      cursor = page.page.next_cursor;
    }
  }

  // ------------------------------------------------------------------ internals

  private read<T>(work: () => T): Promise<T> {
    this.activity++;
    const delay = this.latency.readMs;
    if (delay === 0) {
      try {
        return Promise.resolve(work());
      } catch (error) {
        return Promise.reject(venueError(error));
      }
    }
    return new Promise<T>((resolve, reject) => {
      this.clock.setTimeout(() => {
        this.activity++;
        try {
          resolve(work());
        } catch (error) {
          reject(venueError(error));
        }
      }, delay);
    });
  }

  /** The command's path parameters and body; bytes this venue did not check are checked here. */
  private parse(prepared: PreparedCommand): ParsedCommand {
    const definition = endpoints[prepared.endpoint];
    let params: Readonly<Record<string, string>>;
    if (FIXED_PATHS.get(prepared.endpoint) === prepared.path) {
      params = NO_PARAMS;
    } else {
      const match = matchEndpoint(definition.method, prepared.path);
      if (match === null || match.name !== prepared.endpoint) {
        throw new PaperbotError(
          'INVALID_COMMAND',
          `${prepared.path} does not address ${prepared.endpoint}`,
          {
            details: { httpStatus: 404 },
          },
        );
      }
      params = match.params as Readonly<Record<string, string>>;
    }
    const raw = JSON.parse(decoder.decode(prepared.bodyBytes)) as unknown;
    const fingerprint = `${prepared.endpoint} ${prepared.path} ${prepared.bodySha256}`;
    if (this.checked.has(prepared)) {
      return { params, body: raw as ParsedCommand['body'], fingerprint };
    }
    const parsed = definition.body?.safeParse(raw);
    if (parsed === undefined || !parsed.success) {
      throw new PaperbotError('INVALID_REQUEST', `${prepared.endpoint}: the body is not valid`, {
        details: { httpStatus: 422 },
      });
    }
    let body: unknown = parsed.data;
    if (prepared.endpoint === 'placeOrder' || prepared.endpoint === 'simulateOrder') {
      body = normalizeOrderRequest(body as OrderRequest);
    } else if (prepared.endpoint === 'amendOrder') {
      body = normalizeAmendOrderRequest(body as AmendOrderRequest);
    } else if (prepared.endpoint === 'closePosition') {
      body = normalizeClosePositionRequest(body as ClosePositionRequest);
    }
    return { params, body: body as ParsedCommand['body'], fingerprint };
  }

  /** Applies a command now, as the service's dispatcher does (idempotency included). */
  private apply(endpoint: CommandEndpoint, command: ParsedCommand): Outcome {
    const { params, body } = command;
    const account = this.accountId;
    try {
      this.hooks.beforeCommand?.(this.commandMarket(endpoint, command));
      if (endpoint === 'simulateOrder') {
        return { value: this.exchange.simulateOrder(account, body as unknown as OrderRequest) };
      }
      const requestId = body.request_id;
      const fingerprint = command.fingerprint;
      // The ledger parses what it stored; a request id never sent has nothing to read.
      const existing = this.requestIds.has(requestId)
        ? this.ledger.find(account, requestId)
        : undefined;
      if (existing !== undefined) {
        if (existing.fingerprint !== fingerprint) {
          throw new PaperbotError(
            'IDEMPOTENCY_CONFLICT',
            `request_id ${requestId} was already used with different content`,
            { details: { request_id: requestId, httpStatus: errorStatus.IDEMPOTENCY_CONFLICT } },
          );
        }
        return existing.status < 400
          ? { value: existing.body }
          : { error: this.storedFailure(existing.status, existing.body) };
      }
      let status: number = endpoints[endpoint].successStatus;
      let response: unknown;
      let failure: PaperbotError | null = null;
      try {
        response = this.execute(endpoint, params, body);
      } catch (error) {
        const translated = venueError(error);
        const httpStatus = translated.details.httpStatus as number;
        if (!isStoredOutcome(httpStatus, translated.retryable)) throw translated;
        failure = translated;
        status = httpStatus;
        response = buildErrorEnvelope({
          code: translated.code as ErrorCode,
          message: translated.message,
          requestId,
          details: { ...translated.details },
          retryable: translated.retryable,
        });
      }
      this.requestIds.add(requestId);
      // The first answer is the one a repeat gets: frozen, it stays what it was when recorded.
      deepFreeze(response);
      this.ledger.record({
        version: 1,
        account_id: account,
        request_id: requestId,
        endpoint,
        command_type: commandTypeOf[endpoint]!,
        fingerprint,
        status,
        body: response,
        created_at: this.clock.now(),
        completed_at: null,
      });
      return failure === null ? { value: response } : { error: failure };
    } catch (error) {
      return { error: venueError(error) };
    }
  }

  private commandMarket(endpoint: CommandEndpoint, command: ParsedCommand): string | null {
    const direct = marketOfCommand(endpoint, command.body);
    if (direct !== null) return direct;
    try {
      if (endpoint === 'amendOrder' || endpoint === 'cancelOrder') {
        const orderId = command.params.order_id!;
        return (
          this.hooks.marketOfOrder?.(orderId) ??
          this.exchange.getOrder(this.accountId, orderId).market_id
        );
      }
      if (endpoint === 'closePosition') {
        return this.exchange.getPositionById(this.accountId, command.params.position_id!).market_id;
      }
    } catch {
      // The engine refuses the command itself, with the right code.
    }
    return null;
  }

  private execute(
    endpoint: Exclude<CommandEndpoint, 'simulateOrder'>,
    params: Readonly<Record<string, string>>,
    body: ParsedCommand['body'],
  ): unknown {
    const account = this.accountId;
    switch (endpoint) {
      case 'placeOrder':
        return this.exchange.placeOrder(account, body as unknown as OrderRequest);
      case 'amendOrder':
        return this.exchange.amendOrder(
          account,
          params.order_id!,
          body as unknown as AmendOrderRequest,
        );
      case 'cancelOrder':
        return this.exchange.cancelOrder(account, params.order_id!, body.request_id);
      case 'cancelAllOrders':
        return this.exchange.cancelAll(
          account,
          body.request_id,
          (body as unknown as CancelAllRequest).market_id ?? null,
        );
      case 'closePosition':
        return this.exchange.closePosition(
          account,
          params.position_id!,
          body as unknown as ClosePositionRequest,
        );
      case 'setCancelAllAfter':
        return this.exchange.setCancelAllAfter(
          account,
          body.request_id,
          (body as unknown as CancelAllAfterRequest).timeout_seconds,
        );
    }
  }

  private storedFailure(status: number, body: unknown): PaperbotError {
    const error = (body as { error?: { code?: unknown; message?: unknown; details?: unknown } })
      ?.error;
    const details =
      typeof error?.details === 'object' && error.details !== null
        ? (error.details as Record<string, unknown>)
        : {};
    return new PaperbotError(
      typeof error?.code === 'string' ? error.code : 'UNKNOWN',
      typeof error?.message === 'string' ? error.message : 'refused',
      { details: { ...details, httpStatus: status } },
    );
  }

  private onEngineEvent(event: PrivateEvent): void {
    this.ledger.observe(this.accountId, event);
    if (event.type === 'authoritative_status') {
      if (TERMINAL_ORDER_STATUSES.has(event.data.to_state)) {
        this.activeOrders.delete(event.data.entity_id);
      } else {
        this.activeOrders.add(event.data.entity_id);
      }
    }
    this.hooks.onEngineEvent?.(event);
    if (this.closed) return;
    const dueAt = this.clock.now() + this.latency.eventMs;
    const last = this.deliveries[this.deliveries.length - 1];
    if (last !== undefined && last.dueAt === dueAt) {
      last.events.push(event);
      return;
    }
    const delivery: PendingDelivery = { dueAt, events: [event] };
    this.deliveries.push(delivery);
    this.clock.setTimeout(() => this.deliver(), this.latency.eventMs);
  }

  private deliver(): void {
    const delivery = this.deliveries.shift();
    if (delivery === undefined || this.closed) return;
    this.activity++;
    for (const event of delivery.events) {
      switch (event.type) {
        case 'authoritative_status':
          this.orderSubject.next(event);
          break;
        case 'fill':
          this.fillSubject.next(event.data);
          break;
        case 'cancel_all_after.triggered':
        case 'liquidation':
          this.riskSubject.next(event);
          break;
        default:
          break;
      }
    }
  }
}
