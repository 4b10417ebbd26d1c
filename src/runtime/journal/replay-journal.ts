/**
 * A replay's journal: the `IntentJournal` of a backtest, whose venue is simulated and whose run
 * no crash needs to survive. Intents, their records and the strategies' sequences live in
 * memory structures (a map of records, the indexes the runtime looks them up by, counts by
 * state); each call is one lookup and one new record, not a SQLite statement. Every answer is
 * the one the SQLite journal (`journal.ts`) gives to the same calls, refusals included
 * (`test/runtime/journal/replay-journal.property.test.ts`).
 *
 * With `intentWindow`, settled intents older than the window leave (`intent-window.ts`), so a
 * replay of days of data holds a window of intents, not every one.
 *
 * Fills are told apart by id in a bounded window. The private stream's cursor (the highest
 * sequence applied, which makes each order event and fill count once), the fill read-back owed
 * after a gap, and the newest fill known (where a read-back stops) are plain fields: a backtest
 * applies every private event of its venue, as live, and a SQLite transaction per order event
 * would double the cost of an intent. What is rare in a replay (the runtime's own commands, meta
 * values, the dead-man state, emulated exits) goes to a SQLite journal in memory, whose
 * intents, fills and order events tables stay empty.
 */
import { PaperbotError } from '../../core/errors.ts';
import { FifoQueue } from '../../core/fifo-queue.ts';
import { type Fill, type OrderStatusEvent, TERMINAL_ORDER_STATUSES } from '../../protocol/index.ts';
import type { StampedIntent } from '../intents.ts';
import type { JournalExits } from './exits.ts';
import type { CommandStep, FirstCommand, IntentJournal } from './intent-journal.ts';
import { IntentWindow } from './intent-window.ts';
import { Journal } from './journal.ts';
import type { FillReadBackRecord, PrivateCursor } from './records.ts';
import type { JournalRuntimeState } from './journal-runtime-state.ts';
import { LedgerCalls } from './ledger-calls.ts';
import {
  type IntentContext,
  type IntentRecord,
  type JournaledCommand,
  newIntentRecord,
  ORDER_MAKING_KINDS,
  type OutcomeRecord,
} from './records.ts';
import { type IntentState, OPEN_INTENT_STATES } from './schema.ts';

export interface ReplayJournalOptions {
  /** Epoch milliseconds for record timestamps; pass the replay's clock. */
  readonly now: () => number;
  /** The journal epoch (part of every id); random by default. */
  readonly epoch?: string;
  /**
   * Keep about this many latest intents, plus every one the runtime may still ask for; settled
   * intents older than that leave (`intent-window.ts`). Default: every intent is kept.
   */
  readonly intentWindow?: number;
}

/** An intent held: its record as it now reads, and its place in journal order. */
interface Slot {
  record: Changed;
  readonly position: number;
  /** Let go by the window: the record is no longer held. */
  gone: boolean;
  /**
   * The record was handed to a caller: it is a snapshot to them (as the SQLite journal's rows
   * are), so the next change writes a new record. Until then changes are made in place.
   */
  shared: boolean;
}

/** A slot's record, handed to a caller: from now on a change copies it first. */
function share(slot: Slot): IntentRecord {
  slot.shared = true;
  return slot.record;
}

/**
 * The keys of a map as a read-only set (`knownOrderIds`): a view, not a second set kept in step,
 * which cost a hash insertion and deletion per intent.
 */
class KeysOf<K> implements ReadonlySet<K> {
  constructor(private readonly map: ReadonlyMap<K, unknown>) {}

  get size(): number {
    return this.map.size;
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  keys(): SetIterator<K> {
    return this.map.keys();
  }

  values(): SetIterator<K> {
    return this.map.keys();
  }

  entries(): SetIterator<[K, K]> {
    return new Set(this.map.keys()).entries();
  }

  forEach(callback: (value: K, key: K, set: ReadonlySet<K>) => void, thisArg?: unknown): void {
    for (const key of this.map.keys()) callback.call(thisArg, key, key, this);
  }

  [Symbol.iterator](): SetIterator<K> {
    return this.map.keys();
  }
}

/** Intents by an id they carry (order id, client order id), for the latest-by-id lookups. */
class IdIndex {
  /** Usually one intent per id: then the slot itself, not an array of one. */
  private readonly slots = new Map<string, Slot | Slot[]>();
  /** The ids in use, for `knownOrderIds`. */
  readonly ids: ReadonlySet<string> = new KeysOf(this.slots);

