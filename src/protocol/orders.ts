/**
 * Orders, fills, order commands and their results, simulation and request recovery. Requests
 * carry every rule of the interface's OrderRequest table and Limits table; the Practice-only
 * refusals are a separate pure function (`practiceUnsupportedField`), applied after the schema.
 */
import { z } from 'zod';
import { marketRouteFields } from './fields.ts';
import {
  BatchAtomicity,
  ClientOrderId,
  DecimalString,
  JsonObject,
  MarginMode,
  MarketId,
  MutationState,
  type NumberOrDecimal,
  OrderSide,
  OrderStatus,
  OrderType,
  pageOf,
  PositionId,
  Price,
  Quantity,
  QuantityPercent,
  RequestId,
  Rfc3339Utc,
  SlippagePercent,
  TimeInForce,
  TradingMode,
  toDecimalString,
} from './primitives.ts';
import { openEnum, openString } from './reading.ts';

// Enums the interface does not close, with the meaning another value gets in tolerant reading.
const TradingModeReading = openEnum(TradingMode.options as ['live', 'paper'], 'live');
/** Stages the interface names (QUEUED, TERMINAL) and the ones the project emits. */
const ExecutionStageReading = openString([
  'QUEUED',
  'SUBMITTED',
  'WORKING',
  'RECONCILING',
  'TERMINAL',
]);
const SideReading = openString(['buy', 'sell']);
/** Batch atomicity that is not known reads as the weaker promise. */
const BatchAtomicityReading = openEnum(
  BatchAtomicity.options as ['non_atomic', 'native_market_atomic'],
  'non_atomic',
);
/** A request state the project does not know reads as still pending: ask again later. */
const MutationStateReading = openEnum(MutationState.options as ['PENDING', 'COMPLETED'], 'PENDING');

export const Order = z.strictObject({
  trading_mode: TradingModeReading.default('live'),
  execution_account_id: z.string().nullable().default(null),
  request_id: z.string().nullable(),
  order_id: z.string(),
  client_order_id: z.string().nullable(),
  ...marketRouteFields,
  side: SideReading.nullable(),
  type: z.string().nullable(),
  quantity: DecimalString.nullable(),
  price: DecimalString.nullable(),
  trigger_price: DecimalString.nullable(),
  time_in_force: z.string().nullable(),
  post_only: z.boolean(),
  reduce_only: z.boolean(),
  status: OrderStatus,
  execution_stage: ExecutionStageReading,
  received_at: Rfc3339Utc.nullable(),
  updated_at: Rfc3339Utc.nullable(),
  filled_quantity: DecimalString,
  average_fill_price: DecimalString.nullable(),
  last_event_sequence: z.int().nullable(),
  provenance: JsonObject.nullable().default(null),
  error: JsonObject.nullable().default(null),
});
export type Order = z.infer<typeof Order>;

export const OrderPage = pageOf(Order);
export type OrderPage = z.infer<typeof OrderPage>;

export const Fill = z.strictObject({
  fill_id: z.string(),
  ...marketRouteFields,
  side: SideReading,
  quantity: DecimalString,
  price: DecimalString,
  fee: DecimalString,
  notional: DecimalString,
  order_id: z.string().nullable(),
  is_maker: z.boolean(),
  occurred_at: Rfc3339Utc,
});
export type Fill = z.infer<typeof Fill>;

export const FillPage = pageOf(Fill);
export type FillPage = z.infer<typeof FillPage>;

export const CommandError = z.strictObject({
  code: z.string(),
  message: z.string(),
  retryable: z.boolean().default(false),
  details: JsonObject.optional(),
});
export type CommandError = z.infer<typeof CommandError>;

export const FailedOrderCommand = z.strictObject({
  error: CommandError,
  request_id: z.string().nullable().default(null),
  client_order_id: z.string().nullable().default(null),
  order_id: z.string().nullable().default(null),
});
export type FailedOrderCommand = z.infer<typeof FailedOrderCommand>;

/** One item of batch and cancel-all results. Both members are strict, so at most one matches. */
export const OrderCommandResult = z.union([Order, FailedOrderCommand]);
export type OrderCommandResult = z.infer<typeof OrderCommandResult>;

