/**
 * Closing out the account at shutdown: cancel every active order, then read the open orders
 * back to confirm none is left, all within one deadline.
 *
 * - Each cancel-all follows the retry rules (`sendInternalCommandWithRetries`): Retry-After on
 *   429, retryable refusals sent again, unknown outcomes recovered by request id and resent with
 *   the same id and bytes.
 * - A confirmation read that still lists orders (a placement that was in flight landed after the
 *   cancel-all, or the venue is still confirming the cancellations) starts another round with a
 *   new cancel-all (a repeated id would only return the stored result).
 * - It never waits behind order flow: it starts at once, and only the confirmation read waits
 *   for the order command already on the wire (`settled`), bounded by the same deadline.
 * - When it cannot confirm, it says which orders may remain: the last read's, or, when no read
 *   succeeded, the ones the bot knows of and the ones the cancel-all failed to cancel.
 */
import type { Clock } from '../../core/clock.ts';
import { isPaperbotError, PaperbotError } from '../../core/errors.ts';
import { type CancelAllResponse, isFailedOrderCommand, type Order } from '../../protocol/index.ts';
import { backoffDelay } from '../execution/classify.ts';
import { withDeadline } from '../execution/deadline.ts';
import { type RetryBudget, sendInternalCommandWithRetries } from '../execution/internal-command.ts';
import { type Logger, silentLogger } from '../../core/logger.ts';
import type { IntentJournal } from '../journal/intent-journal.ts';
import type { ExecutionVenue } from '../venue.ts';
import { keyEndingOf } from '../venue-key.ts';

export interface ShutdownConfig {
  /** The whole shutdown (cancel-all, confirmation, disarm) gets this long. */
  readonly deadlineMs: number;
  /** One send or read waits at most this long. */
  readonly requestTimeoutMs: number;
  /** Sends and recovery reads of one command, and confirmation reads, at most. */
  readonly maxAttempts: number;
  /** Waits between attempts when the venue names none: base * 2^n, capped. */
  readonly retryBaseDelayMs: number;
  readonly retryMaxDelayMs: number;
  /** Cancel-all rounds (cancel-all then a confirmation read), at most. */
  readonly maxRounds: number;
}

export const defaultShutdownConfig: ShutdownConfig = Object.freeze({
  deadlineMs: 30_000,
  requestTimeoutMs: 10_000,
  maxAttempts: 8,
  retryBaseDelayMs: 500,
  retryMaxDelayMs: 5_000,
  maxRounds: 5,
});

export interface CloseOutReport {
  /** A cancel-all was accepted (or recovered as completed). */
  readonly cancelled: boolean;
  /** A read of the account's open orders came back empty. */
  readonly confirmed: boolean;
  /** Orders that may still be open; empty when confirmed. */
  readonly remainingOrderIds: readonly string[];
  /** The last accepted cancel-all's answer; null when none was answered. */
  readonly cancelAll: CancelAllResponse | null;
  readonly error: { readonly code: string; readonly message: string } | null;
}

export interface CloseOutOptions {
  readonly venue: ExecutionVenue;
  readonly journal: IntentJournal;
  readonly clock: Clock;
  readonly logger?: Logger | undefined;
  readonly config: ShutdownConfig;
  /** Epoch milliseconds after which nothing new is started. */
  readonly deadlineAt: number;
  /** Resolves once no order command of the bot is in flight. */
  readonly settled?: (() => Promise<void>) | undefined;
  /** Ids of the orders the bot believes open, for the report when no read succeeds. */
  readonly knownOpenOrderIds?: (() => readonly string[]) | undefined;
}

export function resolveShutdownConfig(
  partial: Partial<ShutdownConfig> | undefined,
): ShutdownConfig {
  const config = { ...defaultShutdownConfig, ...partial };
  const problems: string[] = [];
  for (const key of Object.keys(defaultShutdownConfig) as (keyof ShutdownConfig)[]) {
    const value = config[key];
    if (!Number.isInteger(value) || value < 1) problems.push(`${key} must be an integer >= 1`);
  }
  if (problems.length > 0) {
    throw new PaperbotError('INVALID_CONFIG', `shutdown: ${problems.join('; ')}`, {
      details: { problems },
    });
  }
  return config;
}

export function retryBudget(config: ShutdownConfig, deadlineAt: number): RetryBudget {
  return {
    deadlineAt,
    maxAttempts: config.maxAttempts,
    requestTimeoutMs: config.requestTimeoutMs,
    retryBaseDelayMs: config.retryBaseDelayMs,
    retryMaxDelayMs: config.retryMaxDelayMs,
  };
}

function sleep(clock: Clock, delayMs: number): Promise<void> {
  return new Promise((resolve) => {
    clock.setTimeout(resolve, delayMs);
  });
}

