/**
 * WebSocket frames (GET /v1/ws) and the private events, which GET /v1/events pages through
 * unchanged. Every server frame carries `version: 1` and `type`; every client frame `op` and
 * `request_id`. The private sequence is one counter per account across all private channels.
 */
import { z } from 'zod';
import { Account, Position } from './account.ts';
import { FrameErrorBody } from './errors.ts';
import { MarketDataStatusReading } from './market.ts';
import { Fill } from './orders.ts';
import {
  DecimalString,
  IDENTIFIER_PATTERN,
  MarketId,
  OrderStatus,
  Rfc3339Utc,
  Scope,
} from './primitives.ts';
import {
  describeIssues,
  type Drift,
  nameShape,
  openString,
  type ReadingMode,
  readWire,
  registerDynamicSchema,
  skippedItemsOf,
  tolerantSchema,
} from './reading.ts';

export const WIRE_VERSION = 1;
export const WireVersion = z.literal(WIRE_VERSION);

export const WEBSOCKET_PATH = '/v1/ws';

/** Contract section 4: a heartbeat every 10 s unless configured otherwise. */
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 10_000;

export const PrivateChannel = z.enum(['account', 'positions', 'risk', 'orders', 'fills']);
export type PrivateChannel = z.infer<typeof PrivateChannel>;

/** `market:<market_id>:ticker`, the market id 3..40 characters like everywhere else. */
export const PublicChannel = z.templateLiteral(['market:', MarketId, ':ticker']);
export type PublicChannel = z.infer<typeof PublicChannel>;

export type Channel = PrivateChannel | PublicChannel;

export function isPrivateChannel(value: unknown): value is PrivateChannel {
  return PrivateChannel.safeParse(value).success;
}

export function isPublicChannel(value: unknown): value is PublicChannel {
  return PublicChannel.safeParse(value).success;
}

export function isChannel(value: unknown): value is Channel {
  return isPrivateChannel(value) || isPublicChannel(value);
}

/** One check with one issue, rather than a union's nested report. */
export const Channel = z.custom<Channel>(isChannel, {
  error:
    'Input should be a channel: account, positions, risk, orders, fills or market:<market_id>:ticker',
  params: { type: 'channel' },
});

export function tickerChannel(marketId: string): PublicChannel {
  return `market:${marketId}:ticker`;
}

const TICKER_PREFIX_LENGTH = 'market:'.length;
const TICKER_SUFFIX_LENGTH = ':ticker'.length;

export function marketIdOfChannel(channel: PublicChannel): string {
  return channel.slice(TICKER_PREFIX_LENGTH, channel.length - TICKER_SUFFIX_LENGTH);
}

/** Contract section 3: the scope each private channel needs. */
export const channelScope: Readonly<Record<PrivateChannel, Scope>> = {
  account: 'account:read',
  positions: 'account:read',
  risk: 'account:read',
  orders: 'orders:read',
  fills: 'fills:read',
};

/** A client-chosen frame id: 1..80 characters of the request_id character set. */
export const FrameRequestId = z.string().min(1).max(80).regex(IDENTIFIER_PATTERN);
export type FrameRequestId = z.infer<typeof FrameRequestId>;

/**
 * Contract section 4. `timestamp` is epoch milliseconds as decimal text, like SVC-TIMESTAMP.
 * The credential fields are only typed here: their format is checked by the authenticator,
 * which answers INVALID_SIGNATURE rather than INVALID_REQUEST, as for the HTTP headers.
 */
export const AuthFrame = z.strictObject({
  op: z.literal('auth'),
  request_id: FrameRequestId,
  key_id: z.string(),
  timestamp: z.string(),
  nonce: z.string(),
  scopes: z.array(Scope),
  last_sequence: z.int().min(0),
  signature: z.string(),
});
export type AuthFrame = z.infer<typeof AuthFrame>;

/** Subscribe and unsubscribe differ only in `op`. */
function channelsRequest<const Op extends string>(op: Op) {
  return z.strictObject({
    op: z.literal(op),
    request_id: FrameRequestId,
    channels: z.array(Channel).min(1),
  });
}

export const SubscribeFrame = channelsRequest('subscribe');
export type SubscribeFrame = z.infer<typeof SubscribeFrame>;

