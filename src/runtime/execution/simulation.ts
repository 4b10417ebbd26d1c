/**
 * The simulation before a placement, an amendment or a close: each attempt under its own
 * request id (`<request_id>:s<attempt>`), journaled before it goes out; only `decision: READY`
 * goes on. Any other decision or a refusal finishes the intent rejected; an unknown answer is
 * tried again with a new id until `simulationAttempts` are spent (a simulation creates
 * nothing, so an unanswered one can end the intent safely).
 */
import type { OrderRequestInput, ResponseOf } from '../../protocol/index.ts';
import type { IntentJournal } from '../journal/intent-journal.ts';
import type { IntentContext, IntentRecord } from '../journal/records.ts';
import type { PreparedCommand } from '../venue.ts';
import { classifyFailure, errorCode, errorMessage } from './classify.ts';
import type { ExecutorConfig } from './executor-config.ts';
import type { Logger } from '../../core/logger.ts';
import type { IntentOutcomes } from './outcomes.ts';
import { boundedIssues, reasonsText } from './rejection-reasons.ts';
import type { VenueCalls } from './venue-calls.ts';

/** An intent's command, prepared and not journaled yet: it is journaled with the step after it. */
export interface PendingCommand {
  readonly prepared: PreparedCommand;
  readonly context: IntentContext;
}

/** The context of a command that targets nothing: one frozen object, not one per intent. */
export const NO_CONTEXT: IntentContext = Object.freeze({});

/** What became of a simulation attempt: READY, the intent finished, or try again. */
type SimulationVerdict = 'ready' | 'finished' | 'again';

export class Simulation {
  constructor(
    private readonly calls: VenueCalls,
    private readonly journal: IntentJournal,
    private readonly outcomes: IntentOutcomes,
    private readonly logger: Logger,
    private readonly config: ExecutorConfig,
  ) {}

  /**
   * True when the venue answered READY; otherwise the intent is finished rejected. `command`, the
   * intent's own command, is journaled with the first attempt (one commit before it goes out),
   * unless `journaledFirst`, that attempt, was journaled with the intent already (`submit`).
   */
  async simulate(
    record: IntentRecord,
    body: OrderRequestInput,
    command: PendingCommand,
    journaledFirst?: PreparedCommand<'simulateOrder'>,
  ): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      const simulation = this.start(
        record,
        body,
        command,
        attempt,
        attempt === 1 ? journaledFirst : undefined,
      );
      if (simulation === null) return false;
      let verdict: SimulationVerdict;
      try {
        verdict = this.answered(record, await this.calls.send(simulation));
      } catch (error) {
        verdict = this.failed(record, simulation, error, attempt);
      }
      if (verdict !== 'again') return verdict === 'ready';
    }
  }

  /**
   * A simulation attempt's command, journaled (with the intent's own command on the first
   * attempt), or null once the intent is finished (it could not be prepared). `journaledFirst`:
   * the first attempt, prepared and journaled with the intent already (`submit`).
   */
  private start(
    record: IntentRecord,
    body: OrderRequestInput,
    command: PendingCommand,
    attempt: number,
    journaledFirst: PreparedCommand<'simulateOrder'> | undefined,
  ): PreparedCommand<'simulateOrder'> | null {
    if (journaledFirst !== undefined) return journaledFirst;
    const simulateRequestId = `${record.requestId}:s${attempt}`;
    let prepared: PreparedCommand<'simulateOrder'>;
    try {
      prepared = this.calls.venue.prepare({
        endpoint: 'simulateOrder',
        body: { ...body, request_id: simulateRequestId },
      });
    } catch (error) {
      this.outcomes.finishRejectedLocally(record, errorCode(error), errorMessage(error));
      return null;
    }
    if (attempt === 1) {
      this.journal.recordCommandWithStep(record.requestId, command.prepared, command.context, {
        simulateRequestId,
        attempt,
      });
    } else {
      this.journal.recordSimulation(record.requestId, simulateRequestId, attempt);
    }
    return prepared;
  }

  /** The venue's answer to a simulation: READY goes on; any other decision finishes the intent. */
  private answered(record: IntentRecord, result: ResponseOf<'simulateOrder'>): SimulationVerdict {
    if (result.decision === 'READY') return 'ready';
    // The venue's reasons go into the message (logs, the strategy) and, bounded, the issues.
    const reasons = reasonsText(result.issues);
    this.outcomes.finish(record, {
      status: 'rejected',
      code: 'SIMULATION_NOT_READY',
      message: `simulation decided ${result.decision}${reasons === '' ? '' : `: ${reasons}`}; nothing was placed`,
      issues: boundedIssues(result.issues),
    });
    return 'finished';
  }

  /** A simulation without an answer: refused finishes the intent; unknown may try again. */
  private failed(
    record: IntentRecord,
    simulation: PreparedCommand<'simulateOrder'>,
    error: unknown,
    attempt: number,
  ): SimulationVerdict {
    const failure = classifyFailure(error);
    if (failure.kind === 'rejected') {
      this.outcomes.finish(record, {
        status: 'rejected',
        code: failure.code,
        message: `simulation refused: ${failure.message}`,
        ...(failure.issues === undefined ? {} : { issues: failure.issues }),
      });
      return 'finished';
    }
    this.logger.warn('simulation answer unknown; simulating again with a new id', {
      requestId: record.requestId,
      simulateRequestId: simulation.requestId,
      code: failure.code,
    });
    if (attempt < this.config.simulationAttempts) return 'again';
    this.outcomes.finish(record, {
      status: 'rejected',
      code: failure.code,
      message: `simulation gave no answer after ${this.config.simulationAttempts} attempts; nothing was placed`,
    });
    return 'finished';
  }
}
