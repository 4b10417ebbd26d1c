/**
 * What the bot tells its webhooks, as plain events built from the kernel's streams: fills,
 * trading-state changes (the kill switch apart), the dead-man deadline passing, reconciliation
 * differences, errors, and the daily summary. An event holds figures and ids only (prices,
 * sizes, order ids, reasons): no key, token, signature or URL is ever put in one.
 */
import { distinctUntilChanged, type Observable, type Subscription } from 'rxjs';
import type { Clock } from '../../core/clock.ts';
import type { Fill } from '../../protocol/index.ts';
import type { DeadmanStatus } from '../../runtime/deadman/heartbeat.ts';
import type { ReconciliationReport } from '../../runtime/execution/reconciler.ts';
import type { IntentOutcome } from '../../runtime/intents.ts';
import type { TradingStateSnapshot } from '../../runtime/risk/gate.ts';
import type { VenueKeyStatus } from '../../runtime/venue-key.ts';
import { reconciliationDifferences } from '../dashboard/activity.ts';
import type { NotificationKind } from './config.ts';

export type NotificationValue = string | number | boolean | null;

export interface NotificationEvent {
  readonly kind: NotificationKind;
  /** Epoch milliseconds. */
  readonly at: number;
  /** One line a person reads. */
  readonly title: string;
  readonly fields: Readonly<Record<string, NotificationValue>>;
}

/** The kernel's streams the events come from; a `Kernel` has them all. */
export interface NotificationSource {
  readonly fills$: Observable<Fill>;
  readonly outcomes$: Observable<IntentOutcome>;
  readonly reconciliation$: Observable<ReconciliationReport>;
  readonly tradingState$: Observable<TradingStateSnapshot>;
  status(): { readonly deadman: DeadmanStatus | null };
}

/** How often the dead-man's phase is looked at for a deadline that passed. */
const DEADMAN_CHECK_MS = 1_000;

/** How a fill is told, in the bot's log line and in a notification alike. */
export function fillTitle(fill: Fill): string {
  return `fill ${fill.side} ${fill.quantity} ${fill.market_id} at ${fill.price}`;
}

/** The fields of a fill that its log line and its notification share. */
export function fillFields(fill: Fill) {
  return {
    fill_id: fill.fill_id,
    order_id: fill.order_id,
    market: fill.market_id,
    side: fill.side,
    quantity: fill.quantity,
    price: fill.price,
  };
}

export function fillEvent(fill: Fill, at: number): NotificationEvent {
  return {
    kind: 'fill',
    at,
    title: fillTitle(fill),
    fields: {
      ...fillFields(fill),
      fee: fill.fee,
      maker: fill.is_maker,
    },
  };
}

/** The key expiring soon (a warning) or ended (trading halted for good). */
export function venueKeyEvent(key: VenueKeyStatus): NotificationEvent {
  return {
    kind: 'venue_key',
    at: key.since,
    title:
      key.state === 'expiring'
        ? `venue key expiring: ${key.reason ?? ''}`
        : `trading HALTED: venue key ${key.state}: ${key.reason ?? ''}`,
    fields: {
      state: key.state,
      key_id: key.keyId,
      expires_at: key.expiresAt,
      reason: key.reason,
    },
  };
}

/**
 * Feeds `publish` from `source` until the returned function is called. The first trading
 * state is told only when it is not ACTIVE (a bot that starts halted says so).
 */
export function subscribeNotificationEvents(
  source: NotificationSource,
  clock: Clock,
  publish: (event: NotificationEvent) => void,
  streamState$?: Observable<string>,
  venueKey$?: Observable<VenueKeyStatus>,
): () => void {
  const subscriptions: Subscription[] = [];
  let first = true;
  subscriptions.push(
    source.fills$.subscribe((fill) => publish(fillEvent(fill, clock.now()))),
    source.tradingState$
      .pipe(distinctUntilChanged((a, b) => a.state === b.state && a.reason === b.reason))
      .subscribe((state) => {
        const wasFirst = first;
        first = false;
        if (wasFirst && state.state === 'ACTIVE') return;
        // The key's own event (below) tells a halt for a dead key.
        if (state.source === 'venue_key') return;
        publish({
          kind: state.source === 'kill_switch' ? 'kill_switch' : 'trading_state',
          at: clock.now(),
          title: `trading ${state.state}${state.reason === null ? '' : `: ${state.reason}`}`,
          fields: { state: state.state, reason: state.reason, source: state.source },
        });
      }),
    source.reconciliation$.subscribe((report) => {
      const differences = reconciliationDifferences(report);
      if (report.ok && differences === 0) return;
      publish({
        kind: report.ok ? 'reconciliation' : 'error',
        at: clock.now(),
        title: report.ok
          ? `reconciliation (${report.reason}) found ${differences} differences`
          : `reconciliation (${report.reason}) failed: ${report.error?.code ?? 'unknown'}`,
        fields: {
          reason: report.reason,
          ok: report.ok,
          differences,
          missing_locally: report.missingLocally.length,
          foreign_orders: report.foreignOrders.length,
          missing_at_venue: report.missingAtVenue.length,
          state_mismatches: report.stateMismatches.length,
          position_mismatches: report.positionMismatches.length,
          error: report.error === null ? null : `${report.error.code}: ${report.error.message}`,
        },
      });
    }),
    source.outcomes$.subscribe((outcome) => {
      if (outcome.status !== 'unknown') return;
      publish({
        kind: 'error',
        at: clock.now(),
        title: `order command ${outcome.intent.requestId} has an unknown outcome: ${outcome.reason}`,
        fields: {
          strategy: outcome.intent.strategyId,
          request_id: outcome.intent.requestId,
          reason: outcome.reason,
        },
      });
    }),
  );
  if (streamState$ !== undefined) {
    subscriptions.push(
      streamState$.pipe(distinctUntilChanged()).subscribe((state) => {
        if (state !== 'failed') return;
        publish({ kind: 'error', at: clock.now(), title: 'stream failed', fields: { state } });
      }),
    );
  }
  if (venueKey$ !== undefined) {
    subscriptions.push(
      venueKey$.pipe(distinctUntilChanged((a, b) => a.state === b.state)).subscribe((key) => {
        if (key.state === 'valid') return;
        publish(venueKeyEvent(key));
      }),
    );
  }
  let deadmanPhase: string | null = null;
  const deadmanTimer = clock.setInterval(() => {
    const deadman = source.status().deadman;
    const phase = deadman?.phase ?? null;
    if (phase === 'expired' && deadmanPhase !== 'expired') {
      publish({
        kind: 'deadman',
        at: clock.now(),
        title: 'dead-man deadline passed: the venue cancelled every order',
        fields: {
          phase,
          reason: deadman?.reason ?? null,
          deadline_at: deadman?.deadlineAt ?? null,
        },
      });
    }
    deadmanPhase = phase;
  }, DEADMAN_CHECK_MS);
  return () => {
    clock.clearInterval(deadmanTimer);
    for (const subscription of subscriptions) subscription.unsubscribe();
  };
}
