/**
 * The one place where a command meets the engine. The HTTP server and the replay venue are two
 * transports over this core: each hands it a checked command (endpoint, account, path
 * parameters, query, normalized body) and gets back the answer the service gives, as a status,
 * a body and the account's private events the command caused.
 *
 * The core owns what must not differ between transports: the endpoint-to-engine map
 * (`endpoints.ts`), the key's risk limits (carried by the account), the idempotency ledger and
 * its fingerprint (`idempotency.ts`), per-item idempotency of batches (`batch.ts`) and the error
 * envelope (`errors.ts`). Every coded refusal comes back as the envelope with its status; only
 * an unexpected exception (a bug) is thrown, for the transport to log and answer as it must.
 */
import type { Clock } from '../../core/clock.ts';
import type {
  BodyOf,
  EndpointDefinition,
  EndpointName,
  MutationStatus,
  OrderStatus,
  PathParamsOf,
  PrivateEvent,
  ServiceIssue,
} from '../../protocol/index.ts';
import { endpoints, validateWire } from '../../protocol/index.ts';
import type { Exchange } from '../engine/exchange.ts';
import type { Store } from '../store/store.ts';
import { placeBatchIdempotently } from './batch.ts';
import {
  createEndpointHandlers,
  type EndpointContext,
  type EndpointHandlers,
  type ServiceAccount,
} from './endpoints.ts';
import { finishBody, parseBody } from './check.ts';
import { codedFailureOf, envelopeOf, invalidRequestError, ServerError } from './errors.ts';
import {
  commandTypeOf,
  IdempotencyLedger,
  isStoredOutcome,
  LazyFingerprint,
} from './idempotency.ts';

/** One command, checked by its transport (see `checkBody` for bytes not yet checked). */
export interface ServiceCommand<E extends EndpointName = EndpointName> {
  readonly endpoint: E;
  /** Who the command acts for; null on public endpoints. */
  readonly account: ServiceAccount | null;
  readonly params: PathParamsOf<E>;
  /** The parsed query; an empty object when the endpoint takes none. */
  readonly query?: unknown;
  /** The body as the schema parsed it and `normalizeBody` normalized it; null without one. */
  readonly body: BodyOf<E> | null;
  /** The transport's id of this request, written into error envelopes as `request_id`. */
  readonly traceId: string;
}

export interface ServiceAnswer {
  /** The HTTP status the service answers with. */
  readonly status: number;
  /** The success body, or the error envelope. */
  readonly body: unknown;
  /** True when a repeated `request_id` got its first answer again. */
  readonly replayed: boolean;
  /**
   * True for a refusal the ledger does not keep (validation, conflict, a retryable or read
   * refusal): the same request may be sent again. The server applies test faults only to the
   * other answers, as it always has.
   */
  readonly refused: boolean;
  /** The account's private events the command caused, in sequence order. */
  readonly events: readonly PrivateEvent[];
}

export interface ServiceCoreOptions {
  readonly exchange: Exchange;
  readonly clock: Clock;
  /** Where the idempotency ledger keeps its records (see `IdempotencyWindow` for a replay). */
  readonly store: Store;
  /** /ready and /v1/status; default: always ready. */
  readonly isReady?: () => boolean;
  /**
   * Checks a success body before it is answered or recorded (the server's `checkResponses`);
   * throwing makes it an unexpected failure.
   */
  readonly checkResponse?: (endpoint: EndpointDefinition, body: unknown, traceId: string) => void;
  /** Told when the ledger cannot follow an event (default: the error is thrown). */
  readonly onObserveError?: (error: unknown) => void;
}

const NO_EVENTS: readonly PrivateEvent[] = Object.freeze([]);

/** An answer whose events are set when the command has run (`execute`). */
type MutableAnswer = { -readonly [Key in keyof ServiceAnswer]: ServiceAnswer[Key] };

function answerOf(
  status: number,
  body: unknown,
  replayed: boolean,
  refused: boolean,
): MutableAnswer {
  return { status, body, replayed, refused, events: NO_EVENTS };
}

function bodyRequestId(body: unknown): string {
  const value = (body as { request_id?: unknown } | null)?.request_id;
  return typeof value === 'string' ? value : '';
}

export class ServiceCore {
  readonly exchange: Exchange;
  readonly ledger: IdempotencyLedger;
  private readonly clock: Clock;
  private readonly handlers: EndpointHandlers;
  private readonly checkResponse: ServiceCoreOptions['checkResponse'];
  /** The account of the command running now, whose events are being collected. */
  private collectingFor: string | null = null;
  private collected: PrivateEvent[] | null = null;
  private readonly unsubscribe: () => void;

  constructor(options: ServiceCoreOptions) {
    const { exchange } = options;
    this.exchange = exchange;
    this.clock = options.clock;
    this.checkResponse = options.checkResponse;
    this.ledger = new IdempotencyLedger(options.store, {
      orderStatus: (accountId, orderId): OrderStatus | null => {
        try {
          return exchange.getOrder(accountId, orderId).status;
        } catch {
          return null;
        }
      },
    });
    const onObserveError = options.onObserveError;
    this.unsubscribe = exchange.onPrivateEvent((accountId, event) => {
      if (onObserveError === undefined) {
        this.ledger.observe(accountId, event);
      } else {
        try {
          this.ledger.observe(accountId, event);
        } catch (error) {
          onObserveError(error);
        }
      }
      if (accountId === this.collectingFor) (this.collected ??= []).push(event);
    });
    const isReady = options.isReady ?? (() => true);
    this.handlers = createEndpointHandlers({
      exchange,
      ledger: this.ledger,
      isReady,
      placeBatch: (context) => placeBatchIdempotently(exchange, this.ledger, context),
    });
  }