export const UnsubscribeFrame = channelsRequest('unsubscribe');
export type UnsubscribeFrame = z.infer<typeof UnsubscribeFrame>;

export const PingFrame = z.strictObject({
  op: z.literal('ping'),
  request_id: FrameRequestId,
});
export type PingFrame = z.infer<typeof PingFrame>;

export const ClientFrame = z.discriminatedUnion('op', [
  AuthFrame,
  SubscribeFrame,
  UnsubscribeFrame,
  PingFrame,
]);
export type ClientFrame = z.infer<typeof ClientFrame>;

/** The fields of a control frame: `version` (as sent or as read), `type`, then its own. */
function controlFrameFields<
  Version extends z.ZodType,
  const Type extends string,
  Shape extends z.ZodRawShape,
>(version: Version, type: Type, shape: Shape) {
  return { version, type: z.literal(type), ...shape };
}

/** A control frame as sent: exactly its fields. */
const serverFrame = <const Type extends string, Shape extends z.ZodRawShape>(
  type: Type,
  shape: Shape,
) => z.strictObject(controlFrameFields(WireVersion, type, shape));

export const ChallengeFrame = serverFrame('challenge', {
  challenge: z.string().min(1),
  expires_at_ms: z.int(),
});
export type ChallengeFrame = z.infer<typeof ChallengeFrame>;

/** `sequence`: the account's highest private sequence at authentication (0 before any event). */
export const AuthenticatedFrame = serverFrame('authenticated', {
  request_id: z.string(),
  key_id: z.string(),
  scopes: z.array(Scope),
  sequence: z.int().min(0),
});
export type AuthenticatedFrame = z.infer<typeof AuthenticatedFrame>;

/** The confirmations of subscribe and unsubscribe differ only in `type`. */
function channelsConfirmation<const Type extends string>(type: Type) {
  return serverFrame(type, { request_id: z.string(), channels: z.array(Channel) });
}

export const SubscribedFrame = channelsConfirmation('subscribed');
export type SubscribedFrame = z.infer<typeof SubscribedFrame>;

export const UnsubscribedFrame = channelsConfirmation('unsubscribed');
export type UnsubscribedFrame = z.infer<typeof UnsubscribedFrame>;

export const PongFrame = serverFrame('pong', { request_id: z.string() });
export type PongFrame = z.infer<typeof PongFrame>;

/** `sequence` is null before authentication. */
export const HeartbeatFrame = serverFrame('heartbeat', {
  occurred_at: Rfc3339Utc,
  sequence: z.int().min(0).nullable(),
});
export type HeartbeatFrame = z.infer<typeof HeartbeatFrame>;

/** `request_id` is that of the client frame that failed, or null when none applies. */
export const ErrorFrame = serverFrame('error', {
  request_id: z.string().nullable(),
  error: FrameErrorBody,
});
export type ErrorFrame = z.infer<typeof ErrorFrame>;

export const TickerData = z.strictObject({
  market_id: z.string(),
  mark_price: DecimalString.nullable(),
  index_price: DecimalString.nullable(),
  last_price: DecimalString.nullable(),
  data_status: MarketDataStatusReading,
});
export type TickerData = z.infer<typeof TickerData>;

/** The ticker snapshot and update differ only in `type`. */
function tickerFrame<const Type extends string>(type: Type) {
  return z.strictObject({
    version: WireVersion,
    channel: PublicChannel,
    type: z.literal(type),
    occurred_at: Rfc3339Utc,
    data: TickerData,
  });
}

export const TickerSnapshotFrame = tickerFrame('ticker.snapshot');
export type TickerSnapshotFrame = z.infer<typeof TickerSnapshotFrame>;

export const TickerUpdateFrame = tickerFrame('ticker.update');
export type TickerUpdateFrame = z.infer<typeof TickerUpdateFrame>;

/** The fields every private event carries before its channel, type and data. */
const privateEnvelope = {
  version: WireVersion,
  sequence: z.int().min(1),
  event_id: z.uuid(),
  occurred_at: Rfc3339Utc,
};

/** Every private event as sent: exactly the shared envelope, then its channel, type and data. */
function privateEvent<
  const Channel extends PrivateChannel,
  const Type extends string,
  Data extends z.ZodType,