export function isFailedOrderCommand(result: OrderCommandResult): result is FailedOrderCommand {
  return !('status' in result);
}

const Leverage = z.int().min(1).max(200);

const orderRequestShape = {
  request_id: RequestId,
  client_order_id: ClientOrderId,
  market_id: MarketId,
  side: OrderSide,
  type: OrderType,
  quantity: Quantity,
  leverage: Leverage,
  price: Price.nullable().optional(),
  trigger_price: Price.nullable().optional(),
  time_in_force: TimeInForce.default('GTC'),
  post_only: z.boolean().default(false),
  reduce_only: z.boolean().default(false),
  position_id: PositionId.nullable().optional(),
  margin_mode: MarginMode.default('isolated'),
  max_slippage_percent: SlippagePercent.nullable().optional(),
  expires_at: Rfc3339Utc.nullable().optional(),
};

function isPresent<T>(value: T | null | undefined): value is T {
  return value !== undefined && value !== null;
}

// Cross-field rules read field values, so they wait until every field is valid; an unknown
// field does not stop them, so a caller learns of both at once.
const onlyWhenFieldsAreValid = {
  when: (payload: z.core.ParsePayload): boolean =>
    payload.issues.every((issue) => issue.code === 'unrecognized_keys'),
};

/**
 * The body of POST /v1/orders, /v1/orders/simulate and of each batch item. Cross-field rules
 * (they run once every field is valid, like the service's model validators):
 * - `price` is required for `limit` and `stop_limit`, and must be absent or null for `market`
 *   and `stop_market`;
 * - `max_slippage_percent` is required for `market`, and must be absent or null for `limit` and
 *   `stop_limit` (it bounds the execution of a market order only);
 * - `post_only: true` needs `type: limit` with `time_in_force: GTC`.
 */
export const OrderRequest = z.strictObject(orderRequestShape).superRefine((order, context) => {
  const limitPriced = order.type === 'limit' || order.type === 'stop_limit';
  const hasPrice = isPresent(order.price);
  if (limitPriced && !hasPrice) {
    context.addIssue({
      code: 'custom',
      path: ['price'],
      message: `Field required for ${order.type} orders`,
      params: { type: 'missing' },
    });
  } else if (!limitPriced && hasPrice) {
    context.addIssue({
      code: 'custom',
      path: ['price'],
      message: `price must be absent or null for ${order.type} orders`,
      params: { type: 'value_error' },
    });
  }
  const hasSlippage = isPresent(order.max_slippage_percent);
  if (order.type === 'market' && !hasSlippage) {
    context.addIssue({
      code: 'custom',
      path: ['max_slippage_percent'],
      message: 'Field required for market orders',
      params: { type: 'missing' },
    });
  } else if (limitPriced && hasSlippage) {
    context.addIssue({
      code: 'custom',
      path: ['max_slippage_percent'],
      message: `max_slippage_percent must be absent or null for ${order.type} orders`,
      params: { type: 'value_error' },
    });
  }
  if (order.post_only && !(order.type === 'limit' && order.time_in_force === 'GTC')) {
    context.addIssue({
      code: 'custom',
      path: ['post_only'],
      message: 'post_only is valid only for GTC limit orders',
      params: { type: 'value_error' },
    });
  }
}, onlyWhenFieldsAreValid);
export type OrderRequest = z.output<typeof OrderRequest>;
export type OrderRequestInput = z.input<typeof OrderRequest>;

export const AmendOrderRequest = z.strictObject({
  request_id: RequestId,
  quantity: Quantity.nullable().optional(),
  price: Price.nullable().optional(),
  trigger_price: Price.nullable().optional(),
  expires_at: Rfc3339Utc.nullable().optional(),
});
export type AmendOrderRequest = z.output<typeof AmendOrderRequest>;
export type AmendOrderRequestInput = z.input<typeof AmendOrderRequest>;

export const CancelOrderRequest = z.strictObject({ request_id: RequestId });
export type CancelOrderRequest = z.output<typeof CancelOrderRequest>;

