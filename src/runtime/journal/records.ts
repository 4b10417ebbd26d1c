/**
 * What the journal hands back: the records of intents, fills, order events and the runtime's own
 * commands, as both journals (`journal.ts`, `replay-journal.ts`) give them. The enumerated
 * fields come from the const tuples the tables' CHECK constraints are written from
 * (`schema.ts`), so a state, a status or a source is named once.
 */
import type { Fill } from '../../protocol/index.ts';
import type { StampedIntent } from '../intents.ts';
import type { CommandEndpoint } from '../venue.ts';
import type { FillSource, IntentState, InternalCommandState } from './schema.ts';

/** A command as journaled: what `ExecutionVenue.restore` takes back. */
export interface JournaledCommand {
  readonly endpoint: CommandEndpoint;
  readonly path: string;
  readonly bodyBytes: Uint8Array;
  readonly bodySha256: string;
}

/** What the executor learned while building the command, kept for a later resend decision. */
export interface IntentContext {
  /** Amend and cancel: the venue order the command targets. */
  readonly targetOrderId?: string;
  /** Amend: the target's filled quantity when the replacement was sized. */
  readonly checkedFilledQuantity?: string;
  /** Close: the position closed. */
  readonly positionId?: string;
}

/** How an intent ended, as its outcome records it. */
export const OUTCOME_STATUSES = ['accepted', 'rejected', 'denied', 'unknown', 'resolved'] as const;
export type OutcomeStatus = (typeof OUTCOME_STATUSES)[number];

/** The last outcome of an intent as stored (an IntentOutcome without the intent, plus a note). */
export interface OutcomeRecord {
  readonly status: OutcomeStatus;
  readonly code?: string;
  readonly message?: string;
  readonly reason?: string;
  readonly resolution?: 'accepted' | 'rejected';
  readonly orderId?: string | null;
  readonly issues?: readonly unknown[];
  readonly denials?: readonly unknown[];
  readonly note?: string;
}

/** An intent and what became of it: one row of the `intents` table, its JSON read. */
export interface IntentRecord {
  readonly requestId: string;
  readonly strategyId: string;
  readonly sequence: number;
  readonly kind: StampedIntent['intent']['kind'];
  readonly clientOrderId: string | null;
  readonly marketId: string | null;
  readonly intent: StampedIntent;
  readonly state: IntentState;
  readonly simulateRequestId: string | null;
  readonly simulateAttempt: number;
  readonly command: JournaledCommand | null;
  readonly sendAttempts: number;
  readonly context: IntentContext;
  readonly orderId: string | null;
  readonly replacesOrderId: string | null;
  readonly outcome: OutcomeRecord | null;
  readonly resolutionAttempts: number;
  readonly nextResolutionAt: number | null;
  readonly fillReported: boolean;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** Kinds of intent whose record is found by the venue order they made. */
export const ORDER_MAKING_KINDS: ReadonlySet<IntentRecord['kind']> = new Set([
  'place',
  'amend',
  'close_position',
]);

/** The record of a new intent, as its freshly inserted row reads (column defaults included). */
export function newIntentRecord(stamped: StampedIntent, intent: StampedIntent, now: number) {
  const record: IntentRecord = {
    requestId: stamped.requestId,
    strategyId: stamped.strategyId,
    sequence: stamped.sequence,
    kind: stamped.intent.kind,
    clientOrderId: stamped.clientOrderId,
    marketId: marketOf(stamped.intent),
    intent,
    state: 'journaled',
    simulateRequestId: null,
    simulateAttempt: 0,
    command: null,
    sendAttempts: 0,
    context: {},
    orderId: null,
    replacesOrderId: null,
    outcome: null,
    resolutionAttempts: 0,
    nextResolutionAt: null,
    fillReported: false,
    createdAt: now,
    updatedAt: now,
  };
  return record;
}

/** The market an intent trades, when it names one (the `market_id` column). */
export function marketOf(intent: StampedIntent['intent']): string | null {
  return 'marketId' in intent && typeof intent.marketId === 'string' ? intent.marketId : null;
}

export interface InternalCommandRecord {
  readonly requestId: string;
  readonly purpose: string;
  readonly command: JournaledCommand;
  readonly state: InternalCommandState;
  readonly outcome: Readonly<Record<string, unknown>> | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface DeadmanRecord {
  readonly armed: boolean;
  readonly timeoutSeconds: number;
  /** Epoch milliseconds of the deadline as last confirmed (the earlier of the venue's and ours). */
  readonly deadlineAt: number | null;
  readonly lastRequestId: string | null;
  readonly confirmedAt: number | null;
  readonly firedAt: number | null;
}

/** A fill as the journal holds it. */
export interface FillRecord {
  readonly fillId: string;
  readonly orderId: string | null;
  /** The private sequence that delivered it; null when read back over REST (or journaled by schema 1). */
  readonly sequence: number | null;
  /** `stream` (the stream or the event log), `rest` (GET /v1/fills); null for a schema-1 row. */
  readonly source: FillSource | null;
  /** The fill as the venue gave it; null for a schema-1 row. */
  readonly fill: Fill | null;
  readonly seenAt: number;
}

/** An order state event as applied (one row per private sequence). */
export interface OrderEventRecord {
  readonly sequence: number;
  readonly eventId: string;
  readonly orderId: string;
  readonly fromState: string | null;
  readonly toState: string;
  readonly occurredAt: string;
  readonly appliedAt: number;
}

/** Where the private stream stands: the highest sequence applied. */
export interface PrivateCursor {
  readonly lastSequence: number;
  /** The venue's `occurred_at` of that event. */
  readonly lastEventAt: string | null;
}

/** A read-back of GET /v1/fills still owed: down to `stopFillId`, or to fills older than `stopOccurredAt`. */
export interface FillReadBackRecord {
  /** Moves on with every new request, so a read-back finished for an older one keeps this one. */
  readonly generation: number;
  readonly stopFillId: string | null;
  readonly stopOccurredAt: string | null;
  readonly reason: string;
  readonly requestedAt: number;
}
