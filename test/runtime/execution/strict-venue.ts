/**
 * A strict fake of `ExecutionVenue` (design rule 12: mocks fail on unmatched or leftover calls).
 * Each call takes the first pending expectation of its method; a call with none, or one whose
 * check throws, is recorded as a failure and answered with FAKE_UNEXPECTED_CALL. `verify()`
 * throws on any recorded failure and on expectations never used. Serialization is the real one
 * (`prepareCommand` / `restoreCommand`).
 */
import { Subject } from 'rxjs';
import { PaperbotError } from '../../../src/core/errors.ts';
import type {
  Account,
  Fill,
  MutationStatus,
  Order,
  OrderStatusEvent,
  Position,
  ResponseOf,
} from '../../../src/protocol/index.ts';
import {
  type CommandEndpoint,
  type ExecutionVenue,
  type FillReadBack,
  type FillReadBackStop,
  type PreparedCommand,
  type PrivateStreamFeed,
  type PrivateStreamItem,
  type ResyncSignal,
  type RiskEvent,
  type VenueCommandOf,
} from '../../../src/runtime/venue.ts';
import { prepareCommand, restoreCommand } from '../../../src/signing/index.ts';

export type VenueCall =
  | { readonly method: 'send'; readonly prepared: PreparedCommand }
  | { readonly method: 'getRequest'; readonly requestId: string }
  | { readonly method: 'getOrder'; readonly orderId: string }
  | { readonly method: 'getOrderByClientId'; readonly clientOrderId: string }
  | { readonly method: 'listOpenOrders' }
  | { readonly method: 'listPositions' }
  | { readonly method: 'getAccount' }
  | { readonly method: 'readFillsBack'; readonly stop: FillReadBackStop };

export type VenueMethod = VenueCall['method'];
type CallOf<M extends VenueMethod> = Extract<VenueCall, { method: M }>;

/** What an expectation answers: a value, an error to throw, or a function of the call. */
export type Answer<M extends VenueMethod> =
  | { readonly value: unknown }
  | { readonly error: unknown }
  | { readonly hang: true }
  | { readonly answer: (call: CallOf<M>) => unknown };

interface Expectation {
  readonly method: VenueMethod;
  readonly label: string;
  readonly check: ((call: VenueCall) => void) | undefined;
  readonly answer: Answer<VenueMethod>;
}

const decoder = new TextDecoder();

export function bodyOf(prepared: PreparedCommand): Record<string, unknown> {
  return JSON.parse(decoder.decode(prepared.bodyBytes)) as Record<string, unknown>;
}

export class StrictVenue implements ExecutionVenue {
  /** The private stream's items as the test hands them on. */
  readonly itemSource = new Subject<PrivateStreamItem>();
  readonly privateStream: PrivateStreamFeed = {
    items$: this.itemSource.asObservable(),
    readFillsBack: (stop) => this.readFillsBack(stop),
  };
  /** The highest sequence handed on: a fill given without one comes at it. */
  private lastSequence = 0;
  /** An order event to the private stream, at its own sequence. */
  readonly orderEventSource = {
    next: (event: OrderStatusEvent): void => {
      this.lastSequence = Math.max(this.lastSequence, event.sequence);
      this.itemSource.next({ kind: 'order', sequence: event.sequence, event });
    },
  };
  /** A fill to the private stream, at the highest sequence handed on so far. */
  readonly fillSource = {
    next: (fill: Fill): void => {
      this.itemSource.next({
        kind: 'fill',
        sequence: this.lastSequence,
        occurredAt: fill.occurred_at,
        fill,
      });
    },
  };
  readonly riskEventSource = new Subject<RiskEvent>();
  readonly resyncSource = new Subject<ResyncSignal>();
  readonly riskEvents$ = this.riskEventSource.asObservable();
  readonly resync$ = this.resyncSource.asObservable();

  readonly calls: VenueCall[] = [];
  readonly failures: string[] = [];
  private readonly expectations: Expectation[] = [];

  /** Expects one call of `method`; `check` may assert on it (throwing fails the call). */
  expect<M extends VenueMethod>(
    method: M,
    answer: Answer<M>,
    options: {
      readonly label?: string;
      readonly check?: (call: CallOf<M>) => void;
    } = {},
  ): this {
    this.expectations.push({
      method,
      label: options.label ?? method,
      check: options.check as ((call: VenueCall) => void) | undefined,
      answer: answer as Answer<VenueMethod>,
    });
    return this;
  }

