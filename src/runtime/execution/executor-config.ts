/**
 * The executor's settings: what each one means, their defaults, and the check of a merged
 * configuration. Shared by the executor's parts (submission, recovery, outcomes).
 */
import { PaperbotError } from '../../core/errors.ts';

export interface ExecutorConfig {
  /** Leverage of a placement whose intent names none. */
  readonly defaultLeverage: number;
  readonly defaultMarginMode: 'cross' | 'isolated';
  /** Slippage bound of market orders and closes whose intent names none. */
  readonly defaultMaxSlippagePercent: string;
  readonly simulate: {
    readonly place: boolean;
    readonly amend: boolean;
    readonly closePosition: boolean;
  };
  /** Simulations tried (each with a new simulation id) while the answer is unknown. */
  readonly simulationAttempts: number;
  /** Automatic resolution attempts of an unknown intent before it is left to reconciliation. */
  readonly resolutionAttempts: number;
  readonly resolutionBaseDelayMs: number;
  readonly resolutionMaxDelayMs: number;
  /**
   * A placement or amendment the venue never saw is resent only while younger than this
   * (since it was emitted); older ones end rejected rather than reaching the market late.
   * Cancels and closes are always resent. Null: always resend.
   */
  readonly resendMaxAgeMs: number | null;
  /** Stop waiting for one venue call after this long (the outcome is then unknown). */
  readonly callTimeoutMs: number | null;
  /** The quantity step of a market, to size a close's simulation; null when unknown. */
  readonly quantityStep: (marketId: string) => string | null;
}

export const defaultExecutorConfig: ExecutorConfig = Object.freeze({
  defaultLeverage: 1,
  defaultMarginMode: 'isolated',
  defaultMaxSlippagePercent: '0.5',
  simulate: Object.freeze({ place: true, amend: true, closePosition: true }),
  simulationAttempts: 2,
  resolutionAttempts: 6,
  resolutionBaseDelayMs: 500,
  resolutionMaxDelayMs: 30_000,
  resendMaxAgeMs: 300_000,
  callTimeoutMs: 30_000,
  quantityStep: () => null,
});

/** The defaults overlaid with `config`; refuses attempt counts below one. */
export function executorConfig(config: Partial<ExecutorConfig> | undefined): ExecutorConfig {
  const merged: ExecutorConfig = {
    ...defaultExecutorConfig,
    ...config,
    simulate: {
      ...defaultExecutorConfig.simulate,
      ...config?.simulate,
    },
  };
  if (!Number.isInteger(merged.simulationAttempts) || merged.simulationAttempts < 1) {
    throw new PaperbotError('INVALID_CONFIG', 'simulationAttempts must be an integer >= 1');
  }
  if (!Number.isInteger(merged.resolutionAttempts) || merged.resolutionAttempts < 1) {
    throw new PaperbotError('INVALID_CONFIG', 'resolutionAttempts must be an integer >= 1');
  }
  return merged;
}