  add(id: string | null, slot: Slot): void {
    if (id === null) return;
    const held = this.slots.get(id);
    if (held === undefined) {
      this.slots.set(id, slot);
    } else if (Array.isArray(held)) {
      held.push(slot);
    } else {
      this.slots.set(id, [held, slot]);
    }
  }

  remove(id: string | null, slot: Slot): void {
    if (id === null) return;
    const held = this.slots.get(id);
    if (held === slot) {
      this.slots.delete(id);
    } else if (Array.isArray(held)) {
      const index = held.indexOf(slot);
      if (index >= 0) held.splice(index, 1);
      if (held.length === 1) this.slots.set(id, held[0]!);
    }
  }

  /** The latest intent (journal order) with this id that makes an order. */
  latestOrderMaking(id: string): IntentRecord | undefined {
    const held = this.slots.get(id);
    if (held === undefined) return undefined;
    if (!Array.isArray(held)) {
      return ORDER_MAKING_KINDS.has(held.record.kind) ? share(held) : undefined;
    }
    let latest: Slot | undefined;
    for (const slot of held) {
      if (!ORDER_MAKING_KINDS.has(slot.record.kind)) continue;
      if (latest === undefined || slot.position > latest.position) latest = slot;
    }
    return latest === undefined ? undefined : share(latest);
  }
}

type Changed = { -readonly [Field in keyof IntentRecord]: IntentRecord[Field] };

/**
 * A copy of a record to change, written out field by field: V8 copies an object literal many
 * times faster than it spreads one (`{ ...record, state }`), and a replay changes a record five
 * or six times per intent.
 */
function copyOf(record: IntentRecord, updatedAt: number): Changed {
  return {
    requestId: record.requestId,
    strategyId: record.strategyId,
    sequence: record.sequence,
    kind: record.kind,
    clientOrderId: record.clientOrderId,
    marketId: record.marketId,
    intent: record.intent,
    state: record.state,
    simulateRequestId: record.simulateRequestId,
    simulateAttempt: record.simulateAttempt,
    command: record.command,
    sendAttempts: record.sendAttempts,
    context: record.context,
    orderId: record.orderId,
    replacesOrderId: record.replacesOrderId,
    outcome: record.outcome,
    resolutionAttempts: record.resolutionAttempts,
    nextResolutionAt: record.nextResolutionAt,
    fillReported: record.fillReported,
    createdAt: record.createdAt,
    updatedAt,
  };
}

/** Fill ids a replay's journal remembers (see `recordFill`). */
export const FILL_IDS_KEPT = 100_000;

/** A held intent's record, for the window's sweep. */
function recordOf(slot: Slot): IntentRecord | undefined {
  return slot.gone ? undefined : slot.record;
}

const OPEN_STATES: ReadonlySet<IntentState> = new Set(OPEN_INTENT_STATES);

/** Counted apart: unknown, with automatic resolution attempts exhausted. */
function exhausted(record: IntentRecord): boolean {
  return record.state === 'unknown' && record.nextResolutionAt === null;
}

/**
 * What the SQLite journal's STRICT table would refuse (a sequence taken twice, a time that is
 * no integer, a command state without bytes): refused here too, so both answer alike.
 */
function refused(message: string): PaperbotError {
  return new PaperbotError('JOURNAL_ROW_REFUSED', message);
}

function requireInteger(value: number, name: string): void {
  if (!Number.isSafeInteger(value)) throw refused(`${name} is ${value}, not an integer`);
}

/** A private sequence, refused as the SQLite journal refuses it. */
function requireSequence(sequence: number): void {
  if (!Number.isSafeInteger(sequence) || sequence < 0) {
    throw new PaperbotError('JOURNAL_SEQUENCE_INVALID', `a private sequence is ${sequence}`);
  }
}

function requireIntegerOrNull(value: number | null, name: string): void {
  if (value !== null) requireInteger(value, name);
}

export class ReplayJournal extends LedgerCalls implements IntentJournal {
  /** Everything but intents and sequences: a SQLite journal in memory. */
  private readonly ledger: Journal;
  protected readonly runtimeState: JournalRuntimeState;
  private readonly now: () => number;
  private readonly window: IntentWindow<Slot> | null;
  private readonly slots = new Map<string, Slot>();
  private nextPosition = 0;
  /**
   * The highest sequence of an intent journaled, per strategy: a sequence above it is not taken
   * (a strategy counts up), so no set of the sequences held is kept in step per intent.
   */
  private readonly journaledUpTo = new Map<string, number>();
  /**
   * The slot last journaled or looked up: the executor works one intent at a time, so most
   * calls name it again, and a comparison costs less than a lookup in a map of thousands.
   */
  private recent: Slot | null = null;
  /** The highest sequence noted per strategy. */
  private readonly sequences = new Map<string, number>();
  private readonly open = new Set<Slot>();
  private readonly stateCounts = new Map<IntentState, number>();
  private exhaustedUnknown = 0;
  private readonly byOrderId = new IdIndex();
  private readonly byClientOrderId = new IdIndex();
  /** The latest fill ids seen, oldest first, and how many fills were seen in all. */
  private readonly fillIds = new Set<string>();
  /** `fillIds` oldest first (no `values().next()`: see `FifoQueue`). */
  private readonly fillIdOrder = new FifoQueue<string>();
  private fillsSeen = 0;
  /** Meta values written, by key (see `writeMeta`). */
  private readonly meta = new Map<string, string>();
  /** The highest private sequence applied (the SQLite journal's `private_cursor`). */
  private cursor: PrivateCursor | null = null;
  /** The fill last seen: where a read-back requested now stops. */
  private lastFill: Fill | null = null;
  /** The fill read-back owed (the SQLite journal's `fill_read_back`). */
  private readBackOwed: FillReadBackRecord | null = null;
  /** What an intent's record read before its change (`change`, then `update`). */
  private previousState: IntentState = 'journaled';
  private previousExhausted = false;
  private previousOrderId: string | null = null;

