/**
 * The trading permit: true only while every source is true. Each source counts as false until
 * it first emits, so a permit wired to a component that never reported stays closed.
 */
import { combineLatest, distinctUntilChanged, map, type Observable, startWith } from 'rxjs';

export function tradingPermit(...sources: Observable<boolean>[]): Observable<boolean> {
  return combineLatest(sources.map((source) => source.pipe(startWith(false)))).pipe(
    map((values) => values.every(Boolean)),
    distinctUntilChanged(),
  );
}

/** One gate's answer: open, or closed with one sentence saying why. */
export interface GateReading {
  readonly open: boolean;
  /** Why it is closed; null when open. */
  readonly reason: string | null;
}

export interface GateSource {
  /** Short name for logs and status: `reconciliation`, `dead-man`, `route readiness`. */
  readonly gate: string;
  readonly reading$: Observable<GateReading>;
}

/** Whether new exposure may be taken, and every gate that refuses it with its reason. */
export interface PermitState {
  readonly permitted: boolean;
  readonly refusing: readonly { readonly gate: string; readonly reason: string }[];
}

function sameState(left: PermitState, right: PermitState): boolean {
  return (
    left.permitted === right.permitted &&
    left.refusing.length === right.refusing.length &&
    left.refusing.every(
      (entry, index) =>
        entry.gate === right.refusing[index]?.gate &&
        entry.reason === right.refusing[index]?.reason,
    )
  );
}

/**
 * The gates combined, emitted once per change of the answer or of a refusing gate's reason, so a
 * log of it says which gate refuses and why, once, and again when that changes. A gate that has
 * not reported yet refuses ("has not reported yet"), as in `tradingPermit`.
 */
export function permitState$(sources: readonly GateSource[]): Observable<PermitState> {
  return combineLatest(
    sources.map((source) =>
      source.reading$.pipe(
        startWith<GateReading>({ open: false, reason: 'has not reported yet' }),
        map((reading) => ({ gate: source.gate, reading })),
      ),
    ),
  ).pipe(
    map((entries): PermitState => {
      const refusing = entries
        .filter((entry) => !entry.reading.open)
        .map((entry) => ({ gate: entry.gate, reason: entry.reading.reason ?? 'closed' }));
      return { permitted: refusing.length === 0, refusing };
    }),
    distinctUntilChanged(sameState),
  );
}

/** The log line of a permit state: "trading permitted", or the refusing gates and why. */
export function describePermit(state: PermitState): string {
  if (state.permitted) return 'trading permitted';
  const gates = state.refusing.map((entry) => `${entry.gate}: ${entry.reason}`).join('; ');
  return `trading refused, no new exposure (${gates})`;
}
