/**
 * The stream client's public types (`stream-client.ts`): its connection states, the frames and
 * signals it hands out, its statistics and options.
 */
import type { Clock } from '../core/clock.ts';
import type {
  CancelAllAfterTriggeredEventReading,
  LiquidationEventReading,
  PrivateChannel,
  TickerSnapshotFrame,
  TickerUpdateFrame,
} from '../protocol/index.ts';
import type { BackoffPolicy } from './backoff.ts';
import type { RestClient } from './rest-client.ts';
import type { ResyncReason } from './sequence.ts';
import type { TransportOptions } from './transport.ts';

export type ConnectionState =
  /** Not started. */
  | 'idle'
  /** Reading missed events from GET /v1/events before authenticating. */
  | 'recovering'
  /** Opening the socket and waiting for the challenge. */
  | 'connecting'
  | 'authenticating'
  | 'subscribing'
  /** Subscribed; events flow. */
  | 'live'
  /** Waiting to reconnect. */
  | 'backoff'
  /** Stopped by `close()`. */
  | 'closed'
  /** Stopped by a refusal that retrying cannot fix (revoked or expired key, clock skew). */
  | 'failed';

export type TickerFrame = TickerSnapshotFrame | TickerUpdateFrame;
export type RiskEvent = CancelAllAfterTriggeredEventReading | LiquidationEventReading;

/** Fail closed: private events are not trustworthy until the runtime reconciles. */
export interface ResyncSignal {
  readonly reason: ResyncReason;
  readonly message: string;
  /** The last sequence delivered. */
  readonly lastSequence: number;
  readonly sequence: number | null;
  /** True when delivery is halted until `resetSequence`; false when the next fill may heal it. */
  readonly halted: boolean;
  /** When it was signalled, epoch milliseconds on the client's clock. */
  readonly at: number;
  readonly cause: unknown;
}

export interface StreamStatistics {
  readonly delivered: number;
  readonly duplicatesDropped: number;
  readonly gapFills: number;
  readonly reconnects: number;
  readonly malformedFrames: number;
  /** Frames of unknown types without a private sequence (`otherFrames$`). */
  readonly otherFrames: number;
  /** Private events of unknown types (`otherEvents$`). */
  readonly otherEvents: number;
  /** Private events of known types that broke their schema (`unreadableEvents$`). */
  readonly unreadableEvents: number;
  readonly resyncs: number;
}

export interface StreamClientOptions {
  /** Gap fills (GET /v1/events), the clock offset, and the signer of the auth frame. */
  readonly rest: RestClient;
  /** Defaults to the REST client's credential's `ws_url`. */
  readonly url?: string;
  readonly clock?: Clock;
  /** Uniform in [0, 1); jitter of the reconnect backoff. */
  readonly random?: () => number;
  /**
   * Private channels to follow. Default: every private channel with a credential, none without.
   * Following all of them keeps every sequence on the stream. The key file's scope names are
   * not trusted to tell what the key may do (a venue may name scopes its own way): a channel
   * whose scope the key lacks is learned from the venue's SCOPE_REQUIRED answer to the auth
   * frame, and dropped (`lackingScopes`).
   */
  readonly privateChannels?: readonly PrivateChannel[];
  /**
   * The last private sequence already processed (from the runtime's journal): events after it
   * are delivered, read from the log first. `latest` (default): only events after the head at
   * the first authentication.
   */
  readonly startAfterSequence?: number | 'latest';
  /** Reconnect when neither a heartbeat nor a pong arrives for this long. Default 25 000. */
  readonly heartbeatTimeoutMs?: number;
  /** Send a ping this often; null (default) relies on the service's heartbeats. */
  readonly pingIntervalMs?: number | null;
  /** Socket open plus challenge. Default 10 000. */
  readonly connectTimeoutMs?: number;
  /** Waiting for `authenticated`, `subscribed`, `unsubscribed`, `pong`. Default 10 000. */
  readonly replyTimeoutMs?: number;
  readonly reconnect?: Partial<BackoffPolicy>;
  /** Events held while a gap is filled. Default 10 000. */
  readonly bufferLimit?: number;
  readonly maxPayloadBytes?: number;
  readonly userAgent?: string;
  /** Trusted CA and proxy environment. Default: the REST client's. */
  readonly transport?: TransportOptions;
}