  private constructor(ledger: Journal, now: () => number, window: IntentWindow<Slot> | null) {
    super();
    this.ledger = ledger;
    this.runtimeState = ledger.runtimeState;
    this.now = now;
    this.window = window;
  }

  static open(options: ReplayJournalOptions): ReplayJournal {
    const size = options.intentWindow;
    if (size !== undefined && !(Number.isSafeInteger(size) && size > 0)) {
      throw new PaperbotError('INVALID_CONFIG', `intentWindow is a positive integer, not ${size}`);
    }
    const ledger = Journal.open(':memory:', {
      now: options.now,
      durability: 'normal',
      ...(options.epoch === undefined ? {} : { epoch: options.epoch }),
    });
    return new ReplayJournal(
      ledger,
      options.now,
      size === undefined ? null : new IntentWindow<Slot>(size),
    );
  }

  get epoch(): string {
    return this.ledger.epoch;
  }

  get isOpen(): boolean {
    return this.ledger.isOpen;
  }

  get exits(): JournalExits {
    return this.ledger.exits;
  }

  close(): void {
    this.ledger.close();
  }

  // Sequences

  nextSequence(strategyId: string): number {
    return (this.sequences.get(strategyId) ?? 0) + 1;
  }

  noteSequence(strategyId: string, sequence: number): void {
    const known = this.sequences.get(strategyId);
    if (known !== undefined && known >= sequence) return;
    this.requireOpen();
    requireInteger(sequence, 'a sequence');
    this.sequences.set(strategyId, sequence);
  }

  // Intents