  /** Stops following the engine's events. */
  close(): void {
    this.unsubscribe();
  }

  /**
   * Runs one command: mutations through the idempotency ledger (the same request again gets
   * the first answer, other content under the same id IDEMPOTENCY_CONFLICT), everything else
   * straight to its handler.
   */
  execute<E extends EndpointName>(command: ServiceCommand<E>): ServiceAnswer {
    const previousFor = this.collectingFor;
    const previous = this.collected;
    this.collectingFor = command.account?.accountId ?? null;
    this.collected = null;
    try {
      // The answer is made here once; its events are the ones collected while it ran.
      const answer = this.run(command);
      answer.events = this.collected ?? NO_EVENTS;
      return answer;
    } finally {
      this.collectingFor = previousFor;
      this.collected = previous;
    }
  }

  /**
   * Runs a command whose path parameters and body are not checked yet (an in-process caller
   * holding bytes of unknown origin): checked as the server checks them, refused with the same
   * envelope, then run as `execute` runs it.
   */
  submit<E extends EndpointName>(
    command: Omit<ServiceCommand<E>, 'params' | 'body'> & {
      readonly params: Readonly<Record<string, string>>;
      readonly bytes: Uint8Array;
    },
  ): ServiceAnswer {
    const endpoint: EndpointDefinition = endpoints[command.endpoint];
    const issues: ServiceIssue[] = [];
    const params = validateWire(endpoint.pathParams, command.params, 'path');
    if (!params.success) issues.push(...params.issues);
    const parsed = parseBody(endpoint, command.bytes, issues);
    let body: unknown;
    try {
      if (issues.length > 0) throw invalidRequestError(issues);
      body = finishBody(command.endpoint, parsed);
    } catch (error) {
      return this.refusal(error, command.traceId);
    }
    return this.execute({
      endpoint: command.endpoint,
      account: command.account,
      params: (params.success ? params.data : {}) as PathParamsOf<E>,
      query: command.query,
      body: body as BodyOf<E> | null,
      traceId: command.traceId,
    });
  }

  /** GET /v1/requests/{request_id} without a transport: ORDER_NOT_FOUND when unknown. */
  requestStatus(accountId: string, requestId: string): MutationStatus {
    return this.ledger.status(accountId, requestId, this.clock.now());
  }

  private run(command: ServiceCommand): MutableAnswer {
    const endpoint: EndpointDefinition = endpoints[command.endpoint];
    const context = {
      name: command.endpoint,
      params: command.params,
      query: command.query ?? {},
      body: command.body,
      account: command.account,
      now: this.clock.now(),
    } as EndpointContext<EndpointName>;
    const handler = this.handlers[command.endpoint] as (
      context: EndpointContext<EndpointName>,
    ) => unknown;
    const commandType = commandTypeOf[command.endpoint];
    if (!endpoint.mutation || commandType === undefined || command.account === null) {
      try {
        return answerOf(
          endpoint.successStatus,
          this.checked(endpoint, handler(context), command.traceId),
          false,
          false,
        );
      } catch (error) {
        return this.refusal(error, command.traceId);
      }
    }
    const accountId = command.account.accountId;
    const mutationId = bodyRequestId(command.body);
    // Hashed only when compared here or when the store serializes the record.
    const fingerprint = new LazyFingerprint(command.endpoint, command.params, command.body);
    const existing = this.ledger.find(accountId, mutationId);
    if (existing !== undefined) {
      if (existing.fingerprint !== fingerprint.value) {
        const conflict = new ServerError(
          'IDEMPOTENCY_CONFLICT',
          `request_id ${mutationId} was already used with different content`,
          { details: { request_id: mutationId } },
        );
        return this.refusal(conflict, command.traceId);
      }
      return answerOf(existing.status, existing.body, true, false);
    }
    // The engine's commit and the request's record land together (one SQLite transaction with
    // a data dir). An outcome that is not stored is answered after it, as it was before.
    const outcome = this.ledger.atomically(() => {
      let status: number = endpoint.successStatus;
      let body: unknown;
      try {
        body = this.checked(endpoint, handler(context), command.traceId);
      } catch (error) {
        const failure = codedFailureOf(error);
        if (failure === null || !isStoredOutcome(failure.httpStatus, failure.retryable)) {
          return { thrown: error };
        }
        status = failure.httpStatus;
        body = envelopeOf(failure, command.traceId);
      }
      this.ledger.record({
        version: 1,
        account_id: accountId,
        request_id: mutationId,
        endpoint: command.endpoint,
        command_type: commandType,
        fingerprint,
        status,
        body,
        created_at: context.now,
        completed_at: null,
      });
      return { status, body };
    });
    if ('thrown' in outcome) return this.refusal(outcome.thrown, command.traceId);
    return answerOf(outcome.status, outcome.body, false, false);
  }

  /** A coded refusal as the envelope; anything else is a bug, thrown for the transport. */
  private refusal(error: unknown, traceId: string): MutableAnswer {
    const failure = codedFailureOf(error);
    if (failure === null) throw error;
    return answerOf(failure.httpStatus, envelopeOf(failure, traceId), false, true);
  }

  private checked(endpoint: EndpointDefinition, body: unknown, traceId: string): unknown {
    this.checkResponse?.(endpoint, body, traceId);
    return body;
  }
}