>(channel: Channel, type: Type, data: Data) {
  return z.strictObject({
    ...privateEnvelope,
    channel: z.literal(channel),
    type: z.literal(type),
    data,
  });
}

/** Exactly the four fields of the interface; `from_state` is null when the order is created. */
export const OrderStatusEventData = z.strictObject({
  entity_type: z.string(),
  entity_id: z.string(),
  from_state: OrderStatus.nullable(),
  to_state: OrderStatus,
});
export type OrderStatusEventData = z.infer<typeof OrderStatusEventData>;

export const OrderStatusEvent = privateEvent(
  'orders',
  'authoritative_status',
  OrderStatusEventData,
);
export type OrderStatusEvent = z.infer<typeof OrderStatusEvent>;

export const FillEvent = privateEvent('fills', 'fill', Fill);
export type FillEvent = z.infer<typeof FillEvent>;

/** A position that closes is sent once more with quantity '0'. */
export const PositionEvent = privateEvent('positions', 'position', Position);
export type PositionEvent = z.infer<typeof PositionEvent>;

export const AccountEvent = privateEvent('account', 'account', Account);
export type AccountEvent = z.infer<typeof AccountEvent>;

export const CancelAllAfterTriggeredData = z.strictObject({
  deadline_at: Rfc3339Utc,
  triggered_at: Rfc3339Utc,
  cancelled_order_ids: z.array(z.string()),
});
export type CancelAllAfterTriggeredData = z.infer<typeof CancelAllAfterTriggeredData>;

export const CancelAllAfterTriggeredEvent = privateEvent(
  'risk',
  'cancel_all_after.triggered',
  CancelAllAfterTriggeredData,
);
export type CancelAllAfterTriggeredEvent = z.infer<typeof CancelAllAfterTriggeredEvent>;

export const LiquidationData = z.strictObject({
  position_id: z.string(),
  market_id: z.string(),
  price: DecimalString,
  quantity: DecimalString,
});
export type LiquidationData = z.infer<typeof LiquidationData>;

export const LiquidationEvent = privateEvent('risk', 'liquidation', LiquidationData);
export type LiquidationEvent = z.infer<typeof LiquidationEvent>;

/**
 * paperbot's emulator: one open position paid or charged at a funding time. `amount` is what
 * the account received (negative: paid): −direction × position value at the mark × rate, so a
 * long pays when the rate is positive. `position_funding_total` sums the position's amounts.
 */
export const FundingPaymentData = z.strictObject({
  market_id: z.string(),
  position_id: z.string(),
  side: z.string(),
  quantity: DecimalString,
  mark_price: DecimalString,
  position_value: DecimalString,
  funding_rate: DecimalString,
  funding_time: Rfc3339Utc,
  amount: DecimalString,
  position_funding_total: DecimalString,
});
export type FundingPaymentData = z.infer<typeof FundingPaymentData>;

export const FundingPaymentEvent = privateEvent('account', 'funding_payment', FundingPaymentData);
export type FundingPaymentEvent = z.infer<typeof FundingPaymentEvent>;

export const PrivateEvent = z.discriminatedUnion('type', [
  OrderStatusEvent,
  FillEvent,
  PositionEvent,
  AccountEvent,
  CancelAllAfterTriggeredEvent,
  LiquidationEvent,
  FundingPaymentEvent,
]);
export type PrivateEvent = z.infer<typeof PrivateEvent>;
export type PrivateEventType = PrivateEvent['type'];

/** The channel each private event type travels on. */
export const privateEventChannel: Readonly<Record<PrivateEventType, PrivateChannel>> = {
  authoritative_status: 'orders',
  fill: 'fills',
  position: 'positions',
  account: 'account',
  'cancel_all_after.triggered': 'risk',
  liquidation: 'risk',
  funding_payment: 'account',
};

export const ServerFrame = z.discriminatedUnion('type', [
  ChallengeFrame,
  AuthenticatedFrame,
  SubscribedFrame,
  UnsubscribedFrame,
  PongFrame,
  HeartbeatFrame,
  ErrorFrame,
  TickerSnapshotFrame,
  TickerUpdateFrame,
  OrderStatusEvent,
  FillEvent,
  PositionEvent,
  AccountEvent,
  CancelAllAfterTriggeredEvent,
  LiquidationEvent,
  FundingPaymentEvent,
]);
export type ServerFrame = z.infer<typeof ServerFrame>;