  recordIntent(
    stamped: StampedIntent,
    first?: FirstCommand,
  ): {
    readonly record: IntentRecord;
    readonly created: boolean;
  } {
    this.requireOpen();
    const existing = this.find(stamped.requestId);
    if (existing !== undefined) return { record: share(existing), created: false };
    const now = this.now();
    requireInteger(stamped.sequence, 'a sequence');
    requireInteger(stamped.emittedAt, 'an emission time');
    requireInteger(now, 'the time');
    if (first !== undefined && first.step !== 'sending') {
      requireInteger(first.step.attempt, 'a simulation attempt');
    }
    const journaledUpTo = this.journaledUpTo.get(stamped.strategyId) ?? 0;
    if (
      stamped.sequence <= journaledUpTo &&
      this.sequenceTaken(stamped.strategyId, stamped.sequence)
    ) {
      throw refused(`sequence ${stamped.sequence} of ${stamped.strategyId} is taken`);
    }
    // The stamped intent is frozen: the record holds it, not a copy. With `first`, the record is
    // made as the intent's row reads once its command and step are written (one record, not two).
    const record: Changed = newIntentRecord(stamped, stamped, now);
    if (first !== undefined) {
      record.command = first.command;
      record.context = first.context;
      const step = first.step;
      if (step === 'sending') {
        record.state = 'sending';
        record.sendAttempts = 1;
      } else {
        record.state = 'simulating';
        record.simulateRequestId = step.simulateRequestId;
        record.simulateAttempt = step.attempt;
      }
    }
    const slot: Slot = { record, position: this.nextPosition++, gone: false, shared: true };
    this.slots.set(record.requestId, slot);
    this.recent = slot;
    if (journaledUpTo < record.sequence) this.journaledUpTo.set(record.strategyId, record.sequence);
    this.count(record, 1);
    this.open.add(slot);
    this.byClientOrderId.add(record.clientOrderId, slot);
    const highest = this.sequences.get(record.strategyId) ?? 0;
    if (highest < record.sequence) this.sequences.set(record.strategyId, record.sequence);
    if (this.window?.noteIntent(slot) === true) this.sweep();
    return { record, created: true };
  }

  /**
   * Whether an intent held has this strategy's sequence. Asked only of a sequence at or below
   * the highest journaled, which a strategy, counting up, never sends again: a scan.
   */
  private sequenceTaken(strategyId: string, sequence: number): boolean {
    for (const slot of this.slots.values()) {
      if (slot.record.sequence === sequence && slot.record.strategyId === strategyId) return true;
    }
    return false;
  }

  /** The held intent's slot, or undefined. */
  private find(requestId: string): Slot | undefined {
    const recent = this.recent;
    if (recent !== null && !recent.gone && recent.record.requestId === requestId) return recent;
    const slot = this.slots.get(requestId);
    if (slot !== undefined) this.recent = slot;
    return slot;
  }

  getIntent(requestId: string): IntentRecord | undefined {
    const slot = this.find(requestId);
    return slot === undefined ? undefined : share(slot);
  }

  requireIntent(requestId: string): IntentRecord {
    return share(this.slotOf(requestId));
  }

  intentByOrderId(orderId: string): IntentRecord | undefined {
    return this.byOrderId.latestOrderMaking(orderId);
  }

  intentByClientOrderId(clientOrderId: string): IntentRecord | undefined {
    return this.byClientOrderId.latestOrderMaking(clientOrderId);
  }

  openIntents(): IntentRecord[] {
    return [...this.open].sort((a, b) => a.position - b.position).map(share);
  }

  countExhaustedUnknown(): number {
    return this.exhaustedUnknown;
  }

  countIntents(state: IntentState): number {
    return this.stateCounts.get(state) ?? 0;
  }

  knownOrderIds(): {
    readonly orderIds: ReadonlySet<string>;
    readonly clientOrderIds: ReadonlySet<string>;
  } {
    return { orderIds: this.byOrderId.ids, clientOrderIds: this.byClientOrderId.ids };
  }

  isKnownOrder(orderId: string, clientOrderId: string | null): boolean {
    return (
      this.byOrderId.ids.has(orderId) ||
      (clientOrderId !== null && this.byClientOrderId.ids.has(clientOrderId))
    );
  }

