/**
 * `ExecutionVenue` over the REST and stream clients.
 *
 * - Commands are serialized and hashed once by the runtime's shared serializer
 *   (`prepareCommand`); the same `PreparedCommand` (the bytes the executor journaled, and
 *   their hash) is what the client signs and sends, simulations included. Nothing is parsed,
 *   serialized or hashed again on the way.
 * - Failures become `PaperbotError`s with `details.httpStatus` and `details.outcome`, so the
 *   executor tells Rejected from Unknown (`errors.ts`).
 * - Reads page through everything: every active order (each active status, UNKNOWN included),
 *   every position.
 * - Streams come from the stream client. A resync that halts private delivery is passed on at
 *   once (the runtime fails closed), then delivery resumes at the account's current head and
 *   a second signal asks for a reconciliation whose REST reads come after that point, so nothing
 *   between the halt and the resume is lost.
 */
import { type Observable, Subject, type Subscription } from 'rxjs';
import type {
  ResyncSignal as ClientResyncSignal,
  RestClient,
  StreamClient,
} from '../../client/index.ts';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import {
  type Account,
  type MutationStatus,
  type Order,
  type OrderStatus,
  type Position,
  type ResponseOf,
} from '../../protocol/index.ts';
import type { Logger } from '../../core/logger.ts';
import { prepareCommand, restoreCommand } from '../../signing/index.ts';
import {
  type CommandEndpoint,
  type ExecutionVenue,
  type PreparedCommand,
  type ResyncSignal,
  type RiskEvent,
  type VenueCommandOf,
} from '../venue.ts';
import { translated, translateFailures } from '../venue-error.ts';
import type { VenueSend } from '../venue-send.ts';
import { LivePrivateStream } from './private-stream.ts';
import { findSequenceHead } from './sequence-head.ts';

/** Active statuses in lifecycle order: an order that moves on while the lists are read is met again later. */
const ACTIVE_STATUSES: readonly OrderStatus[] = [
  'PENDING',
  'SUBMITTED',
  'OPEN',
  'PARTIALLY_FILLED',
  'UNKNOWN',
];
const PAGE_LIMIT = 200;

export interface LiveExecutionVenueOptions {
  readonly rest: RestClient;
  readonly stream: StreamClient;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Wait before trying again to resume a halted stream. Default 1 000 ms. */
  readonly resumeRetryMs?: number;
  /**
   * The private sequence the stream client was told to resume after (`startAfterSequence`, the
   * journal's); null or absent when it starts at the head.
   */
  readonly resumeAfterSequence?: number | null;
}

export class LiveExecutionVenue implements ExecutionVenue {
  readonly riskEvents$: Observable<RiskEvent>;
  readonly resync$: Observable<ResyncSignal>;
  readonly privateStream: LivePrivateStream;
  /** A REST send stops on the signal: a caller that gives up frees the connection. */
  readonly abortable = true;

  private readonly rest: RestClient;
  private readonly stream: StreamClient;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly resumeRetryMs: number;
  private readonly resyncSubject = new Subject<ResyncSignal>();
  private resyncSubscription: Subscription | null = null;
  private resuming: Promise<void> | null = null;
  private resumeTimer: TimerHandle | undefined;
  private stopped = false;

  constructor(options: LiveExecutionVenueOptions) {
    this.rest = options.rest;
    this.stream = options.stream;
    this.clock = options.clock;
    this.logger = options.logger;
    this.resumeRetryMs = options.resumeRetryMs ?? 1_000;
    this.riskEvents$ = this.stream.risk$;
    this.resync$ = this.resyncSubject.asObservable();
    this.privateStream = new LivePrivateStream({
      rest: this.rest,
      stream: this.stream,
      resumeAfterSequence: options.resumeAfterSequence ?? null,
    });
  }

  /** Starts following the stream's resync signals (before the stream connects). */
  start(): void {
    if (this.resyncSubscription !== null || this.stopped) return;
    this.privateStream.start();
    this.resyncSubscription = this.stream.resync$.subscribe((signal) =>
      this.onStreamResync(signal),
    );
  }

  stop(): void {
    this.stopped = true;
    this.privateStream.stop();
    this.resyncSubscription?.unsubscribe();
    this.resyncSubscription = null;
    this.clock.clearTimeout(this.resumeTimer);
    this.resumeTimer = undefined;
  }

