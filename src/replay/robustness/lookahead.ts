/**
 * The look-ahead check: the strategy is replayed on the whole data and on the data cut at
 * several points; every intent it emitted before a cut (the cut run goes on in virtual time,
 * without records, up to the cut; its shutdown is after) must be emitted
 * identically, at the same time and in the same order, with the data after the cut removed. A strategy that differs saw something after the
 * cut: it is named with the first intent that differs.
 *
 * Only what the cut can change is detected: a strategy reading a copy of the data the cut does
 * not reach (a file of its own, a network feed) passes. Runs go through an injected `run`, so
 * the CLI uses the sweep pool and tests may run in-process.
 */
import { PaperbotError } from '../../core/errors.ts';

export interface EmittedIntent {
  readonly strategyId: string;
  /** Virtual time of the emission. */
  readonly t: number;
  /** The intent as JSON (compared as text). */
  readonly intent: string;
}

export interface LookaheadRun {
  readonly intents: readonly EmittedIntent[];
  /** The last record delivered (null when none). */
  readonly lastT: number | null;
  /** True when the intents were capped (the comparison stops at the cap). */
  readonly truncated: boolean;
}

/** Runs the strategy on the data before `cutMs` (null: all of it). */
export type LookaheadRunner = (
  cuts: readonly (number | null)[],
) => Promise<readonly LookaheadRun[]>;

export interface LookaheadDifference {
  readonly strategyId: string;
  readonly cutMs: number;
  /** Position among the strategy's intents before the cut. */
  readonly position: number;
  readonly t: number;
  /** The intent with the whole data (null: the cut run emitted one more). */
  readonly full: string | null;
  /** The intent with the data cut (null: the cut run emitted none here). */
  readonly cut: string | null;
}

export interface LookaheadOutcome {
  readonly cuts: readonly number[];
  /** Intents compared per cut (before each cut, every strategy). */
  readonly compared: readonly number[];
  readonly passed: boolean;
  /** The first difference of each strategy that peeks, earliest cut first. */
  readonly differences: readonly LookaheadDifference[];
}

/** `count` cut points evenly inside the range (never at its ends). */
export function cutPoints(range: { firstT: number; lastT: number }, count: number): number[] {
  if (!Number.isInteger(count) || count < 1 || count > 50) {
    throw new PaperbotError('INVALID_ARGUMENT', '--cuts must be an integer from 1 to 50');
  }
  const span = range.lastT + 1 - range.firstT;
  return Array.from({ length: count }, (_, index) =>
    Math.round(range.firstT + (span * (index + 1)) / (count + 1)),
  );
}

function byStrategy(
  intents: readonly EmittedIntent[],
  beforeT: number,
): Map<string, EmittedIntent[]> {
  const grouped = new Map<string, EmittedIntent[]>();
  for (const intent of intents) {
    if (intent.t >= beforeT) continue;
    const list = grouped.get(intent.strategyId) ?? [];
    list.push(intent);
    grouped.set(intent.strategyId, list);
  }
  return grouped;
}

export async function checkLookahead(
  range: { firstT: number; lastT: number },
  count: number,
  run: LookaheadRunner,
): Promise<LookaheadOutcome> {
  const cuts = cutPoints(range, count);
  const [full, ...cutRuns] = await run([null, ...cuts]);
  const differences: LookaheadDifference[] = [];
  const named = new Set<string>();
  const compared: number[] = [];
  cuts.forEach((cutMs, index) => {
    const cutRun = cutRuns[index]!;
    // The cut run lives on (without records) up to the cut, as the whole data's run does.
    let limit = cutMs - 1;
    // A capped list is complete only before its last intent's time.
    for (const list of [full!, cutRun]) {
      if (list.truncated && list.intents.length > 0) {
        limit = Math.min(limit, list.intents[list.intents.length - 1]!.t - 1);
      }
    }
    const expected = byStrategy(full!.intents, limit);
    const actual = byStrategy(cutRun.intents, limit);
    let count = 0;
    for (const strategyId of [...new Set([...expected.keys(), ...actual.keys()])].sort()) {
      const want = expected.get(strategyId) ?? [];
      const got = actual.get(strategyId) ?? [];
      count += want.length;
      if (named.has(strategyId)) continue;
      for (let position = 0; position < Math.max(want.length, got.length); position++) {
        const a = want[position];
        const b = got[position];
        if (a !== undefined && b !== undefined && a.t === b.t && a.intent === b.intent) continue;
        differences.push({
          strategyId,
          cutMs,
          position,
          t: Math.min(a?.t ?? Infinity, b?.t ?? Infinity),
          full: a?.intent ?? null,
          cut: b?.intent ?? null,
        });
        named.add(strategyId);
        break;
      }
    }
    compared.push(count);
  });
  return { cuts, compared, passed: differences.length === 0, differences };
}
