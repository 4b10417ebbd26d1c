/**
 * `ExecutionVenue` over an in-process emulator `Exchange`, on an injected clock: the execution
 * side of the replay venue, and of an in-process emulator session (a "live" run on virtual time
 * whose private events are recorded, as the divergence tests do).
 *
 * It is latency and event delivery over the emulator's service core, the same core the HTTP
 * server hands its commands to, so the service decides here exactly what it decides there:
 * - `prepare` / `restore` are the runtime's shared serializer, so journaled bytes are the bytes
 *   any venue would send. A command this venue checked reaches the core as its checked body
 *   object (`PreparedCommand.body`, never parsed again), and its bytes and hash are made only
 *   if something reads them (the journal, a resend); other bytes are checked by the core as
 *   the server checks them.
 * - A command reaches the core after the order latency and its answer comes back after the
 *   response latency, both on the clock. Refusals keep the service's code and HTTP status.
 * - Idempotency, the error envelope, the key's risk limits and the endpoint-to-engine map are
 *   the core's; `getRequest` answers from the core's ledger.
 * - The account's private events reach `privateStream` (and risk events `riskEvents$`) after
 *   the event latency, in sequence order, as the engine numbered them (`private-stream.ts`); its
 *   fill read-back reads the engine's fills. Nothing here loses continuity, so `resync$` never
 *   emits (a test may drop events: the stream then shows the gap, as live).
 * - No wall clock and no randomness of its own: jitter comes from the seeded latency model.
 */
import { type Observable, Subject } from 'rxjs';
import type { Clock } from '../../core/clock.ts';
import { PaperbotError } from '../../core/errors.ts';
import { FifoQueue } from '../../core/fifo-queue.ts';
import {
  type Exchange,
  type KeyRiskLimits,
  type ServiceAccount,
  type ServiceAnswer,
  ServiceCore,
  type Store,
} from '../../emulator/index.ts';
import {
  type Account,
  buildPath,
  endpoints,
  type ErrorEnvelope,
  type Fill,
  type MutationStatus,
  matchEndpoint,
  type Order,
  type PathParamsOf,
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
  type ResyncSignal,
  type RiskEvent,
  type VenueCommand,
  type VenueCommandOf,
} from '../../runtime/venue.ts';
import { prepareCommand, restoreCommand } from '../../signing/index.ts';
import { toVenueFailure } from '../../runtime/venue-error.ts';
import { readFillsBackFrom } from '../../runtime/private-stream.ts';
import type { LatencyModel } from './latency.ts';
import { pagedItems, ReplayPrivateStream } from './private-stream.ts';

const decoder = new TextDecoder('utf-8', { fatal: true });
// Module-local: under tsx an imported constant is read through a getter at each use.
const TERMINAL = TERMINAL_ORDER_STATUSES;
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

/**
 * The path parameters of a command this venue prepares: the serializer builds its path from
 * exactly these (each percent-encoded), so matching the path again would give them back.
 */
function paramsOf(command: VenueCommand): Readonly<Record<string, string>> {
  switch (command.endpoint) {
    case 'amendOrder':
    case 'cancelOrder':
      return { order_id: command.params.order_id };
    case 'closePosition':
      return { position_id: command.params.position_id };
    default:
      return NO_PARAMS;
  }
}

/** The path parameters of a prepared command's path, which must address its endpoint. */
function pathParams(prepared: PreparedCommand): Readonly<Record<string, string>> {
  if (FIXED_PATHS.get(prepared.endpoint) === prepared.path) return NO_PARAMS;
  const match = matchEndpoint(endpoints[prepared.endpoint].method, prepared.path);
  if (match === null || match.name !== prepared.endpoint) {
    throw new PaperbotError(
      'INVALID_COMMAND',
      `${prepared.path} does not address ${prepared.endpoint}`,
      { details: { httpStatus: 404 } },
    );
  }
  return match.params as Readonly<Record<string, string>>;
}

/**
 * A command this venue checked (prepared or restored), with the path parameters its path was
 * built from or matched to once. Its bytes and their hash are the shared serializer's, made when
 * first read (`prepareCommand`): in process the body object is what is applied, so a command
 * nobody journals (a simulation) is never encoded or hashed.
 */