/**
 * GET /v1/events. `next_after_sequence` is the `after_sequence` of the next page: the highest
 * sequence this page covers (events the key's scopes hide included), or the request's
 * `after_sequence` when nothing newer exists.
 */
export const EventsPage = z.strictObject({
  data: z.array(PrivateEvent),
  has_more: z.boolean(),
  next_after_sequence: z.int().min(0),
});
export type EventsPage = z.infer<typeof EventsPage>;

// ---------------------------------------------------------------------------------------------
// What a client reads (contract section 7). The schemas above are what the emulator sends. The
// interface does not show the confirmation, `authenticated`, `pong`, heartbeat and error frames,
// nor event types and payloads beyond the order event: a client reads the fields it uses from
// them, keeps the rest, and passes unknown frame and event types on instead of refusing them.

const FrameRequestIdReading = z.string().nullable().optional();
// The fields contract.md section 4 gives these frames are known (not reported as news); the
// client does not need them, so none is required.
const knownField = z.unknown().optional();

/** A control frame as read: `version` known, `type` checked, its fields, further fields kept. */
const controlFrameReading = <const Type extends string, Shape extends z.ZodRawShape>(
  type: Type,
  shape: Shape,
) => z.looseObject(controlFrameFields(knownField, type, shape));

export const ChallengeReading = controlFrameReading('challenge', {
  challenge: z.string().min(1),
  expires_at_ms: knownField,
});
export type ChallengeReading = z.infer<typeof ChallengeReading>;

/** `sequence` may be missing: then the stream learns the head from a heartbeat or the log. */
export const AuthenticatedReading = controlFrameReading('authenticated', {
  request_id: FrameRequestIdReading,
  key_id: knownField,
  scopes: knownField,
  sequence: z.int().min(0).nullable().optional(),
});
export type AuthenticatedReading = z.infer<typeof AuthenticatedReading>;

/** The confirmations and the pong as read: the type and the request id they answer. */
function confirmationReading<const Type extends string>(type: Type) {
  return controlFrameReading(type, { request_id: FrameRequestIdReading, channels: knownField });
}

export const SubscribedReading = confirmationReading('subscribed');
export type SubscribedReading = z.infer<typeof SubscribedReading>;

export const UnsubscribedReading = confirmationReading('unsubscribed');
export type UnsubscribedReading = z.infer<typeof UnsubscribedReading>;

export const PongReading = confirmationReading('pong');
export type PongReading = z.infer<typeof PongReading>;

/** `sequence` may be missing or null: the heartbeat then only proves the connection alive. */
export const HeartbeatReading = controlFrameReading('heartbeat', {
  occurred_at: knownField,
  sequence: z.int().min(0).nullable().optional(),
});
export type HeartbeatReading = z.infer<typeof HeartbeatReading>;

export const FrameErrorReading = z.looseObject({
  code: z.string(),
  message: z.string(),
  retryable: z.boolean().default(false),
  details: z.record(z.string(), z.unknown()).default({}),
});
export type FrameErrorReading = z.infer<typeof FrameErrorReading>;

export const ErrorFrameReading = controlFrameReading('error', {
  request_id: FrameRequestIdReading,
  error: FrameErrorReading,
});
export type ErrorFrameReading = z.infer<typeof ErrorFrameReading>;

export function isKnownPrivateEventType(type: unknown): type is PrivateEventType {
  return typeof type === 'string' && Object.hasOwn(privateEventChannel, type);
}

/**
 * A private event of a type the project does not know. It carries the shared sequence, so the
 * stream counts it (no false gap) and passes it on; its payload is kept as sent.
 */
export const OtherPrivateEvent = z.looseObject({
  channel: z.string(),
  type: z.string().refine((type) => !isKnownPrivateEventType(type), {
    error: 'a known event type must match its schema',
  }),
  sequence: z.int().min(1),
  event_id: z.string().min(1),
});
export type OtherPrivateEvent = z.infer<typeof OtherPrivateEvent>;

