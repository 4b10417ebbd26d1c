/**
 * The robustness report's structure (`paperbot backtest --robustness`), written as JSON beside
 * its HTML page (`html.ts`). Every section is a pure function of the data, config and seed.
 */
import type { BootstrapOutcome } from './bootstrap.ts';
import type { LookaheadOutcome } from './lookahead.ts';
import type { SensitivityOutcome } from './sensitivity.ts';
import type { WalkForwardOutcome } from './walk-forward.ts';

export const ROBUSTNESS_FORMAT = 1;

export interface RobustnessReport {
  readonly format: typeof ROBUSTNESS_FORMAT;
  readonly strategy: string;
  readonly seed: string | number;
  readonly data: readonly string[];
  readonly currency: string;
  readonly range: { readonly first_t: number; readonly last_t: number };
  /** The parameters the bootstrap, sensitivity and look-ahead check ran with. */
  readonly best: Readonly<Record<string, unknown>>;
  readonly walk_forward: WalkForwardOutcome;
  readonly bootstrap: BootstrapOutcome;
  readonly sensitivity: SensitivityOutcome | null;
  readonly lookahead: LookaheadOutcome;
}