export const CancelAllRequest = z.strictObject({
  request_id: RequestId,
  market_id: MarketId.nullable().optional(),
});
export type CancelAllRequest = z.output<typeof CancelAllRequest>;
export type CancelAllRequestInput = z.input<typeof CancelAllRequest>;

export const CancelAllResponse = z.strictObject({
  request_id: z.string(),
  results: z.array(OrderCommandResult),
});
export type CancelAllResponse = z.infer<typeof CancelAllResponse>;

export const ClosePositionRequest = z.strictObject({
  request_id: RequestId,
  client_order_id: ClientOrderId,
  quantity_percent: QuantityPercent.default('100'),
  max_slippage_percent: SlippagePercent.default('0.5'),
});
export type ClosePositionRequest = z.output<typeof ClosePositionRequest>;
export type ClosePositionRequestInput = z.input<typeof ClosePositionRequest>;

export const BatchOrderRequest = z.strictObject({
  request_id: RequestId,
  orders: z.array(OrderRequest).min(1).max(20),
});
export type BatchOrderRequest = z.output<typeof BatchOrderRequest>;
export type BatchOrderRequestInput = z.input<typeof BatchOrderRequest>;

export const BatchOrderResponse = z.strictObject({
  request_id: z.string(),
  atomicity: BatchAtomicityReading,
  results: z.array(OrderCommandResult),
});
export type BatchOrderResponse = z.infer<typeof BatchOrderResponse>;

export const CancelAllAfterRequest = z.strictObject({
  request_id: RequestId,
  timeout_seconds: z.int().min(0).max(86_400),
});
export type CancelAllAfterRequest = z.output<typeof CancelAllAfterRequest>;

export const CancelAllAfterResponse = z.strictObject({
  request_id: z.string(),
  deadline_at: Rfc3339Utc.nullable(),
});
export type CancelAllAfterResponse = z.infer<typeof CancelAllAfterResponse>;

/** `issues` items are objects whose fields the interface does not show. */
export const SimulationResult = z.strictObject({
  ...marketRouteFields,
  decision: openString(['READY', 'REJECTED']),
  required_margin: DecimalString,
  reference_price: DecimalString,
  maximum_quantity: DecimalString.nullable().default(null),
  issues: z.array(JsonObject),
  evaluated_at: Rfc3339Utc,
  expires_at: Rfc3339Utc,
});
export type SimulationResult = z.infer<typeof SimulationResult>;

/** The decisions the project emits; READY is the interface's, REJECTED is ours. */
export const SimulationDecision = z.enum(['READY', 'REJECTED']);
export type SimulationDecision = z.infer<typeof SimulationDecision>;

/** The simulation issue items the project emits. */
export const SimulationIssue = z.strictObject({
  code: z.string(),
  message: z.string(),
  field: z.string().nullable(),
});
export type SimulationIssue = z.infer<typeof SimulationIssue>;

export const MutationStatus = z.strictObject({
  request_id: z.string(),
  command_type: z.string(),
  state: MutationStateReading,
  result: JsonObject.nullable().default(null),
  created_at: Rfc3339Utc,
  updated_at: Rfc3339Utc,
  completed_at: Rfc3339Utc.nullable().default(null),
});
export type MutationStatus = z.infer<typeof MutationStatus>;

/** The `command_type` values the project records; `order.open` is the interface's. */
export const CommandType = z.enum([
  'order.open',
  'order.amend',
  'order.cancel',
  'order.cancel_all',
  'order.batch',
  'position.close',
  'cancel_all_after.set',
]);
export type CommandType = z.infer<typeof CommandType>;

export const PracticeUnsupportedField = z.enum([
  'type',
  'trigger_price',
  'time_in_force',
  'expires_at',
]);
export type PracticeUnsupportedField = z.infer<typeof PracticeUnsupportedField>;

/**
 * The first field of an order or amend body that Practice refuses (422 UNSUPPORTED_ORDER with
 * `details.field`), or null. Stop types, `FOK`, and any presence of `trigger_price` or
 * `expires_at`, null included (contract section 6). Fields are checked in the order of the
 * interface's OrderRequest table. A property holding `undefined` counts as absent, since it
 * never reaches the wire.
 */
