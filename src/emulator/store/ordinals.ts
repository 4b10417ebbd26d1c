/**
 * Search of arrays kept sorted by ordinal, shared by the engine's order list and the memory
 * store's record index.
 */

/** The index of the first item whose ordinal is not below `ordinal` (`items.length` if none). */
export function firstAtOrAfter(
  items: readonly { readonly ordinal: number }[],
  ordinal: number,
): number {
  let low = 0;
  let high = items.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (items[middle]!.ordinal < ordinal) low = middle + 1;
    else high = middle;
  }
  return low;
}
