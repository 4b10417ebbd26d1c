/**
 * The bookkeeping behind `ctx.openOrders()`: the strategy's own orders, from the moment an
 * intent is stamped (so a strategy sees what it has in flight) until the venue reports the
 * order terminal or the intent is refused.
 *
 * An order is the strategy's own when its client order id is one the host stamped for it. After
 * a restart the host has no record of earlier intents, so an active order whose client order
 * id carries this strategy's id prefix (strategy and journal epoch) is adopted.
 */
import { type Decimal, parseDecimal, parseDecimalKept, ZERO } from '../../core/decimal.ts';
import type { Order, OrderStatus } from '../../protocol/index.ts';
import type { IntentOutcome, PlaceIntent, Side, StampedIntent } from '../intents.ts';
import type { OpenOrder, OpenOrderStatus, OwnOrderUpdate } from './types.ts';

const TERMINAL: ReadonlySet<OrderStatus> = new Set(['FILLED', 'CANCELLED', 'REJECTED']);

interface Entry {
  readonly clientOrderId: string;
  readonly requestId: string;
  orderId: string | null;
  readonly marketId: string;
  readonly side: Side;
  readonly type: PlaceIntent['type'];
  price: Decimal | null;
  quantity: Decimal;
  filledQuantity: Decimal;
  readonly postOnly: boolean;
  readonly reduceOnly: boolean;
  readonly tag: string | undefined;
  status: OpenOrderStatus;
  /** The request id of the cancel, cancel all or amend that asked to take this order down. */
  cancelRequestedBy: string | null;
  /** For an amendment's new order: the client order id of the order it replaces. */
  readonly replaces: string | null;
  readonly intent: StampedIntent | null;
  /**
   * The venue's texts that `price`, `quantity` and `filledQuantity` were last read from (null:
   * not read from a venue order): an order's updates mostly repeat them, and are not parsed again.
   */
  priceText: string | null;
  quantityText: string | null;
  filledText: string | null;
  /** The entry as `open()` last gave it, given again while its changing fields are the same. */
  view: OpenOrder | null;
}

/** What a new order is: the fields an intent decides. */
type OrderTerms = Pick<
  Entry,
  'marketId' | 'side' | 'type' | 'price' | 'quantity' | 'postOnly' | 'reduceOnly' | 'tag'
>;

/** The entry of an order a stamped intent creates, before the venue has said anything of it. */
/**
 * The texts `terms` were parsed from, when they were: the venue's first update usually repeats
 * them, and a text seen before is not parsed again (`applyOrder`).
 */
interface TermTexts {
  readonly price: string | null;
  readonly quantity: string | null;
}

const NO_TEXTS: TermTexts = { price: null, quantity: null };

function submitted(stamped: StampedIntent, terms: OrderTerms, texts: TermTexts = NO_TEXTS): Entry {
  return {
    clientOrderId: stamped.clientOrderId ?? stamped.requestId,
    requestId: stamped.requestId,
    orderId: null,
    marketId: terms.marketId,
    side: terms.side,
    type: terms.type,
    price: terms.price,
    quantity: terms.quantity,
    filledQuantity: ZERO,
    postOnly: terms.postOnly,
    reduceOnly: terms.reduceOnly,
    tag: terms.tag,
    status: 'submitted',
    cancelRequestedBy: null,
    replaces: null,
    intent: stamped,
    priceText: texts.price,
    quantityText: texts.quantity,
    // Nothing filled yet: the venue's "0" is the ZERO already held.
    filledText: '0',
    view: null,
  };
}

/** What a strategy sees of an open order (`ctx.openOrders`). */
function openOrderOf(entry: Entry): OpenOrder {
  // Nothing filled (most orders): the quantity itself, without a subtraction.
  const remaining =
    entry.filledQuantity.c[0] === 0 ? entry.quantity : entry.quantity.minus(entry.filledQuantity);
  return Object.freeze({
    clientOrderId: entry.clientOrderId,
    requestId: entry.requestId,
    orderId: entry.orderId,
    marketId: entry.marketId,
    side: entry.side,
    type: entry.type,
    price: entry.price,
    quantity: entry.quantity,
    filledQuantity: entry.filledQuantity,
    remainingQuantity: remaining.gt(ZERO) ? remaining : ZERO,
    postOnly: entry.postOnly,
    reduceOnly: entry.reduceOnly,
    tag: entry.tag,
    status: entry.status,
    cancelRequested: entry.cancelRequestedBy !== null,
    intent: entry.intent,
  });
}

function isRefusal(outcome: IntentOutcome): boolean {
  return (
    outcome.status === 'denied' ||
    outcome.status === 'rejected' ||
    (outcome.status === 'resolved' && outcome.resolution === 'rejected')
  );
}

