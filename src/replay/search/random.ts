/**
 * Seeded sampling of a search space: the same seed gives the same candidates in the same
 * order. The generator is mulberry32 (32-bit state, good enough to spread samples; not for
 * secrets), seeded from the text of the seed through FNV-1a.
 */
import type { Coerce, GridCell } from '../sweep/grid.ts';
import { type SearchDimension, spaceSize, valueAt } from './space.ts';

export function seededRandom(seed: string | number): () => number {
  let hash = 0x811c9dc5;
  for (const char of `search:${String(seed)}`) {
    hash ^= char.charCodeAt(0);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  let state = hash;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Up to `count` distinct candidates, as sweep cells typed by `coerce`. A space smaller than
 * `count` gives all its points (in sampled order); draws are bounded either way.
 */
export function sampleCandidates(
  dimensions: readonly SearchDimension[],
  count: number,
  seed: string | number,
  coerce: Coerce = (_name, raw) => raw,
): GridCell[] {
  const random = seededRandom(seed);
  const size = spaceSize(dimensions);
  const wanted = size === null ? count : Math.min(count, size);
  const seen = new Set<string>();
  const cells: GridCell[] = [];
  for (let draw = 0; cells.length < wanted && draw < wanted * 50; draw++) {
    const raw: Record<string, string> = {};
    for (const dimension of dimensions) raw[dimension.name] = valueAt(dimension, random());
    const label = dimensions
      .map((dimension) => `${dimension.name}=${raw[dimension.name]}`)
      .join(' ');
    if (seen.has(label)) continue;
    seen.add(label);
    const parameters: Record<string, unknown> = {};
    for (const dimension of dimensions)
      parameters[dimension.name] = coerce(dimension.name, raw[dimension.name]!);
    cells.push({ index: cells.length, parameters, raw, label });
  }
  return cells;
}