/** Whether `work` finished before `deadlineAt` (it is not stopped when it did not). */
async function finishedBy(clock: Clock, deadlineAt: number, work: Promise<void>): Promise<boolean> {
  try {
    await withDeadline(clock, Math.max(0, deadlineAt - clock.now()), () => work);
    return true;
  } catch {
    return false;
  }
}

function failedOrderIds(response: CancelAllResponse | null): string[] {
  if (response === null) return [];
  const ids: string[] = [];
  for (const result of response.results) {
    if (isFailedOrderCommand(result) && typeof result.order_id === 'string')
      ids.push(result.order_id);
  }
  return ids;
}

export async function closeOutAccount(options: CloseOutOptions): Promise<CloseOutReport> {
  const { venue, journal, clock, config, deadlineAt } = options;
  const logger = options.logger ?? silentLogger;
  const budget = retryBudget(config, deadlineAt);
  let cancelled = false;
  let cancelAll: CancelAllResponse | null = null;
  let error: CloseOutReport['error'] = null;
  let lastRead: readonly Order[] | null = null;
  let waitedForOrderFlow = false;

  for (let round = 0; round < config.maxRounds; round++) {
    if (round > 0) {
      const delay = backoffDelay(round - 1, config.retryBaseDelayMs, config.retryMaxDelayMs);
      if (clock.now() + delay >= deadlineAt) break;
      await sleep(clock, delay);
    }
    const result = await sendInternalCommandWithRetries(
      { venue, journal, clock },
      'shutdown',
      (requestId) => ({ endpoint: 'cancelAllOrders', body: { request_id: requestId } }),
      budget,
    );
    if (result.ok) {
      cancelled = true;
      error = null;
      if (result.response !== null) cancelAll = result.response;
      logger.info('shutdown cancel-all accepted', {
        requestId: result.requestId,
        attempts: result.attempts,
        recovered: result.response === null,
      });
    } else {
      error = { code: result.code, message: result.message };
      logger.error('shutdown cancel-all failed', {
        requestId: result.requestId,
        attempts: result.attempts,
        code: result.code,
        final: result.final,
      });
    }

    // The order command on the wire when shutdown began may still land: wait for it before a
    // read is taken as the last word.
    if (!waitedForOrderFlow && options.settled !== undefined) {
      waitedForOrderFlow = await finishedBy(clock, deadlineAt, options.settled());
      if (!waitedForOrderFlow) {
        error = {
          code: 'ORDER_COMMAND_IN_FLIGHT',
          message: 'an order command was still unanswered at the shutdown deadline',
        };
        break;
      }
    }

    const read = await readOpenOrders(options, budget);
    if (read.orders !== null) lastRead = read.orders;
    else error ??= read.error;
    if (read.orders !== null && read.orders.length === 0) {
      return { cancelled, confirmed: true, remainingOrderIds: [], cancelAll, error: null };
    }
    if (read.orders !== null) {
      logger.warn('orders still open after the shutdown cancel-all', {
        orderIds: read.orders.map((order) => order.order_id),
      });
    }
    // Another round only when the cancel-all went through and orders still show: a failed one
    // has spent its budget already, and without a read there is nothing to go on.
    if (!result.ok || read.orders === null) break;
  }

  const remaining = new Set<string>(
    lastRead !== null
      ? lastRead.map((order) => order.order_id)
      : [...(options.knownOpenOrderIds?.() ?? []), ...failedOrderIds(cancelAll)],
  );
  return {
    cancelled,
    confirmed: false,
    remainingOrderIds: [...remaining].sort(),
    cancelAll,
    error: error ?? {
      code: 'ORDERS_REMAIN',
      message: `${remaining.size} orders still open at the shutdown deadline`,
    },
  };
}

async function readOpenOrders(
  options: CloseOutOptions,
  budget: RetryBudget,
): Promise<
  | { readonly orders: readonly Order[]; readonly error: null }
  | { readonly orders: null; readonly error: { code: string; message: string } }
> {
  const { clock, venue } = options;
  let last = { code: 'NOT_READ', message: 'the open orders were not read' };
  for (let attempt = 0; attempt < budget.maxAttempts; attempt++) {
    if (attempt > 0) {
      const delay = backoffDelay(attempt - 1, budget.retryBaseDelayMs, budget.retryMaxDelayMs);
      if (clock.now() + delay >= budget.deadlineAt) break;
      await sleep(clock, delay);
    }
    const timeoutMs = Math.max(
      1_000,
      Math.min(budget.requestTimeoutMs, budget.deadlineAt - clock.now()),
    );
    try {
      const orders = await withDeadline(clock, timeoutMs, () => venue.listOpenOrders());
      return { orders, error: null };
    } catch (error) {
      last = {
        code: isPaperbotError(error) ? error.code : 'UNEXPECTED_ERROR',
        message: error instanceof Error ? error.message : String(error),
      };
      // A revoked or expired key answers the same to every try: nothing to wait for.
      if (keyEndingOf(error) !== null) break;
    }
  }
  return { orders: null, error: last };
}