class CheckedCommand<E extends CommandEndpoint = CommandEndpoint>
  implements PreparedCommand<E>, ParsedCommand
{
  readonly endpoint: E;
  readonly path: string;
  readonly requestId: string;
  readonly body: PreparedCommand<E>['body'] & ParsedCommand['body'];
  /** Checked here: the core applies the body object, with no bytes to check. */
  readonly unchecked = null;

  constructor(
    private readonly prepared: PreparedCommand<E>,
    readonly params: Readonly<Record<string, string>>,
  ) {
    this.endpoint = prepared.endpoint;
    this.path = prepared.path;
    this.requestId = prepared.requestId;
    this.body = prepared.body as CheckedCommand<E>['body'];
  }

  get bodyBytes(): Uint8Array {
    return this.prepared.bodyBytes;
  }

  get bodySha256(): string {
    return this.prepared.bodySha256;
  }
}

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
   * Where the core's idempotency ledger keeps its records: the exchange's store, or an
   * `IdempotencyWindow` when nothing outlives the venue.
   */
  readonly store: Store;
  /** The risk limits of the key the commands come with, as the server applies them. */
  readonly riskLimits?: KeyRiskLimits;
  readonly latency: LatencyModel;
  readonly hooks?: ExchangeVenueHooks;
  /** A test seam: private events of these sequences are never delivered (`private-stream.ts`). */
  readonly dropPrivateSequences?: Iterable<number>;
}

interface ParsedCommand {
  readonly params: Readonly<Record<string, string>>;
  /** The body parsed once, as this venue's serializer wrote it. */
  readonly body: { readonly request_id: string } & Record<string, unknown>;
  /** Bytes this venue did not check: the core checks them as the server does. */
  readonly unchecked: Uint8Array | null;
}

/**
 * One command on its way through the venue (one object per send, not a closure per leg): sent,
 * applied after the order latency, answered after the response latency.
 */
class InFlight {
  answered = false;
  /** What applying the command gave: an answer, or (`error` set) a refusal or failure. */
  value: unknown = undefined;
  error: unknown = undefined;
  onAbort: (() => void) | undefined = undefined;
  resolve!: (value: unknown) => void;
  reject!: (reason: unknown) => void;

  constructor(
    readonly prepared: PreparedCommand,
    readonly command: ParsedCommand,
    readonly signal: AbortSignal | undefined,
  ) {}
}

/** The command whose promise is being made: `capture` hands it the promise's functions. */
let capturing: InFlight | null = null;

/** One executor for every command's promise (it runs synchronously in `new Promise`). */
function capture(resolve: (value: never) => void, reject: (reason: unknown) => void): void {
  capturing!.resolve = resolve as (value: unknown) => void;
  capturing!.reject = reject;
}

/** Events due at one time; delivered, it is kept for a later batch (`SPARE_DELIVERIES`). */
interface PendingDelivery {
  dueAt: number;
  readonly events: PrivateEvent[];
}

/** Delivered batches kept for reuse: a batch and its array per delivery are not made anew. */
const SPARE_DELIVERIES = 16;

