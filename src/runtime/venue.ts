/**
 * The venue as the runtime's execution side sees it. The live client (through an adapter), the
 * emulator in-process and the replay venue all implement `ExecutionVenue`, so the executor,
 * order tracker, reconciler and dead-man heartbeat never know which one they run against
 * (design: "Live trading and replay differ only in the clock and the venue").
 *
 * Mutations go in two steps. `prepare` serializes a command once; the executor writes those exact
 * bytes to the journal, then hands the same `PreparedCommand` to `send`. After a timeout or a
 * restart the executor rebuilds the command from the journal with `restore` (no serialization)
 * and resends byte for byte with the same `request_id` (design rules 5 and 6; interface Errors,
 * rule 5). A venue never retries a mutation by itself.
 *
 * The one serializer the implementations share (`prepareCommand` / `restoreCommand`, with its
 * cache of checked bodies) is the command module, src/signing/command.ts, also the client's, so
 * that a body journaled by one process is byte-identical to what any venue would send for it.
 */
import type { Observable } from 'rxjs';
import {
  type Account,
  type CancelAllAfterTriggeredEvent,
  type Fill,
  type LiquidationEvent,
  type MutationStatus,
  type Order,
  type OrderStatusEvent,
  type Position,
  type ResponseOf,
} from '../protocol/index.ts';
import type {
  CommandEndpoint,
  PreparedCommand as SharedPreparedCommand,
  VenueCommandOf,
} from '../signing/index.ts';

/**
 * The commands and their serializer live in the one command module (src/signing/command.ts),
 * below the client and the runtime; re-exported here as the port's own words.
 */
export {
  COMMAND_ENDPOINTS,
  type CommandEndpoint,
  isCommandEndpoint,
  type VenueCommand,
  type VenueCommandOf,
} from '../signing/index.ts';

/**
 * A serialized command: what is journaled, signed and sent, and resent unchanged, with the
 * checked body an in-process venue takes (the shared type of src/signing, also the client's).
 */
export type PreparedCommand<E extends CommandEndpoint = CommandEndpoint> = SharedPreparedCommand<E>;

/**
 * Error codes of `send` that leave the outcome unknown: the request may or may not have been
 * processed. Service error codes (the interface's table) arrive as they are, with
 * `details.httpStatus` and `details.serverRequestId` where the venue has them.
 */
export const UNKNOWN_OUTCOME_TRANSPORT_CODES = [
  'REQUEST_TIMEOUT',
  'TRANSPORT_FAILURE',
  'MALFORMED_RESPONSE',
] as const;

/** The stream lost continuity (reconnect without a gap fill, sequence gap, auth loss). */
export interface ResyncSignal {
  readonly reason: string;
  /** Epoch milliseconds on the venue's clock when continuity was lost. */
  readonly at: number;
}

export type RiskEvent = CancelAllAfterTriggeredEvent | LiquidationEvent;

/**
 * One step of the account's private stream as the runtime applies it, in sequence order. `gap`
 * says that events between `after` and `next` will never be delivered (the venue's event log no
 * longer reaches back, or delivery resumed at the account head after a halt): fills among them
 * must be read back over REST.
 */
export type PrivateStreamItem =
  | { readonly kind: 'order'; readonly sequence: number; readonly event: OrderStatusEvent }
  | {
      readonly kind: 'fill';
      readonly sequence: number;
      readonly occurredAt: string;
      readonly fill: Fill;
    }
  /** An event the execution side does not apply (account, positions, risk, unknown types). */
  | { readonly kind: 'other'; readonly sequence: number; readonly occurredAt: string }
  /**
   * An event of a known type that broke its schema (tolerant reading): what it said is read
   * back (its order by `entityId`; fills over REST, keyed by `fill_id`).
   */
  | {
      readonly kind: 'unreadable';
      readonly sequence: number;
      readonly channel: string | null;
      readonly type: string | null;
      readonly entityId: string | null;
      readonly problem: string;
    }
  | {
      readonly kind: 'gap';
      /** The last sequence delivered before the gap (null: none yet). */
      readonly after: number | null;
      /**
       * The next sequence that will be delivered (null: not known yet). At or below `after`:
       * the counter went backwards (a reset account) and starts over after `next - 1`.
       */
      readonly next: number | null;
      readonly reason: string;
    };

