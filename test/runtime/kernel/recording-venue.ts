/**
 * An execution venue that passes everything to the real one and notes, in order, every command
 * handed to it: which endpoint, which request id, at what virtual time.
 */
import type { Observable } from 'rxjs';
import type {
  Account,
  MutationStatus,
  Order,
  Position,
  ResponseOf,
} from '../../../src/protocol/index.ts';
import type {
  CommandEndpoint,
  ExecutionVenue,
  PreparedCommand,
  PrivateStreamFeed,
  ResyncSignal,
  RiskEvent,
  VenueCommandOf,
} from '../../../src/runtime/venue.ts';

export interface SentCommand {
  readonly endpoint: CommandEndpoint;
  readonly requestId: string;
  readonly body: Record<string, unknown>;
}

const decoder = new TextDecoder();

export class RecordingVenue implements ExecutionVenue {
  readonly sent: SentCommand[] = [];
  readonly riskEvents$: Observable<RiskEvent>;
  readonly resync$: Observable<ResyncSignal>;
  readonly privateStream: PrivateStreamFeed;

  constructor(private readonly inner: ExecutionVenue) {
    this.riskEvents$ = inner.riskEvents$;
    this.resync$ = inner.resync$;
    this.privateStream = inner.privateStream;
  }

  sends(endpoint: CommandEndpoint): SentCommand[] {
    return this.sent.filter((command) => command.endpoint === endpoint);
  }

  prepare<E extends CommandEndpoint>(command: VenueCommandOf<E>): PreparedCommand<E> {
    return this.inner.prepare(command);
  }

  restore<E extends CommandEndpoint>(endpoint: E, path: string, bytes: Uint8Array) {
    return this.inner.restore(endpoint, path, bytes);
  }

  send<E extends CommandEndpoint>(
    prepared: PreparedCommand<E>,
    signal?: AbortSignal,
  ): Promise<ResponseOf<E>> {
    this.sent.push({
      endpoint: prepared.endpoint,
      requestId: prepared.requestId,
      body: JSON.parse(decoder.decode(prepared.bodyBytes)) as Record<string, unknown>,
    });
    return this.inner.send(prepared, signal);
  }

  getRequest(requestId: string): Promise<MutationStatus> {
    return this.inner.getRequest(requestId);
  }

  getOrder(orderId: string): Promise<Order> {
    return this.inner.getOrder(orderId);
  }

  getOrderByClientId(clientOrderId: string): Promise<Order> {
    return this.inner.getOrderByClientId(clientOrderId);
  }

  listOpenOrders(): Promise<Order[]> {
    return this.inner.listOpenOrders();
  }

  listPositions(): Promise<Position[]> {
    return this.inner.listPositions();
  }

  getAccount(): Promise<Account> {
    return this.inner.getAccount();
  }
}
