/**
 * One-cancels-other, pure: of the exits that fire on one price, at most one per group is
 * released; the rest of its group is cancelled. The exits are considered in the order given
 * (the order they were created), so the same inputs always pick the same winner.
 */
export interface OcoCandidate {
  readonly id: string;
  readonly ocoGroup: string | null;
  readonly fired: boolean;
}

export interface OcoDecision {
  /** Exits to release, in order. */
  readonly release: readonly string[];
  /** Exits to cancel because a partner in their group was released. */
  readonly cancel: readonly string[];
}

export function resolveOco(candidates: readonly OcoCandidate[]): OcoDecision {
  const winners = new Map<string, string>();
  const release: string[] = [];
  for (const candidate of candidates) {
    if (!candidate.fired) continue;
    if (candidate.ocoGroup === null) {
      release.push(candidate.id);
    } else if (!winners.has(candidate.ocoGroup)) {
      winners.set(candidate.ocoGroup, candidate.id);
      release.push(candidate.id);
    }
  }
  const cancel: string[] = [];
  for (const candidate of candidates) {
    if (candidate.ocoGroup === null) continue;
    const winner = winners.get(candidate.ocoGroup);
    if (winner !== undefined && winner !== candidate.id) cancel.push(candidate.id);
  }
  return { release, cancel };
}