function isAcceptance(
  outcome: IntentOutcome,
): outcome is Extract<IntentOutcome, { status: 'accepted' | 'resolved' }> {
  return (
    outcome.status === 'accepted' ||
    (outcome.status === 'resolved' && outcome.resolution === 'accepted')
  );
}

export class OwnOrders {
  private readonly byClientId = new Map<string, Entry>();
  private readonly byOrderId = new Map<string, Entry>();

  /** `ownIdPrefix`: the start of every client order id this strategy's intents get. */
  constructor(private readonly ownIdPrefix: string) {}

  /** Records a freshly stamped intent; `position` reads the signed position of a market. */
  recordIntent(stamped: StampedIntent, position: (marketId: string) => Decimal): void {
    const intent = stamped.intent;
    switch (intent.kind) {
      case 'place':
        this.add(
          submitted(
            stamped,
            {
              marketId: intent.marketId,
              side: intent.side,
              type: intent.type,
              price: intent.price === undefined ? null : parseDecimalKept(intent.price),
              quantity: parseDecimalKept(intent.quantity),
              postOnly: intent.postOnly === true,
              reduceOnly: intent.reduceOnly === true,
              tag: intent.tag,
            },
            { price: intent.price ?? null, quantity: intent.quantity },
          ),
        );
        return;
      case 'cancel': {
        const entry = this.byClientId.get(intent.clientOrderId);
        if (entry && entry.cancelRequestedBy === null) entry.cancelRequestedBy = stamped.requestId;
        return;
      }
      case 'cancel_all':
        for (const entry of this.byClientId.values()) {
          const inScope = intent.marketId === undefined || entry.marketId === intent.marketId;
          if (inScope && entry.cancelRequestedBy === null) {
            entry.cancelRequestedBy = stamped.requestId;
          }
        }
        return;
      case 'amend': {
        const old = this.byClientId.get(intent.clientOrderId);
        if (!old) return;
        old.cancelRequestedBy ??= stamped.requestId;
        // `amend.quantity` is the order's new total size; the replacement carries what is left
        // of it after the fills so far (the executor sizes it the same way). Nothing left: the
        // executor cancels the rest instead of replacing, so no new order is expected.
        const total = intent.quantity === undefined ? old.quantity : parseDecimal(intent.quantity);
        const replacement = total.minus(old.filledQuantity);
        if (replacement.lte(ZERO)) return;
        this.add({
          ...old,
          clientOrderId: stamped.clientOrderId ?? stamped.requestId,
          requestId: stamped.requestId,
          orderId: null,
          price: intent.price === undefined ? old.price : parseDecimal(intent.price),
          quantity: replacement,
          filledQuantity: ZERO,
          tag: intent.tag ?? old.tag,
          status: 'submitted',
          cancelRequestedBy: null,
          replaces: old.clientOrderId,
          intent: stamped,
          priceText: null,
          quantityText: null,
          filledText: null,
          view: null,
        });
        return;
      }
      case 'bracket':
        // The runtime places a bracket's entry under the bracket's own ids; its exits are
        // emulated orders (`ctx.emulatedOrders()`), not venue orders.
        this.recordIntent(
          { ...stamped, clientOrderId: stamped.requestId, intent: intent.entry },
          position,
        );
        return;
      case 'close_position': {
        const current = position(intent.marketId);
        if (current.eq(ZERO)) return;
        const percent = parseDecimal(intent.quantityPercent ?? '100');
        this.add(
          submitted(stamped, {
            marketId: intent.marketId,
            side: current.gt(ZERO) ? 'sell' : 'buy',
            type: 'market',
            price: null,
            quantity: current.abs().times(percent).div(100),
            postOnly: false,
            reduceOnly: true,
            tag: intent.tag,
          }),
        );
        return;
      }
    }
  }

  applyOutcome(outcome: IntentOutcome): void {
    const stamped = outcome.intent;
    const kind = stamped.intent.kind;
    const createsOrder = kind === 'place' || kind === 'amend' || kind === 'close_position';
    const entry =
      createsOrder && stamped.clientOrderId !== null
        ? this.byClientId.get(stamped.clientOrderId)
        : undefined;

    if (isRefusal(outcome)) {
      if (entry) {
        this.remove(entry);
        if (entry.replaces !== null) this.clearCancelRequest(stamped.requestId);
      }
      // An amendment with nothing left to replace has no entry of its own, only the request to
      // take its order down, which a refusal withdraws as it does a cancel's.
      if (!createsOrder || (kind === 'amend' && !entry)) {
        this.clearCancelRequest(stamped.requestId);
      }
      return;
    }
    if (!entry) return;
    if (isAcceptance(outcome)) {
      if (outcome.orderId !== null) this.setOrderId(entry, outcome.orderId);
      if (entry.status === 'submitted' || entry.status === 'unknown') entry.status = 'accepted';
      // Practice amends by cancelling, confirming the cancel, then placing anew: once the new
      // order is accepted the old one is gone.
      if (entry.replaces !== null) {
        const old = this.byClientId.get(entry.replaces);
        if (old) this.remove(old);
      }
    } else if (outcome.status === 'unknown') {
      if (entry.status === 'submitted') entry.status = 'unknown';
    } else if (outcome.status === 'filled') {
      this.remove(entry);
    }
  }

