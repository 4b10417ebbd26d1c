/**
 * The account's dead-man switch (cancel-all-after): arming and disarming its deadline on the
 * clock, and when it passes, cancelling every active order and sending
 * `cancel_all_after.triggered` after the order events.
 */
import type { EngineContext } from './context.ts';
import { bodyIssue, invalidRequest } from './errors.ts';
import type { OrderLifecycle } from './order-lifecycle.ts';
import type { AccountState } from './state.ts';

export class CancelAllAfter {
  constructor(
    private readonly context: EngineContext,
    private readonly lifecycle: OrderLifecycle,
  ) {}

  /** Arms (timeout > 0, again to refresh) or disarms (0) the account's deadline. */
  set(
    accountId: string,
    requestId: string,
    timeoutSeconds: number,
  ): { request_id: string; deadline_at: string | null } {
    const context = this.context;
    const account = context.accountOf(accountId);
    if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 0 || timeoutSeconds > 86_400) {
      throw invalidRequest([
        bodyIssue('timeout_seconds', 'value_error', 'must be an integer from 0 to 86400'),
      ]);
    }
    return context.run(() => {
      context.clock.clearTimeout(account.cancelAllAfterTimer ?? undefined);
      account.cancelAllAfterTimer = null;
      context.markAccount(account);
      if (timeoutSeconds === 0) {
        account.cancelAllAfterDeadline = null;
        return { request_id: requestId, deadline_at: null };
      }
      const deadline = context.clock.now() + timeoutSeconds * 1000;
      account.cancelAllAfterDeadline = deadline;
      this.arm(account);
      return { request_id: requestId, deadline_at: context.timestamp(deadline) };
    });
  }

  /** Sets the timer of the account's stored deadline (none when it has none). */
  arm(account: AccountState): void {
    const context = this.context;
    const deadline = account.cancelAllAfterDeadline;
    if (deadline === null) return;
    context.clock.clearTimeout(account.cancelAllAfterTimer ?? undefined);
    account.cancelAllAfterTimer = context.clock.setTimeout(
      () => {
        account.cancelAllAfterTimer = null;
        context.run(() => this.trigger(account));
      },
      Math.max(0, deadline - context.clock.now()),
    );
  }

  /** Makes an armed deadline pass now (every armed account when `accountId` is omitted). */
  fire(accountId: string | undefined): void {
    const context = this.context;
    const targets =
      accountId === undefined ? [...context.accounts.values()] : [context.accountOf(accountId)];
    context.run(() => {
      for (const account of targets) {
        if (account.cancelAllAfterDeadline !== null) this.trigger(account);
      }
    });
  }

  private trigger(account: AccountState): void {
    const context = this.context;
    const deadline = account.cancelAllAfterDeadline;
    if (deadline === null) return;
    context.clock.clearTimeout(account.cancelAllAfterTimer ?? undefined);
    account.cancelAllAfterTimer = null;
    account.cancelAllAfterDeadline = null;
    context.markAccount(account);
    const cancelled: string[] = [];
    for (const order of [...account.activeOrders]) {
      this.lifecycle.cancelActive(order, {
        code: 'CANCEL_ALL_AFTER',
        message: 'cancelled by the cancel-all-after deadline',
      });
      cancelled.push(order.id);
    }
    const now = context.clock.now();
    context.emitRisk(account, 'cancel_all_after.triggered', {
      deadline_at: context.timestamp(deadline),
      triggered_at: context.timestamp(now),
      cancelled_order_ids: cancelled,
    });
  }
}