  /** Resolves once no resume of a halted stream is under way. */
  async idle(): Promise<void> {
    while (this.resuming !== null) await this.resuming;
  }

  prepare<E extends CommandEndpoint>(command: VenueCommandOf<E>): PreparedCommand<E> {
    return prepareCommand(command);
  }

  restore<E extends CommandEndpoint>(
    endpoint: E,
    path: string,
    bodyBytes: Uint8Array,
  ): PreparedCommand<E> {
    return restoreCommand(endpoint, path, bodyBytes);
  }

  /** The client's `send`, its failures translated (an interceptor, `translateFailures`). */
  readonly send: VenueSend = translateFailures(
    <E extends CommandEndpoint>(
      prepared: PreparedCommand<E>,
      signal?: AbortSignal,
      timeoutMs?: number,
    ): Promise<ResponseOf<E>> => {
      const options = {
        ...(signal === undefined ? {} : { signal }),
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
      };
      return this.rest.send(prepared, options) as Promise<ResponseOf<E>>;
    },
  );

  getRequest(requestId: string): Promise<MutationStatus> {
    return translated(() => this.rest.getRequest({ request_id: requestId }));
  }

  getOrder(orderId: string): Promise<Order> {
    return translated(() => this.rest.getOrder({ order_id: orderId }));
  }

  getOrderByClientId(clientOrderId: string): Promise<Order> {
    return translated(() => this.rest.getOrderByClientId({ client_order_id: clientOrderId }));
  }

  listOpenOrders(): Promise<Order[]> {
    return translated(async () => {
      const byId = new Map<string, Order>();
      for (const status of ACTIVE_STATUSES) {
        for await (const order of this.rest.iterateOrders({ status, limit: PAGE_LIMIT })) {
          const held = byId.get(order.order_id);
          if (held === undefined || newer(order, held)) byId.set(order.order_id, order);
        }
      }
      return [...byId.values()];
    });
  }

  listPositions(): Promise<Position[]> {
    return translated(async () => {
      const positions: Position[] = [];
      for await (const position of this.rest.iteratePositions({ limit: PAGE_LIMIT })) {
        positions.push(position);
      }
      return positions;
    });
  }

  getAccount(): Promise<Account> {
    return translated(() => this.rest.getAccount());
  }

  // Resync

  private onStreamResync(signal: ClientResyncSignal): void {
    this.logger.warn('private stream continuity lost', {
      reason: signal.reason,
      message: signal.message,
      lastSequence: signal.lastSequence,
      halted: signal.halted,
    });
    this.resyncSubject.next(
      Object.freeze({ reason: `${signal.reason}: ${signal.message}`, at: signal.at }),
    );
    if (signal.halted) this.resume(signal.lastSequence);
  }

  private resume(hint: number): void {
    if (this.resuming !== null || this.stopped) return;
    const run = async (): Promise<void> => {
      try {
        const head = await findSequenceHead(async (afterSequence) => {
          const page = await this.rest.listEvents({ after_sequence: afterSequence, limit: 1 });
          // The events' own sequences say it, not the page's `next_after_sequence`.
          return page.has_more || page.data.some((event) => event.sequence > afterSequence);
        }, hint);
        if (this.stopped) return;
        // Fills between the halt and the head are never delivered: they are read back.
        this.privateStream.resumedAt(head, `delivery resumed at the account head ${head}`);
        this.stream.resetSequence(head);
        this.logger.warn('private stream resumed at the account head; reconciling', { head });
        this.resyncSubject.next(
          Object.freeze({ reason: `resumed at sequence ${head}`, at: this.clock.now() }),
        );
      } catch (error) {
        if (this.stopped) return;
        this.logger.error('could not find where to resume the private stream; retrying', {
          code: (error as { code?: unknown }).code,
          message: error instanceof Error ? error.message : String(error),
        });
        this.clock.clearTimeout(this.resumeTimer);
        this.resumeTimer = this.clock.setTimeout(() => {
          this.resumeTimer = undefined;
          this.resume(hint);
        }, this.resumeRetryMs);
      }
    };
    this.resuming = run().finally(() => {
      this.resuming = null;
    });
  }
}

/** The later version of one order, by its event sequence. */
function newer(candidate: Order, held: Order): boolean {
  const offered = candidate.last_event_sequence;
  const current = held.last_event_sequence;
  return offered !== null && (current === null || offered > current);
}
