/**
 * An order's status changes: each with its `order.status` event, and on a terminal status the
 * release of what the order held (active count, reserved margin, its place in the book, its
 * submission timer). Used by matching, commands, liquidation and the cancel-all-after deadline.
 */
import type { OrderStatus } from '../../protocol/index.ts';
import { type EngineContext, isActive } from './context.ts';
import { StatusEventEntry } from './events.ts';
import type { OrderState } from './state.ts';

export interface CancelReason {
  readonly code: string;
  readonly message: string;
}

export class OrderLifecycle {
  constructor(private readonly context: EngineContext) {}

  statusEvent(order: OrderState, from: OrderStatus | null, to: OrderStatus): void {
    const context = this.context;
    const now = context.instantNow();
    const account = order.account;
    order.status = to;
    order.updatedAt = now;
    order.lastEventSequence = context.pushEvent(
      account,
      new StatusEventEntry(
        context.codec,
        account.id,
        ++account.sequence,
        context.nextIdentifier++,
        now,
        order.id,
        from,
        to,
      ),
    );
    context.markOrder(order);
  }

  /** Moves an order to `to`, with its event; terminal states release what the order held. */
  transition(order: OrderState, to: OrderStatus): void {
    this.statusEvent(order, order.status, to);
    if (to === 'FILLED' || to === 'CANCELLED' || to === 'REJECTED') {
      const account = order.account;
      account.trackActive(order, -1);
      account.reserved -= order.reserved;
      order.reserved = 0n;
      if (order.resting !== null) {
        order.market.book.remove(order.resting);
        order.resting = null;
      }
      if (order.submitTimer !== null) {
        this.context.clock.clearTimeout(order.submitTimer);
        order.submitTimer = null;
      }
      this.context.terminated(order);
    }
  }

  cancelActive(order: OrderState, reason: CancelReason | null): void {
    if (!isActive(order.status)) return;
    if (reason !== null) order.error = reason;
    this.transition(order, 'CANCELLED');
  }
}
