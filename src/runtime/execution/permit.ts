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