/** A refusal the core answered, as the runtime expects it from a venue. */
function refusalOf(answer: ServiceAnswer): PaperbotError {
  const { error } = answer.body as ErrorEnvelope;
  return new PaperbotError(error.code, error.message, {
    retryable: error.retryable,
    details: { ...error.details, httpStatus: answer.status },
  });
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
  readonly cannotHang = true;
  readonly privateStream: ReplayPrivateStream;
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
  /** The service core, the one the HTTP server uses: every command goes through it. */
  readonly core: ServiceCore;
  private readonly account: ServiceAccount;
  private readonly riskSubject = new Subject<RiskEvent>();
  private readonly resyncSubject = new Subject<ResyncSignal>();
  /** Active orders of the account, in the order they were created. */
  private readonly activeOrders = new Set<string>();
  private readonly deliveries: PendingDelivery[] = [];
  private readonly spareDeliveries: PendingDelivery[] = [];
  /** Delivers the oldest pending batch: one function for every delivery's timer. */
  private readonly deliverNext = (): void => this.deliver();
  /** Commands sent and not applied yet, oldest first (fixed latencies only). */
  private readonly toApply = new FifoQueue<InFlight>();
  /** Commands applied and not answered yet, oldest first (fixed latencies only). */
  private readonly toAnswer = new FifoQueue<InFlight>();
  private readonly applyNext = (): void => this.applyInFlight(this.toApply.shift()!);
  private readonly answerNext = (): void => this.answer(this.toAnswer.shift()!);
  private readonly unsubscribe: () => void;
  private closed = false;

  constructor(options: ExchangeVenueOptions) {
    this.exchange = options.exchange;
    this.accountId = options.accountId;
    this.clock = options.clock;
    this.latency = options.latency;
    this.hooks = options.hooks ?? {};
    this.core = new ServiceCore({
      exchange: options.exchange,
      clock: options.clock,
      store: options.store,
    });
    this.account =
      options.riskLimits === undefined
        ? { accountId: options.accountId }
        : { accountId: options.accountId, riskLimits: options.riskLimits };
    this.privateStream = new ReplayPrivateStream(
      (stop) =>
        this.read(() => this.fillsNewestFirst()).then((fills) => readFillsBackFrom(fills, stop)),
      options.dropPrivateSequences,
    );
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
    this.core.close();
    this.privateStream.complete();
    this.riskSubject.complete();
    this.resyncSubject.complete();
  }

  /** Ids of the account's active orders, oldest first. */
  activeOrderIds(): readonly string[] {
    return [...this.activeOrders];
  }

  prepare<E extends CommandEndpoint>(command: VenueCommandOf<E>): PreparedCommand<E> {
    this.activity++;
    return new CheckedCommand(prepareCommand(command), paramsOf(command));
  }

  restore<E extends CommandEndpoint>(
    endpoint: E,
    path: string,
    bodyBytes: Uint8Array,
  ): PreparedCommand<E> {
    this.activity++;
    const restored = restoreCommand(endpoint, path, bodyBytes);
    return new CheckedCommand(restored, pathParams(restored));
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
      return Promise.reject(toVenueFailure(error));
    }
    const inFlight = new InFlight(prepared, command, signal);
    capturing = inFlight;
    const promise = new Promise<ResponseOf<E>>(capture);
    capturing = null;
    if (signal !== undefined) {
      // Made only for a signal: a function given a name costs a name definition under tsx.
      const onAbort = (): void => {
        if (inFlight.answered) return;
        inFlight.answered = true;
        // The command still reaches the venue: giving up waiting says nothing of its effect.
        inFlight.reject(
          new PaperbotError('REQUEST_TIMEOUT', `${prepared.endpoint}: the caller stopped waiting`, {
            details: { outcome: 'unknown', requestId: prepared.requestId },
          }),
        );
      };
      inFlight.onAbort = onAbort;
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    }
    if (this.latency.fixed) {
      // Every command waits the same: they are applied in the order sent, by one function.
      this.toApply.push(inFlight);
      this.clock.setTimeout(this.applyNext, this.latency.order());
    } else {
      this.clock.setTimeout(() => this.applyInFlight(inFlight), this.latency.order());
    }
    return promise;
  }

  getRequest(requestId: string): Promise<MutationStatus> {
    return this.read(() => this.core.requestStatus(this.accountId, requestId));
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
    return [
      ...pagedItems((cursor) =>
        this.exchange.listPositions(this.accountId, {
          limit: POSITION_PAGE,
          ...(cursor === undefined ? {} : { cursor }),
        }),
      ),
    ];
  }

  // ------------------------------------------------------------------ internals

  /** A sent command reaches the venue: applied now, answered after the response latency. */
  private applyInFlight(inFlight: InFlight): void {
    this.activity++;
    this.apply(inFlight);
    if (this.latency.fixed) {
      this.toAnswer.push(inFlight);
      this.clock.setTimeout(this.answerNext, this.latency.response());
    } else {
      this.clock.setTimeout(() => this.answer(inFlight), this.latency.response());
    }
  }

  private answer(inFlight: InFlight): void {
    this.activity++;
    if (inFlight.answered) return;
    inFlight.answered = true;
    if (inFlight.onAbort !== undefined) {
      inFlight.signal?.removeEventListener('abort', inFlight.onAbort);
    }
    if (inFlight.error !== undefined) inFlight.reject(inFlight.error);
    else inFlight.resolve(inFlight.value);
  }

  /** The account's fills, newest first as GET /v1/fills reads them (for a read-back). */
  private fillsNewestFirst(): Iterable<Fill> {
    return pagedItems((cursor) =>
      this.exchange.listFills(this.accountId, {
        limit: POSITION_PAGE,
        ...(cursor === undefined ? {} : { cursor }),
      }),
    );
  }

  private read<T>(work: () => T): Promise<T> {
    this.activity++;
    const delay = this.latency.readMs;
    if (delay === 0) {
      try {
        return Promise.resolve(work());
      } catch (error) {
        return Promise.reject(toVenueFailure(error));
      }
    }
    return new Promise<T>((resolve, reject) => {
      this.clock.setTimeout(() => {
        this.activity++;
        try {
          resolve(work());
        } catch (error) {
          reject(toVenueFailure(error));
        }
      }, delay);
    });
  }

  /** The command's path parameters and body; bytes this venue did not check are checked here. */
  private parse(prepared: PreparedCommand): ParsedCommand {
    // The checked command itself: in process, nothing is parsed again (nor copied).
    if (prepared instanceof CheckedCommand) return prepared;
    const params = pathParams(prepared);
    // Read for the market it concerns only; the core checks the bytes themselves.
    let body: unknown = null;
    try {
      body = JSON.parse(decoder.decode(prepared.bodyBytes));
    } catch {
      // The core refuses it with the server's issue.
    }
    const known = typeof body === 'object' && body !== null && !Array.isArray(body);
    return {
      params,
      body: (known ? body : { request_id: prepared.requestId }) as ParsedCommand['body'],
      unchecked: prepared.bodyBytes,
    };
  }

  /** Applies a command now through the service core (idempotency included), into its record. */
  private apply(inFlight: InFlight): void {
    const endpoint = inFlight.prepared.endpoint;
    const command = inFlight.command;
    try {
      this.hooks.beforeCommand?.(this.commandMarket(endpoint, command));
      const traceId = command.body.request_id;
      const answer =
        command.unchecked === null
          ? this.core.execute({
              endpoint,
              account: this.account,
              params: command.params as PathParamsOf<CommandEndpoint>,
              body: command.body as never,
              traceId,
            })
          : this.core.submit({
              endpoint,
              account: this.account,
              params: command.params,
              bytes: command.unchecked,
              traceId,
            });
      if (answer.status < 400) inFlight.value = answer.body;
      else inFlight.error = refusalOf(answer);
    } catch (error) {
      inFlight.error = toVenueFailure(error);
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

  private onEngineEvent(event: PrivateEvent): void {
    if (event.type === 'authoritative_status') {
      if (TERMINAL.has(event.data.to_state)) {
        this.activeOrders.delete(event.data.entity_id);
      } else {
        this.activeOrders.add(event.data.entity_id);
      }
    }
    this.hooks.onEngineEvent?.(event);
    if (this.closed) return;
    const last = this.deliveries[this.deliveries.length - 1];
    const now = this.clock.now();
    // Drawn delays never overtake: events reach the bot in the order they happened.
    const dueAt = this.latency.fixedEvents
      ? now + this.latency.eventMs
      : Math.max(now + this.latency.event(), last?.dueAt ?? now);
    if (last !== undefined && last.dueAt === dueAt) {
      last.events.push(event);
      return;
    }
    const spare = this.spareDeliveries.pop();
    let delivery: PendingDelivery;
    if (spare === undefined) {
      delivery = { dueAt, events: [event] };
    } else {
      delivery = spare;
      delivery.dueAt = dueAt;
      delivery.events.push(event);
    }
    this.deliveries.push(delivery);
    this.clock.setTimeout(this.deliverNext, dueAt - now);
  }

  private deliver(): void {
    const delivery = this.deliveries.shift();
    if (delivery === undefined || this.closed) return;
    this.activity++;
    // Shifted off `deliveries` first: an event handed on here cannot add to this batch.
    for (const event of delivery.events) {
      this.privateStream.deliver(event);
      switch (event.type) {
        case 'cancel_all_after.triggered':
        case 'liquidation':
          this.riskSubject.next(event);
          break;
        default:
          break;
      }
    }
    if (this.spareDeliveries.length < SPARE_DELIVERIES) {
      delivery.events.length = 0;
      this.spareDeliveries.push(delivery);
    }
  }
}