export function practiceUnsupportedField(body: unknown): PracticeUnsupportedField | null {
  if (typeof body !== 'object' || body === null) return null;
  const fields = body as {
    readonly type?: unknown;
    readonly trigger_price?: unknown;
    readonly time_in_force?: unknown;
    readonly expires_at?: unknown;
  };
  if (fields.type === 'stop_market' || fields.type === 'stop_limit') return 'type';
  if (fields.trigger_price !== undefined) return 'trigger_price';
  if (fields.time_in_force === 'FOK') return 'time_in_force';
  if (fields.expires_at !== undefined) return 'expires_at';
  return null;
}

const practiceUnsupportedMessages: Readonly<Record<PracticeUnsupportedField, string>> = {
  type: 'Practice supports only market and limit orders',
  trigger_price: 'Practice does not support trigger_price (conditional orders)',
  time_in_force: 'Practice supports only GTC and IOC time in force',
  expires_at: 'Practice does not support expires_at',
};

export interface PracticeUnsupportedError {
  readonly code: 'UNSUPPORTED_ORDER';
  readonly message: string;
  readonly retryable: false;
  readonly details: { readonly field: PracticeUnsupportedField };
}

/** The error both sides report for a Practice refusal (a CommandError; add request_id for HTTP). */
export function practiceUnsupportedError(
  field: PracticeUnsupportedField,
): PracticeUnsupportedError {
  return {
    code: 'UNSUPPORTED_ORDER',
    message: practiceUnsupportedMessages[field],
    retryable: false,
    details: { field },
  };
}

function decimalOrNull(value: NumberOrDecimal | null): string | null {
  return value === null ? null : toDecimalString(value);
}

export type WireOrderRequest = Omit<
  OrderRequest,
  'quantity' | 'price' | 'trigger_price' | 'max_slippage_percent'
> & {
  quantity: string;
  price?: string | null;
  trigger_price?: string | null;
  max_slippage_percent?: string | null;
};

/**
 * The body as it goes on the wire: every number-or-decimal field as a canonical decimal string
 * (see `toDecimalString`). Absent fields stay absent. Takes the parsed request.
 */
export function normalizeOrderRequest(order: OrderRequest): WireOrderRequest {
  // Assigning over a spread keeps the caller's key order in the serialized body.
  const wire = { ...order } as unknown as WireOrderRequest;
  wire.quantity = toDecimalString(order.quantity);
  if (order.price !== undefined) wire.price = decimalOrNull(order.price);
  if (order.trigger_price !== undefined) wire.trigger_price = decimalOrNull(order.trigger_price);
  if (order.max_slippage_percent !== undefined) {
    wire.max_slippage_percent = decimalOrNull(order.max_slippage_percent);
  }
  return wire;
}

export type WireAmendOrderRequest = Omit<
  AmendOrderRequest,
  'quantity' | 'price' | 'trigger_price'
> & {
  quantity?: string | null;
  price?: string | null;
  trigger_price?: string | null;
};

export function normalizeAmendOrderRequest(amend: AmendOrderRequest): WireAmendOrderRequest {
  const wire = { ...amend } as unknown as WireAmendOrderRequest;
  if (amend.quantity !== undefined) wire.quantity = decimalOrNull(amend.quantity);
  if (amend.price !== undefined) wire.price = decimalOrNull(amend.price);
  if (amend.trigger_price !== undefined) wire.trigger_price = decimalOrNull(amend.trigger_price);
  return wire;
}

export type WireClosePositionRequest = Omit<
  ClosePositionRequest,
  'quantity_percent' | 'max_slippage_percent'
> & {
  quantity_percent: string;
  max_slippage_percent: string;
};

export function normalizeClosePositionRequest(
  close: ClosePositionRequest,
): WireClosePositionRequest {
  return {
    ...close,
    quantity_percent: toDecimalString(close.quantity_percent),
    max_slippage_percent: toDecimalString(close.max_slippage_percent),
  };
}

export type WireBatchOrderRequest = Omit<BatchOrderRequest, 'orders'> & {
  orders: WireOrderRequest[];
};

export function normalizeBatchOrderRequest(batch: BatchOrderRequest): WireBatchOrderRequest {
  return { ...batch, orders: batch.orders.map(normalizeOrderRequest) };
}