  recordSimulation(requestId: string, simulateRequestId: string, attempt: number): void {
    const slot = this.slotOf(requestId);
    requireInteger(attempt, 'a simulation attempt');
    const next = this.change(slot);
    next.state = 'simulating';
    next.simulateRequestId = simulateRequestId;
    next.simulateAttempt = attempt;
    this.update(slot);
  }

  recordCommand(requestId: string, command: JournaledCommand, context: IntentContext = {}): void {
    const slot = this.slotOf(requestId);
    if (slot.record.command !== null) {
      throw new PaperbotError(
        'JOURNAL_COMMAND_EXISTS',
        `intent ${requestId} already has journaled bytes; they are never replaced`,
      );
    }
    const next = this.change(slot);
    // The command itself, not a copy of its bytes: a prepared command is frozen, and makes its
    // bytes and their hash only when first read (`signing/command.ts`); a replay's venue takes
    // the checked body, so a replay never reads them, and a resend would get the very bytes the
    // live journal keeps.
    next.command = command;
    next.context = context;
    this.update(slot);
  }

  /** `recordCommand`, then `recordSendAttempt` or `recordSimulation`, as one new record. */
  recordCommandWithStep(
    requestId: string,
    command: JournaledCommand,
    context: IntentContext,
    step: CommandStep,
  ): void {
    if (step !== 'sending') requireInteger(step.attempt, 'a simulation attempt');
    const slot = this.slotOf(requestId);
    const current = slot.record;
    if (current.command !== null) {
      throw new PaperbotError(
        'JOURNAL_COMMAND_EXISTS',
        `intent ${requestId} already has journaled bytes; they are never replaced`,
      );
    }
    const next = this.change(slot);
    next.command = command;
    next.context = context;
    if (step === 'sending') {
      next.state = current.state === 'unknown' ? 'unknown' : 'sending';
      next.sendAttempts = current.sendAttempts + 1;
    } else {
      next.state = 'simulating';
      next.simulateRequestId = step.simulateRequestId;
      next.simulateAttempt = step.attempt;
    }
    this.update(slot);
  }

  recordSendAttempt(requestId: string): void {
    const slot = this.slotOf(requestId);
    const current = slot.record;
    if (current.command === null) throw refused(`intent ${requestId} has no bytes to send`);
    const next = this.change(slot);
    next.state = current.state === 'unknown' ? 'unknown' : 'sending';
    next.sendAttempts = current.sendAttempts + 1;
    this.update(slot);
  }

  recordAccepted(
    requestId: string,
    orderId: string | null,
    outcome: OutcomeRecord,
    replacesOrderId: string | null = null,
  ): void {
    this.settle(this.slotOf(requestId), 'accepted', orderId, outcome, replacesOrderId);
  }

  recordRejected(requestId: string, outcome: OutcomeRecord): void {
    this.finishWith(this.slotOf(requestId), 'rejected', outcome);
  }

  recordDenied(requestId: string, outcome: OutcomeRecord): void {
    this.finishWith(this.slotOf(requestId), 'denied', outcome);
  }

  recordUnknown(requestId: string, outcome: OutcomeRecord, nextResolutionAt: number | null): void {
    const slot = this.slotOf(requestId);
    requireIntegerOrNull(nextResolutionAt, 'the next resolution time');
    if (slot.record.command === null) throw refused(`intent ${requestId} has no bytes sent`);
    const next = this.change(slot);
    next.state = 'unknown';
    next.outcome = outcome;
    next.nextResolutionAt = nextResolutionAt;
    this.update(slot);
  }

  recordResolutionAttempt(requestId: string, nextResolutionAt: number | null): void {
    const slot = this.slotOf(requestId);
    requireIntegerOrNull(nextResolutionAt, 'the next resolution time');
    const next = this.change(slot);
    next.resolutionAttempts = slot.record.resolutionAttempts + 1;
    next.nextResolutionAt = nextResolutionAt;
    this.update(slot);
  }

