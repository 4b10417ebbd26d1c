/**
 * The parameter space of `paperbot backtest --search`: one spec per dimension,
 *
 * - `name=low..high` a range sampled uniformly; whole numbers when both ends are integers;
 * - `name=low..high:step` a range on the grid `low + k × step` (values above `high` excluded);
 * - `name=a,b,c` choices, typed as a sweep's values are.
 *
 * Names address the same parameters as `--sweep` (a strategy parameter or a config section).
 * Sampled values are written as text with the step's decimals, then typed by the sweep's
 * coercion (the strategy's schema), so a search cell is exactly a sweep cell.
 */
import { PaperbotError } from '../../core/errors.ts';

export type SearchDimension =
  | {
      readonly name: string;
      readonly kind: 'range';
      readonly low: number;
      readonly high: number;
      /** Null: continuous. */
      readonly step: number | null;
      /** Decimals written for sampled values. */
      readonly decimals: number;
    }
  | { readonly name: string; readonly kind: 'choice'; readonly values: readonly string[] };

const NAME = /^[A-Za-z0-9_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_][A-Za-z0-9_-]*)*$/;
const NUMBER = /^-?\d+(?:\.\d+)?$/;

function decimalsOf(text: string): number {
  const dot = text.indexOf('.');
  return dot < 0 ? 0 : text.length - dot - 1;
}

export function parseSearchSpecs(specs: readonly string[]): SearchDimension[] {
  const problems: string[] = [];
  const dimensions: SearchDimension[] = [];
  for (const spec of specs) {
    const equals = spec.indexOf('=');
    const name = equals < 0 ? '' : spec.slice(0, equals).trim();
    const body = equals < 0 ? '' : spec.slice(equals + 1).trim();
    if (!NAME.test(name) || body === '') {
      problems.push(`${spec}: expected name=low..high[:step] or name=a,b,c`);
      continue;
    }
    if (dimensions.some((dimension) => dimension.name === name)) {
      problems.push(`${spec}: ${name} is given twice`);
      continue;
    }
    const range = /^(.+?)\.\.(.+?)(?::(.+))?$/.exec(body);
    if (range) {
      const [, lowText, highText, stepText] = range as unknown as [string, string, string, string?];
      if (![lowText, highText, stepText ?? '1'].every((text) => NUMBER.test(text))) {
        problems.push(`${spec}: the ends and the step must be numbers`);
        continue;
      }
      const low = Number(lowText);
      const high = Number(highText);
      const integers = stepText === undefined && decimalsOf(lowText) + decimalsOf(highText) === 0;
      const step = stepText === undefined ? (integers ? 1 : null) : Number(stepText);
      if (!(high > low) || (step !== null && !(step > 0))) {
        problems.push(`${spec}: needs low < high and a positive step`);
        continue;
      }
      const decimals = Math.max(
        decimalsOf(lowText),
        stepText === undefined ? (integers ? 0 : 6) : decimalsOf(stepText),
      );
      dimensions.push({ name, kind: 'range', low, high, step, decimals });
      continue;
    }
    const values = body.split(',').map((value) => value.trim());
    if (values.length < 2 || values.some((value) => value === '')) {
      problems.push(`${spec}: choices need at least two non-empty values`);
      continue;
    }
    dimensions.push({ name, kind: 'choice', values });
  }
  if (problems.length > 0 || dimensions.length === 0) {
    throw new PaperbotError(
      'INVALID_SWEEP',
      problems.length > 0 ? `--search: ${problems.join('; ')}` : '--search: no dimension given',
      { details: { problems } },
    );
  }
  return dimensions;
}

/** One dimension's value from a uniform draw `u` in [0, 1), as text. */
export function valueAt(dimension: SearchDimension, u: number): string {
  if (dimension.kind === 'choice') {
    return dimension.values[
      Math.min(dimension.values.length - 1, Math.floor(u * dimension.values.length))
    ]!;
  }
  if (dimension.step === null) {
    return (dimension.low + u * (dimension.high - dimension.low)).toFixed(dimension.decimals);
  }
  const points = Math.floor((dimension.high - dimension.low) / dimension.step + 1e-9) + 1;
  const k = Math.min(points - 1, Math.floor(u * points));
  return (dimension.low + k * dimension.step).toFixed(dimension.decimals);
}

/** Distinct points of the space (null when continuous: unbounded). */
export function spaceSize(dimensions: readonly SearchDimension[]): number | null {
  let size = 1;
  for (const dimension of dimensions) {
    if (dimension.kind === 'choice') size *= dimension.values.length;
    else if (dimension.step === null) return null;
    else size *= Math.floor((dimension.high - dimension.low) / dimension.step + 1e-9) + 1;
  }
  return size;
}