  /** Applies a venue order update; returns it as the strategy's own, or null if it is not. */
  applyOrder(order: Order): OwnOrderUpdate | null {
    const clientOrderId = order.client_order_id;
    let entry =
      (clientOrderId === null ? undefined : this.byClientId.get(clientOrderId)) ??
      this.byOrderId.get(order.order_id);
    if (!entry) {
      if (clientOrderId === null || !clientOrderId.startsWith(this.ownIdPrefix)) return null;
      const adopted = this.adopt(order, clientOrderId);
      if (adopted === null) return { order, clientOrderId, tag: undefined, intent: null };
      entry = adopted;
    }
    this.setOrderId(entry, order.order_id);
    entry.status = order.status;
    if (order.filled_quantity !== entry.filledText) {
      entry.filledQuantity = parseDecimalKept(order.filled_quantity);
      entry.filledText = order.filled_quantity;
    }
    if (order.price !== null && order.price !== entry.priceText) {
      entry.price = parseDecimalKept(order.price);
      entry.priceText = order.price;
    }
    if (order.quantity !== null && order.quantity !== entry.quantityText) {
      entry.quantity = parseDecimalKept(order.quantity);
      entry.quantityText = order.quantity;
    }
    if (TERMINAL.has(order.status)) this.remove(entry);
    return { order, clientOrderId: entry.clientOrderId, tag: entry.tag, intent: entry.intent };
  }

  open(marketId?: string): OpenOrder[] {
    const result: OpenOrder[] = [];
    for (const entry of this.byClientId.values()) {
      if (marketId !== undefined && entry.marketId !== marketId) continue;
      const view = entry.view;
      result.push(
        view !== null &&
          view.orderId === entry.orderId &&
          view.status === entry.status &&
          view.price === entry.price &&
          view.quantity === entry.quantity &&
          view.filledQuantity === entry.filledQuantity &&
          view.cancelRequested === (entry.cancelRequestedBy !== null)
          ? view
          : (entry.view = openOrderOf(entry)),
      );
    }
    return result;
  }

  private adopt(order: Order, clientOrderId: string): Entry | null {
    if (TERMINAL.has(order.status)) return null;
    if (order.side !== 'buy' && order.side !== 'sell') return null;
    if (order.type !== 'market' && order.type !== 'limit') return null;
    const entry: Entry = {
      clientOrderId,
      requestId: order.request_id ?? clientOrderId,
      orderId: order.order_id,
      marketId: order.market_id,
      side: order.side,
      type: order.type,
      price: order.price === null ? null : parseDecimal(order.price),
      quantity: order.quantity === null ? ZERO : parseDecimal(order.quantity),
      filledQuantity: parseDecimal(order.filled_quantity),
      postOnly: order.post_only,
      reduceOnly: order.reduce_only,
      tag: undefined,
      status: order.status,
      cancelRequestedBy: null,
      replaces: null,
      intent: null,
      priceText: order.price,
      quantityText: order.quantity,
      filledText: order.filled_quantity,
      view: null,
    };
    this.add(entry);
    return entry;
  }

  private add(entry: Entry): void {
    this.byClientId.set(entry.clientOrderId, entry);
    if (entry.orderId !== null) this.byOrderId.set(entry.orderId, entry);
  }

  private setOrderId(entry: Entry, orderId: string): void {
    if (entry.orderId === orderId) return;
    if (entry.orderId !== null && this.byOrderId.get(entry.orderId) === entry) {
      this.byOrderId.delete(entry.orderId);
    }
    entry.orderId = orderId;
    this.byOrderId.set(orderId, entry);
  }

  private remove(entry: Entry): void {
    if (this.byClientId.get(entry.clientOrderId) === entry) {
      this.byClientId.delete(entry.clientOrderId);
    }
    if (entry.orderId !== null && this.byOrderId.get(entry.orderId) === entry) {
      this.byOrderId.delete(entry.orderId);
    }
  }

  private clearCancelRequest(requestId: string): void {
    for (const entry of this.byClientId.values()) {
      if (entry.cancelRequestedBy === requestId) entry.cancelRequestedBy = null;
    }
  }
}