  recordResolved(
    requestId: string,
    resolution: 'accepted' | 'rejected',
    orderId: string | null,
    outcome: OutcomeRecord,
    replacesOrderId: string | null = null,
  ): void {
    this.settle(
      this.slotOf(requestId),
      'resolved',
      resolution === 'accepted' ? orderId : null,
      { ...outcome, resolution },
      replacesOrderId,
    );
  }

  markFillReported(requestId: string): boolean {
    const slot = this.find(requestId);
    if (slot === undefined || slot.record.fillReported) return false;
    const next = this.change(slot);
    next.fillReported = true;
    this.update(slot);
    return true;
  }

  private settle(
    slot: Slot,
    state: 'accepted' | 'resolved',
    orderId: string | null,
    outcome: OutcomeRecord,
    replacesOrderId: string | null,
  ): void {
    const next = this.change(slot);
    next.state = state;
    next.orderId = orderId;
    if (replacesOrderId !== null) next.replacesOrderId = replacesOrderId;
    next.outcome = outcome;
    next.nextResolutionAt = null;
    this.update(slot);
  }

  private finishWith(slot: Slot, state: 'rejected' | 'denied', outcome: OutcomeRecord): void {
    const next = this.change(slot);
    next.state = state;
    next.outcome = outcome;
    next.nextResolutionAt = null;
    this.update(slot);
  }

  /** The held intent, refused (`JOURNAL_INTENT_MISSING`) when there is none. */
  private slotOf(requestId: string): Slot {
    this.requireOpen();
    const slot = this.find(requestId);
    if (slot === undefined) {
      throw new PaperbotError('JOURNAL_INTENT_MISSING', `no journaled intent ${requestId}`);
    }
    return slot;
  }

  /** The time of a change (refused when it is no integer, as the table would). */
  private time(): number {
    const now = this.now();
    requireInteger(now, 'the time');
    return now;
  }

  private requireOpen(): void {
    if (!this.ledger.isOpen)
      throw new PaperbotError('JOURNAL_UNAVAILABLE', 'the journal is closed');
  }

  /**
   * The intent's record to change now (`update` once changed): a new record when a caller holds
   * the current one, else the record itself. What the counts and indexes depend on is noted
   * first, for `update`.
   */
  private change(slot: Slot): Changed {
    const updatedAt = this.time();
    const current = slot.record;
    this.previousState = current.state;
    this.previousExhausted = exhausted(current);
    this.previousOrderId = current.orderId;
    if (!slot.shared) {
      current.updatedAt = updatedAt;
      return current;
    }
    slot.shared = false;
    slot.record = copyOf(current, updatedAt);
    return slot.record;
  }

  /** Keeps the counts and indexes in step with the record `change` gave and the caller changed. */
  private update(slot: Slot): void {
    const next = slot.record;
    const wasExhausted = this.previousExhausted;
    if (this.previousState !== next.state || wasExhausted !== exhausted(next)) {
      this.countState(this.previousState, wasExhausted, -1);
      this.count(next, 1);
      if (OPEN_STATES.has(next.state)) this.open.add(slot);
      else this.open.delete(slot);
    }
    if (this.previousOrderId !== next.orderId) {
      this.byOrderId.remove(this.previousOrderId, slot);
      this.byOrderId.add(next.orderId, slot);
    }
  }

  private count(record: IntentRecord, change: 1 | -1): void {
    this.countState(record.state, exhausted(record), change);
  }

  private countState(state: IntentState, isExhausted: boolean, change: 1 | -1): void {
    this.stateCounts.set(state, (this.stateCounts.get(state) ?? 0) + change);
    if (isExhausted) this.exhaustedUnknown += change;
  }

  /** Lets go of the settled intents the window no longer needs (`intent-window.ts`). */
  private sweep(): void {
    const window = this.window;
    if (window === null) return;
    for (const record of window.sweep(recordOf)) {
      const slot = this.slots.get(record.requestId)!;
      slot.gone = true;
      this.slots.delete(record.requestId);
      this.count(record, -1);
      this.open.delete(slot);
      this.byOrderId.remove(record.orderId, slot);
      this.byClientOrderId.remove(record.clientOrderId, slot);
    }
  }