/**
 * A known private event other than the order event, as read: the envelope as the emulator sends
 * it, with further envelope fields kept; `data` checked field by field with further fields kept.
 */
function privateEventReading<
  const Channel extends PrivateChannel,
  const Type extends string,
  Shape extends z.ZodRawShape,
>(channel: Channel, type: Type, data: Shape) {
  return z.looseObject(privateEvent(channel, type, z.looseObject(data)).shape);
}

// The payloads keep every field of their strict shape: the client hands them on under those
// types (a fill as the `Fill` of the tracker, journal and strategy API; every event to the live
// recorder as a `PrivateEvent`; risk events to the dead-man), so no field may go missing. The
// runtime itself reads fill_id, order_id, market_id, side, quantity, price, fee, is_maker and
// occurred_at of a fill, deadline_at and triggered_at of a cancel_all_after trigger, and no
// field of the position, account and liquidation payloads.

export const FillEventReading = privateEventReading('fills', 'fill', Fill.shape);
export type FillEventReading = z.infer<typeof FillEventReading>;

export const PositionEventReading = privateEventReading('positions', 'position', Position.shape);
export type PositionEventReading = z.infer<typeof PositionEventReading>;

export const AccountEventReading = privateEventReading('account', 'account', Account.shape);
export type AccountEventReading = z.infer<typeof AccountEventReading>;

export const CancelAllAfterTriggeredEventReading = privateEventReading(
  'risk',
  'cancel_all_after.triggered',
  CancelAllAfterTriggeredData.shape,
);
export type CancelAllAfterTriggeredEventReading = z.infer<
  typeof CancelAllAfterTriggeredEventReading
>;

export const LiquidationEventReading = privateEventReading(
  'risk',
  'liquidation',
  LiquidationData.shape,
);
export type LiquidationEventReading = z.infer<typeof LiquidationEventReading>;

export const FundingPaymentEventReading = privateEventReading(
  'account',
  'funding_payment',
  FundingPaymentData.shape,
);
export type FundingPaymentEventReading = z.infer<typeof FundingPaymentEventReading>;

/** A known private event as read: the order event exactly as the interface shows it. */
export const KnownPrivateEventReading = z.discriminatedUnion('type', [
  OrderStatusEvent,
  FillEventReading,
  PositionEventReading,
  AccountEventReading,
  CancelAllAfterTriggeredEventReading,
  LiquidationEventReading,
  FundingPaymentEventReading,
]);
export type KnownPrivateEventReading = z.infer<typeof KnownPrivateEventReading>;

/** Which schema reads a private event: its known type's, else `OtherPrivateEvent`. */
function privateEventSchemaOf(value: unknown, known: z.ZodType): z.ZodType {
  const type = typeof value === 'object' && value !== null ? Reflect.get(value, 'type') : null;
  return isKnownPrivateEventType(type) ? known : OtherPrivateEvent;
}

function privateEventReadingWith(known: z.ZodType) {
  return z.unknown().transform((value, context): KnownPrivateEventReading | OtherPrivateEvent => {
    const parsed = privateEventSchemaOf(value, known).safeParse(value);
    if (parsed.success) return parsed.data as KnownPrivateEventReading | OtherPrivateEvent;
    // The inner issues as they are (paths below the event's), so the report names the field.
    for (const issue of parsed.error.issues) {
      context.issues.push({ ...issue, input: value } as z.core.$ZodRawIssue);
    }
    return z.NEVER;
  });
}

/**
 * An item of GET /v1/events or a private frame as read: a known event, or another one. Chosen by
 * `type` rather than as a union, so a known event that breaks its schema is reported by the
 * field that breaks it.
 */
export const PrivateEventReading = privateEventReadingWith(KnownPrivateEventReading);
export type PrivateEventReading = z.infer<typeof PrivateEventReading>;

/** How the drift report sees an event of a type the project does not know: the type is news. */
const UnknownTypePrivateEvent = nameShape(
  'PrivateEvent',
  z.looseObject({
    version: z.unknown(),
    channel: z.unknown(),
    type: openString(Object.keys(privateEventChannel)),
    sequence: z.unknown(),
    event_id: z.unknown(),
    occurred_at: z.unknown(),
    data: z.unknown(),
  }),
);

