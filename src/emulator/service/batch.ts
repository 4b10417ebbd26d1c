/**
 * POST /v1/orders/batch with idempotency per item as well as per batch: each item carries its
 * own request_id, which is a placement's request_id in every other respect. An item whose
 * request_id already placed the same order answers that order again (no second order); one
 * whose request_id was used for different content fails alone with IDEMPOTENCY_CONFLICT; a
 * placed item is recorded under its request_id, so GET /v1/requests/{item request_id} and a
 * later POST /v1/orders with the same id and body both find it.
 */
import {
  type BatchOrderResponse,
  errorRetryable,
  type FailedOrderCommand,
  normalizeOrderRequest,
  type Order,
  type OrderRequest,
} from '../../protocol/index.ts';
import type { Exchange } from '../engine/exchange.ts';
import type { EndpointContext } from './endpoints.ts';
import { fingerprintOf, type IdempotencyLedger } from './idempotency.ts';

type ItemResult = Order | FailedOrderCommand;

function conflict(request: OrderRequest): FailedOrderCommand {
  return {
    error: {
      code: 'IDEMPOTENCY_CONFLICT',
      message: `request_id ${request.request_id} was already used with different content`,
      retryable: errorRetryable.IDEMPOTENCY_CONFLICT,
      details: { request_id: request.request_id },
    },
    request_id: request.request_id,
    client_order_id: request.client_order_id,
    order_id: null,
  };
}

type Plan =
  | { readonly kind: 'fresh'; readonly fingerprint: string }
  | { readonly kind: 'repeat'; readonly of: number }
  | { readonly kind: 'done'; readonly result: ItemResult };

export function placeBatchIdempotently(
  exchange: Exchange,
  ledger: IdempotencyLedger,
  context: EndpointContext<'placeBatch'>,
): BatchOrderResponse {
  const account = context.account;
  if (account === null) throw new Error('placeBatch reached without an account');
  const accountId = account.accountId;
  const orders = context.body.orders;
  const firstIndex = new Map<string, number>();
  const fingerprints: string[] = [];
  const plans: Plan[] = orders.map((request, index): Plan => {
    const fingerprint = fingerprintOf('placeOrder', {}, normalizeOrderRequest(request));
    fingerprints.push(fingerprint);
    const earlier = firstIndex.get(request.request_id);
    if (earlier !== undefined) {
      // The same id twice in one batch: a repeat of the first item, or a conflict with it.
      return fingerprints[earlier] === fingerprint
        ? { kind: 'repeat', of: earlier }
        : { kind: 'done', result: conflict(request) };
    }
    firstIndex.set(request.request_id, index);
    const stored = ledger.find(accountId, request.request_id);
    if (stored === undefined) return { kind: 'fresh', fingerprint };
    if (stored.fingerprint !== fingerprint) return { kind: 'done', result: conflict(request) };
    return {
      kind: 'done',
      result:
        stored.status < 400 ? (stored.body as Order) : failedFromEnvelope(request, stored.body),
    };
  });
  const freshIndexes = plans.flatMap((plan, index) => (plan.kind === 'fresh' ? [index] : []));
  const placed =
    freshIndexes.length === 0
      ? []
      : exchange.placeBatch(
          accountId,
          context.body.request_id,
          freshIndexes.map((index) => orders[index]!),
          account.riskLimits,
        ).results;
  const results = new Map<number, ItemResult>();
  freshIndexes.forEach((index, position) => {
    const result = placed[position];
    if (result === undefined) return;
    results.set(index, result);
    if ('status' in result) {
      ledger.record({
        version: 1,
        account_id: accountId,
        request_id: orders[index]!.request_id,
        endpoint: 'placeOrder',
        command_type: 'order.open',
        fingerprint: fingerprints[index]!,
        status: 202,
        body: result,
        created_at: context.now,
        completed_at: null,
      });
    }
  });
  plans.forEach((plan, index) => {
    if (plan.kind === 'done') results.set(index, plan.result);
  });
  return {
    request_id: context.body.request_id,
    atomicity: 'non_atomic',
    results: plans.map((plan, index) => {
      const result = results.get(plan.kind === 'repeat' ? plan.of : index);
      return result ?? conflict(orders[index]!);
    }),
  };
}

function failedFromEnvelope(request: OrderRequest, body: unknown): FailedOrderCommand {
  const error = (body as { error?: { code?: unknown; message?: unknown; details?: unknown } })
    ?.error;
  return {
    error: {
      code: typeof error?.code === 'string' ? error.code : 'UNKNOWN',
      message: typeof error?.message === 'string' ? error.message : '',
      retryable: false,
      details:
        typeof error?.details === 'object' && error.details !== null
          ? (error.details as Record<string, unknown>)
          : {},
    },
    request_id: request.request_id,
    client_order_id: request.client_order_id,
    order_id: null,
  };
}