  // Order events and fills

  /**
   * Records an order event as applied, its sequence as the highest applied; false when that
   * sequence was applied before (the caller then ignores the event), as the SQLite journal.
   */
  recordOrderEvent(event: OrderStatusEvent): boolean {
    this.requireOpen();
    const cursor = this.cursor;
    if (cursor !== null && event.sequence <= cursor.lastSequence) return false;
    this.advanceCursor(event.sequence, event.occurred_at);
    // An order that reached a terminal status lets its intents leave the window.
    if (this.window !== null && TERMINAL_ORDER_STATUSES.has(event.data.to_state)) {
      this.window.noteOrderClosed(event.data.entity_id);
    }
    return true;
  }

  /**
   * Fills are told apart by `fill_id` among the latest `FILL_IDS_KEPT`: a replay's venue hands
   * each fill over once, so a window of ids answers as the whole table would, in bounded memory.
   */
  recordFill(
    fill: Fill,
    delivery: { readonly sequence: number | null; readonly source: 'stream' | 'rest' },
    eventAt: string | null = null,
  ): boolean {
    this.requireOpen();
    // The sequence first: refused, it leaves the fill unrecorded, as the SQLite transaction does.
    if (delivery.sequence !== null) {
      this.advanceCursor(delivery.sequence, eventAt ?? fill.occurred_at);
    }
    if (this.fillIds.has(fill.fill_id)) return false;
    this.fillIds.add(fill.fill_id);
    this.fillIdOrder.push(fill.fill_id);
    this.fillsSeen += 1;
    this.lastFill = fill;
    if (this.fillIds.size > FILL_IDS_KEPT) {
      const oldest = this.fillIdOrder.shift();
      if (oldest !== undefined) this.fillIds.delete(oldest);
    }
    return true;
  }

  fillCount(): number {
    return this.fillsSeen;
  }

  privateCursor(): PrivateCursor | null {
    this.requireOpen();
    return this.cursor;
  }

  restartPrivateSequence(sequence: number): void {
    this.requireOpen();
    requireSequence(sequence);
    this.cursor = { lastSequence: sequence, lastEventAt: null };
  }

  requestFillReadBack(reason: string): FillReadBackRecord {
    this.requireOpen();
    const owed = this.readBackOwed;
    // A read-back already owed keeps its (older) stop: reading down to it covers the new gap too.
    this.readBackOwed =
      owed === null
        ? {
            generation: 1,
            stopFillId: this.lastFill?.fill_id ?? null,
            stopOccurredAt: this.lastFill?.occurred_at ?? this.cursor?.lastEventAt ?? null,
            reason,
            requestedAt: this.time(),
          }
        : { ...owed, generation: owed.generation + 1 };
    return this.readBackOwed;
  }

  pendingFillReadBack(): FillReadBackRecord | null {
    this.requireOpen();
    return this.readBackOwed;
  }

  finishFillReadBack(generation: number): boolean {
    this.requireOpen();
    if (this.readBackOwed?.generation !== generation) return false;
    this.readBackOwed = null;
    return true;
  }

  /** The stored value is a maximum: an older sequence never moves it back. */
  private advanceCursor(sequence: number, eventAt: string | null): void {
    requireSequence(sequence);
    if (this.cursor === null || sequence > this.cursor.lastSequence) {
      this.cursor = { lastSequence: sequence, lastEventAt: eventAt };
    }
  }

  // The runtime's own commands, meta values, the dead-man state

  readMeta(key: string): string | null {
    if (!this.ledger.isOpen) return this.ledger.readMeta(key);
    return this.meta.get(key) ?? this.ledger.readMeta(key);
  }

  /**
   * The first write of a key goes to the ledger, which refuses the journal's own keys; later
   * ones, as the kernel's loss tracking at every account update, stay in memory.
   */
  writeMeta(key: string, value: string): void {
    if (this.meta.has(key) && this.ledger.isOpen) {
      this.meta.set(key, value);
      return;
    }
    this.ledger.writeMeta(key, value);
    this.meta.set(key, value);
  }
}
