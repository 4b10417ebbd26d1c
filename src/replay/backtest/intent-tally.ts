/**
 * What became of a backtest's intents, for the report: each intent counted once, by where it
 * came from (a strategy, or the runtime releasing a bracket's entry or a fired exit's order) and
 * by how it was answered; and why a fill traded (`exitReasonOf`), so a trade can say why it
 * ended.
 *
 * Read from the strategies' emitted intents and the kernel's outcomes, in bounded memory: the
 * exits whose kind a release needs are remembered up to `MAX_REMEMBERED_EXITS`, oldest dropped.
 *
 * - An `exit` is held by the runtime (answered `accepted` without an order): `held`.
 * - A `bracket` taken by the runtime has no answer of its own: its entry is released under the
 *   bracket's own request id and answered like any order. It counts as `held`, its entry as a
 *   release (`bracket_entry`). A bracket the runtime refuses is `denied`, and nothing is
 *   released.
 * - A fired exit's order has the request id `<exit id>:x` (`:sl:x` and `:tp:x` for a bracket's
 *   stop-loss and take-profit leg).
 * - An unknown outcome that is resolved later counts as what it resolved to.
 */
import type { IntentOutcome, OrderIntent } from '../../runtime/intents.ts';
import type { ReportIntents } from '../report/report.ts';
import type { ExitReason } from '../report/round-trips.ts';

/** Exits (by id) whose trigger kind is remembered for their release's fills. */
export const MAX_REMEMBERED_EXITS = 50_000;

type ExitKind = 'stop' | 'take_profit' | 'trailing';
type Answer = 'accepted' | 'denied' | 'rejected' | 'unknown';

const RELEASE_SUFFIX = ':x';

export class IntentTally {
  private readonly emitted = new Map<string, number>();
  private readonly exitKinds = new Map<string, ExitKind>();
  private readonly answers = { accepted: 0, denied: 0, rejected: 0, unknown: 0 };
  private readonly released = {
    bracket_entry: 0,
    bracket_stop_loss: 0,
    bracket_take_profit: 0,
    stop: 0,
    take_profit: 0,
    trailing: 0,
  };
  private heldExits = 0;
  private deniedBrackets = 0;

  /** An intent a strategy emitted. */
  emittedIntent(intent: OrderIntent): void {
    this.emitted.set(intent.kind, (this.emitted.get(intent.kind) ?? 0) + 1);
  }

  /** An outcome the kernel published. */
  outcome(outcome: IntentOutcome): void {
    const stamped = outcome.intent;
    const intent = stamped.intent;
    if (outcome.status === 'filled') return;
    if (outcome.status === 'resolved') {
      this.answers.unknown--;
      this.answers[outcome.resolution]++;
      return;
    }
    if (intent.kind === 'exit') {
      if (outcome.status === 'accepted') {
        this.heldExits++;
        this.rememberExit(stamped.requestId, intent.trigger.kind);
      } else {
        this.answers[outcome.status as Answer]++;
      }
      return;
    }
    if (intent.kind === 'bracket') {
      // The runtime answers a bracket only to refuse it; the bracket was counted as held.
      this.deniedBrackets++;
      this.answers[outcome.status as Answer]++;
      return;
    }
    this.answers[outcome.status as Answer]++;
    if (intent.kind === 'place') this.noteRelease(stamped.requestId);
  }

  /** Why a fill of the order with this client order id traded. */
  exitReasonOf(orderId: string | null, clientOrderId: string | null): ExitReason {
    if (orderId === null) return 'liquidation';
    if (clientOrderId === null || !clientOrderId.endsWith(RELEASE_SUFFIX)) return 'signal';
    const exitId = clientOrderId.slice(0, -RELEASE_SUFFIX.length);
    if (exitId.endsWith(':sl')) return 'bracket_stop_loss';
    if (exitId.endsWith(':tp')) return 'bracket_take_profit';
    return this.exitKinds.get(exitId) ?? 'signal';
  }

  /** The counts, adding up: `total` = from strategies + released = the sum of the outcomes. */
  figures(): ReportIntents {
    const fromStrategies: Record<string, number> = {};
    for (const kind of [...this.emitted.keys()].sort())
      fromStrategies[kind] = this.emitted.get(kind)!;
    const brackets = this.emitted.get('bracket') ?? 0;
    const releasedEntries = brackets - this.deniedBrackets;
    const released = { ...this.released, bracket_entry: releasedEntries };
    const emittedTotal = [...this.emitted.values()].reduce((sum, count) => sum + count, 0);
    const total = emittedTotal + Object.values(released).reduce((sum, count) => sum + count, 0);
    const held = this.heldExits + releasedEntries;
    const answered =
      this.answers.accepted + this.answers.denied + this.answers.rejected + this.answers.unknown;
    return {
      total,
      from_strategies: fromStrategies,
      released,
      outcomes: { ...this.answers, held, unanswered: total - answered - held },
    };
  }

  private noteRelease(requestId: string): void {
    if (!requestId.endsWith(RELEASE_SUFFIX)) return;
    const exitId = requestId.slice(0, -RELEASE_SUFFIX.length);
    if (exitId.endsWith(':sl')) this.released.bracket_stop_loss++;
    else if (exitId.endsWith(':tp')) this.released.bracket_take_profit++;
    else {
      const kind = this.exitKinds.get(exitId);
      if (kind !== undefined) this.released[kind]++;
    }
  }

  private rememberExit(exitId: string, kind: ExitKind): void {
    if (this.exitKinds.size >= MAX_REMEMBERED_EXITS) {
      const oldest = this.exitKinds.keys().next();
      if (oldest.done !== true) this.exitKinds.delete(oldest.value);
    }
    this.exitKinds.set(exitId, kind);
  }
}