/** Where a read-back of GET /v1/fills stops. */
export interface FillReadBackStop {
  /** The newest fill known: reading stops once it is met (it is not returned). */
  readonly stopFillId: string | null;
  /** Fills that occurred before this time are not returned, and end the reading. */
  readonly stopOccurredAt: string | null;
  /** Most fills returned; the read ends there, reported incomplete. */
  readonly maximumFills: number;
}

export interface FillReadBack {
  /** Oldest first. */
  readonly fills: readonly Fill[];
  /** False when the read ended at `maximumFills` before reaching the stop. */
  readonly complete: boolean;
}

/**
 * The private stream with its sequences (`src/runtime/private-stream.ts` holds what the venues
 * share). The runtime keeps the highest sequence applied in its journal; a live venue resumes
 * the stream after it and hands on every event from there exactly once, buffering (bounded)
 * until the first subscriber; an in-process venue hands on its engine's events as they come.
 */
export interface PrivateStreamFeed {
  /** Orders, fills, other events and gaps, in sequence order; replays what arrived before. */
  readonly items$: Observable<PrivateStreamItem>;
  /** GET /v1/fills back to the stop (bounded), every page of it. */
  readFillsBack(stop: FillReadBackStop): Promise<FillReadBack>;
}

export interface ExecutionVenue {
  /**
   * True when `send` stops its transport work on an aborted signal (a network venue). Callers
   * then pass a signal that aborts when they give up waiting; to other venues they pass none
   * (giving up is the caller's own timer either way).
   */
  readonly abortable?: boolean;
  /**
   * True when every call settles by itself: an in-process venue whose answers come on the
   * clock's own timers (the replay venue). Callers then put no deadline of their own on its
   * calls (no timer, no signal). A venue behind a network or another process leaves it unset:
   * its calls may hang, and the caller's deadline gives up on them.
   */
  readonly cannotHang?: boolean;
  /** Validates and serializes a command once. Throws `INVALID_COMMAND` with `details.issues`. */
  prepare<E extends CommandEndpoint>(command: VenueCommandOf<E>): PreparedCommand<E>;
  /** Rebuilds a command from journaled bytes, without re-serializing them. */
  restore<E extends CommandEndpoint>(
    endpoint: E,
    path: string,
    bodyBytes: Uint8Array,
  ): PreparedCommand<E>;
  /**
   * Sends the exact bytes once (no transport retries). Resolves to the parsed success response;
   * rejects with a PaperbotError whose `code` is the service's error code (with
   * `details.httpStatus`) or one of `UNKNOWN_OUTCOME_TRANSPORT_CODES`. `timeoutMs` replaces the
   * transport's own time limit for this call: operator commands (the dead-man heartbeat, the
   * shutdown) choose theirs apart from order flow, and a slow venue must not cut them short.
   */
  send<E extends CommandEndpoint>(
    prepared: PreparedCommand<E>,
    signal?: AbortSignal,
    timeoutMs?: number,
  ): Promise<ResponseOf<E>>;

  /** GET /v1/requests/{id}; rejects with `ORDER_NOT_FOUND` when the service never saw it. */
  getRequest(requestId: string): Promise<MutationStatus>;
  getOrder(orderId: string): Promise<Order>;
  getOrderByClientId(clientOrderId: string): Promise<Order>;
  /** Every active order of the account (PENDING, SUBMITTED, OPEN, PARTIALLY_FILLED, UNKNOWN). */
  listOpenOrders(): Promise<Order[]>;
  /** Every position of the account (all pages). */
  listPositions(): Promise<Position[]>;
  getAccount(): Promise<Account>;

  /** Risk channel events (`cancel_all_after.triggered`, `liquidation`). */
  readonly riskEvents$: Observable<RiskEvent>;
  /** Emits whenever private-stream continuity was lost; consumers fail closed until reconciled. */
  readonly resync$: Observable<ResyncSignal>;
  /**
   * The account's private stream with its sequences: every venue has one (live, in-process,
   * replay), and the order tracker takes order events and fills from here alone, applying each
   * exactly once by sequence and `fill_id`, with the gap fill and the read-back.
   */
  readonly privateStream: PrivateStreamFeed;
}