registerDynamicSchema(
  PrivateEventReading,
  privateEventReadingWith(tolerantSchema(KnownPrivateEventReading)),
  (value) => {
    const schema = privateEventSchemaOf(value, KnownPrivateEventReading);
    return schema === OtherPrivateEvent ? UnknownTypePrivateEvent : schema;
  },
);

/**
 * A private event that carries a readable sequence but breaks its schema (tolerant reading): it
 * still counts in the sequence, and the runtime resolves what it may have said by reading back
 * (the order by `entity_id`, the fills over REST), so nothing is lost and nothing counted twice.
 */
export interface UnreadablePrivateEvent {
  readonly unreadable: true;
  readonly sequence: number;
  readonly event_id: string;
  readonly channel: string | null;
  readonly type: string | null;
  /** `data.entity_id` of an order event, when it is a string. */
  readonly entityId: string | null;
  /** The broken paths and why (`body.data[3].data.to_state: required`). */
  readonly problem: string;
}

/** The unreadable event for an item that breaks its schema, or null without a sequence. */
export function unreadablePrivateEvent(
  raw: unknown,
  problem: string,
): UnreadablePrivateEvent | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const fields = raw as Record<string, unknown>;
  const sequence = fields.sequence;
  if (typeof sequence !== 'number' || !Number.isSafeInteger(sequence) || sequence < 1) return null;
  const data = fields.data;
  const entityId =
    typeof data === 'object' && data !== null ? (data as Record<string, unknown>).entity_id : null;
  return Object.freeze({
    unreadable: true,
    sequence,
    event_id: typeof fields.event_id === 'string' ? fields.event_id : `unreadable-${sequence}`,
    channel: typeof fields.channel === 'string' ? fields.channel : null,
    type: typeof fields.type === 'string' ? fields.type : null,
    entityId: typeof entityId === 'string' ? entityId : null,
    problem,
  });
}

export function isUnreadablePrivateEvent(value: unknown): value is UnreadablePrivateEvent {
  return typeof value === 'object' && value !== null && Reflect.get(value, 'unreadable') === true;
}

export function isKnownPrivateEvent(event: PrivateEventReading): event is KnownPrivateEventReading {
  return isKnownPrivateEventType(event.type);
}

/**
 * GET /v1/events as read: `data` and `has_more` are the interface's; `next_after_sequence` may
 * be missing (`nextAfterSequence` derives it); further fields are kept.
 */
export const EventsPageReading = z.looseObject({
  data: z.array(PrivateEventReading),
  has_more: z.boolean(),
  next_after_sequence: z.int().min(0).optional(),
});
export type EventsPageReading = z.infer<typeof EventsPageReading>;

/**
 * The `after_sequence` of the page after `page`: its `next_after_sequence` when sent, else the
 * highest sequence among its events, else the `after_sequence` it was read with.
 */
export function nextAfterSequence(page: EventsPageReading, afterSequence: number): number {
  if (page.next_after_sequence !== undefined) return page.next_after_sequence;
  let highest = afterSequence;
  for (const event of page.data) highest = Math.max(highest, event.sequence);
  // Events a tolerant read left out of the page were read too.
  for (const item of skippedItemsOf(page)) {
    const sequence = unreadablePrivateEvent(item.raw, '')?.sequence;
    if (sequence !== undefined) highest = Math.max(highest, sequence);
  }
  return highest;
}

/** A server frame as read (`readServerFrame`). */
export type ServerFrameReading =
  | { readonly kind: 'challenge'; readonly frame: ChallengeReading }
  | { readonly kind: 'authenticated'; readonly frame: AuthenticatedReading }
  | { readonly kind: 'subscribed'; readonly frame: SubscribedReading }
  | { readonly kind: 'unsubscribed'; readonly frame: UnsubscribedReading }
  | { readonly kind: 'pong'; readonly frame: PongReading }
  | { readonly kind: 'heartbeat'; readonly frame: HeartbeatReading }
  | { readonly kind: 'error'; readonly frame: ErrorFrameReading }
  | { readonly kind: 'ticker'; readonly frame: TickerSnapshotFrame | TickerUpdateFrame }
  | { readonly kind: 'event'; readonly frame: PrivateEventReading }
  /** A frame of a type the project does not know and without a private sequence: kept as sent. */
  | { readonly kind: 'other'; readonly frame: Readonly<Record<string, unknown>> }
  /** A known private event that breaks its schema, with a readable sequence (tolerant reading). */
  | { readonly kind: 'unreadable'; readonly frame: UnreadablePrivateEvent }
  | { readonly kind: 'malformed'; readonly problem: string };