  /** Expects a send to `endpoint`. */
  expectSend<E extends CommandEndpoint>(
    endpoint: E,
    answer: Answer<'send'>,
    check?: (prepared: PreparedCommand<E>, body: Record<string, unknown>) => void,
  ): this {
    return this.expect('send', answer, {
      label: `send ${endpoint}`,
      check: (call) => {
        if (call.prepared.endpoint !== endpoint) {
          throw new Error(`expected a send to ${endpoint}, got ${call.prepared.endpoint}`);
        }
        check?.(call.prepared as PreparedCommand<E>, bodyOf(call.prepared));
      },
    });
  }

  pending(): string[] {
    return this.expectations.map((expectation) => expectation.label);
  }

  sends(endpoint?: CommandEndpoint): PreparedCommand[] {
    return this.calls
      .filter((call): call is CallOf<'send'> => call.method === 'send')
      .map((call) => call.prepared)
      .filter((prepared) => endpoint === undefined || prepared.endpoint === endpoint);
  }

  /** Throws when a call was unexpected or failed its check, or an expectation is left over. */
  verify(): void {
    const problems = [...this.failures];
    if (this.expectations.length > 0) {
      problems.push(`expected calls never made: ${this.pending().join(', ')}`);
    }
    if (problems.length > 0) throw new Error(`StrictVenue:\n- ${problems.join('\n- ')}`);
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

  send<E extends CommandEndpoint>(prepared: PreparedCommand<E>): Promise<ResponseOf<E>> {
    return this.handle({ method: 'send', prepared }) as Promise<ResponseOf<E>>;
  }

  getRequest(requestId: string): Promise<MutationStatus> {
    return this.handle({
      method: 'getRequest',
      requestId,
    }) as Promise<MutationStatus>;
  }

  getOrder(orderId: string): Promise<Order> {
    return this.handle({ method: 'getOrder', orderId }) as Promise<Order>;
  }

  getOrderByClientId(clientOrderId: string): Promise<Order> {
    return this.handle({
      method: 'getOrderByClientId',
      clientOrderId,
    }) as Promise<Order>;
  }

  listOpenOrders(): Promise<Order[]> {
    return this.handle({ method: 'listOpenOrders' }) as Promise<Order[]>;
  }

  listPositions(): Promise<Position[]> {
    return this.handle({ method: 'listPositions' }) as Promise<Position[]>;
  }

  getAccount(): Promise<Account> {
    return this.handle({ method: 'getAccount' }) as Promise<Account>;
  }

  /** `PrivateStreamFeed.readFillsBack`, for `SequencedStrictVenue`. */
  readFillsBack(stop: FillReadBackStop): Promise<FillReadBack> {
    return this.handle({ method: 'readFillsBack', stop }) as Promise<FillReadBack>;
  }

  private describe(call: VenueCall): string {
    switch (call.method) {
      case 'send':
        return `send ${call.prepared.endpoint} ${call.prepared.requestId}`;
      case 'getRequest':
        return `getRequest ${call.requestId}`;
      case 'getOrder':
        return `getOrder ${call.orderId}`;
      case 'getOrderByClientId':
        return `getOrderByClientId ${call.clientOrderId}`;
      default:
        return call.method;
    }
  }

  private handle(call: VenueCall): Promise<unknown> {
    this.calls.push(call);
    const index = this.expectations.findIndex((expectation) => expectation.method === call.method);
    const unexpected = (message: string) => {
      this.failures.push(message);
      return Promise.reject(new PaperbotError('FAKE_UNEXPECTED_CALL', message));
    };
    if (index === -1) return unexpected(`unexpected call: ${this.describe(call)}`);
    const [expectation] = this.expectations.splice(index, 1) as [Expectation];
    try {
      expectation.check?.(call);
    } catch (error) {
      return unexpected(
        `${expectation.label}: check failed for ${this.describe(call)}: ${(error as Error).message}`,
      );
    }
    const answer = expectation.answer;
    if ('hang' in answer) return new Promise(() => {});
    if ('error' in answer) return Promise.reject(answer.error);
    if ('value' in answer) return Promise.resolve(structuredClone(answer.value));
    try {
      return Promise.resolve(answer.answer(call));
    } catch (error) {
      return Promise.reject(error);
    }
  }
}

/** Every strict venue carries a sequenced private stream (as every venue does). */
export { StrictVenue as SequencedStrictVenue };