const frameReadings = {
  challenge: ChallengeReading,
  authenticated: AuthenticatedReading,
  subscribed: SubscribedReading,
  unsubscribed: UnsubscribedReading,
  pong: PongReading,
  heartbeat: HeartbeatReading,
  error: ErrorFrameReading,
} as const;

type ControlKind = keyof typeof frameReadings;

function isControlKind(type: string): type is ControlKind {
  return Object.hasOwn(frameReadings, type);
}

/**
 * Reads one server frame (already JSON-parsed). Known types are checked: strictly where the
 * interface lists the fields (ticker data, the order event), liberally where it does not (the
 * other private events keep further fields). A frame of an unknown type is an event when it
 * carries a channel, an integer sequence and an event id, and "other" otherwise; neither is
 * refused. Strict reading; `readServerFrameWith` reads in either mode and reports drift.
 */
export function readServerFrame(document: unknown): ServerFrameReading {
  return readServerFrameWith(document, 'strict').reading;
}

/** A server frame read in `mode` (reading.ts), with what its schema does not know. */
export interface ServerFrameRead {
  readonly reading: ServerFrameReading;
  readonly drift: readonly Drift[];
}

const NO_DRIFT: readonly Drift[] = Object.freeze([]);

function frameRead<S extends z.ZodType>(
  schema: S,
  document: unknown,
  mode: ReadingMode,
  what: string,
  read: (value: z.output<S>) => ServerFrameReading,
): ServerFrameRead {
  const result = readWire(schema, document, mode);
  if (!result.ok) {
    return {
      reading: {
        kind: 'malformed',
        problem: `${what}: ${describeIssues(result.issues, document, 'frame')}`,
      },
      drift: result.drift,
    };
  }
  return { reading: read(result.value), drift: result.drift };
}

export function readServerFrameWith(document: unknown, mode: ReadingMode): ServerFrameRead {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    return {
      reading: { kind: 'malformed', problem: 'a frame is not a JSON object' },
      drift: NO_DRIFT,
    };
  }
  const type = (document as { type?: unknown }).type;
  if (typeof type !== 'string') {
    return { reading: { kind: 'malformed', problem: 'a frame has no type' }, drift: NO_DRIFT };
  }
  if (isControlKind(type)) {
    return frameRead(
      frameReadings[type],
      document,
      mode,
      `a ${type} frame`,
      (frame) => ({ kind: type, frame }) as ServerFrameReading,
    );
  }
  if (type === 'ticker.snapshot' || type === 'ticker.update') {
    const schema = type === 'ticker.snapshot' ? TickerSnapshotFrame : TickerUpdateFrame;
    return frameRead(schema, document, mode, `a ${type} frame`, (frame) => ({
      kind: 'ticker',
      frame,
    }));
  }
  if (isKnownPrivateEventType(type)) {
    const read = frameRead(
      KnownPrivateEventReading,
      document,
      mode,
      `a ${type} event`,
      (frame) => ({
        kind: 'event',
        frame,
      }),
    );
    if (mode === 'tolerant' && read.reading.kind === 'malformed') {
      // It still counts in the sequence; the runtime reads back what it said.
      const unreadable = unreadablePrivateEvent(document, read.reading.problem);
      if (unreadable !== null)
        return { reading: { kind: 'unreadable', frame: unreadable }, drift: read.drift };
    }
    return read;
  }
  const other = OtherPrivateEvent.safeParse(document);
  if (other.success) {
    return {
      reading: { kind: 'event', frame: other.data },
      drift: driftOfUnknownType(document),
    };
  }
  return {
    reading: { kind: 'other', frame: document as Readonly<Record<string, unknown>> },
    drift: NO_DRIFT,
  };
}

function driftOfUnknownType(document: unknown): readonly Drift[] {
  return readWire(PrivateEventReading, document, 'tolerant').drift;
}
