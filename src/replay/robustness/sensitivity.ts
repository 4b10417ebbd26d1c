/**
 * Parameter sensitivity around the best cell: the metric over a grid of two parameters, each
 * at the best value and `radius` steps either side (a range's step, or `span / 8` of a
 * continuous range, clamped to its ends; a choice's every value), the other parameters held at
 * the best. A sharp peak says the best cell sits on noise; a plateau says its neighbours would
 * have done about as well.
 */
import { PaperbotError } from '../../core/errors.ts';
import type { SweepCellFigures } from '../report/sweep-html.ts';
import type { Coerce, GridCell } from '../sweep/grid.ts';
import { objectiveOf, type SearchMetric } from '../search/objective.ts';
import type { Evaluate, TimeWindow } from '../search/search.ts';
import type { SearchDimension } from '../search/space.ts';

export interface SensitivityOptions {
  /** The two parameters of the heatmap: rows, then columns. */
  readonly dimensions: readonly [SearchDimension, SearchDimension];
  readonly best: Readonly<Record<string, unknown>>;
  readonly radius: number;
  readonly metric: SearchMetric;
  readonly window: TimeWindow;
  readonly coerce?: Coerce;
  readonly evaluate: Evaluate;
}

export interface SensitivityOutcome {
  readonly metric: SearchMetric;
  readonly window: TimeWindow;
  readonly rows: { readonly name: string; readonly values: readonly string[] };
  readonly columns: { readonly name: string; readonly values: readonly string[] };
  /** The best cell's values (text) of the two parameters. */
  readonly best: readonly [string, string];
  /** `scores[row][column]`; null where the run failed or the metric is undefined. */
  readonly scores: readonly (readonly (number | null)[])[];
  readonly errors: readonly string[];
}

/** The values of a dimension around `centre`, as text. */
export function neighbourValues(
  dimension: SearchDimension,
  centre: unknown,
  radius: number,
): string[] {
  if (dimension.kind === 'choice') return [...dimension.values];
  const middle = Number(centre);
  if (!Number.isFinite(middle)) {
    throw new PaperbotError(
      'INVALID_ARGUMENT',
      `${dimension.name}: the best value is not a number`,
    );
  }
  const step = dimension.step ?? (dimension.high - dimension.low) / 8;
  const values = new Set<string>();
  for (let k = -radius; k <= radius; k++) {
    const value = Math.min(dimension.high, Math.max(dimension.low, middle + k * step));
    values.add(value.toFixed(dimension.decimals));
  }
  return [...values].sort((a, b) => Number(a) - Number(b));
}

export async function runSensitivity(options: SensitivityOptions): Promise<SensitivityOutcome> {
  if (!Number.isInteger(options.radius) || options.radius < 1 || options.radius > 5) {
    throw new PaperbotError('INVALID_ARGUMENT', '--radius must be an integer from 1 to 5');
  }
  const [rowDimension, columnDimension] = options.dimensions;
  const rowValues = neighbourValues(rowDimension, options.best[rowDimension.name], options.radius);
  const columnValues = neighbourValues(
    columnDimension,
    options.best[columnDimension.name],
    options.radius,
  );
  const cells: GridCell[] = [];
  for (const rowValue of rowValues) {
    for (const columnValue of columnValues) {
      const raw = { [rowDimension.name]: rowValue, [columnDimension.name]: columnValue };
      const parameters: Record<string, unknown> = { ...options.best };
      for (const [name, text] of Object.entries(raw)) {
        parameters[name] = options.coerce === undefined ? text : options.coerce(name, text);
      }
      cells.push({
        index: cells.length,
        parameters,
        raw,
        label: `${rowDimension.name}=${rowValue} ${columnDimension.name}=${columnValue}`,
      });
    }
  }
  const results = await options.evaluate(cells, options.window);
  const errors: string[] = [];
  const score = (index: number): number | null => {
    const result = results[index]!;
    if (result.status === 'error') {
      errors.push(`${JSON.stringify(cells[index]!.raw)}: ${result.error.message}`);
      return null;
    }
    return objectiveOf(result.value as SweepCellFigures, options.metric);
  };
  return {
    metric: options.metric,
    window: options.window,
    rows: { name: rowDimension.name, values: rowValues },
    columns: { name: columnDimension.name, values: columnValues },
    best: [String(options.best[rowDimension.name]), String(options.best[columnDimension.name])],
    scores: rowValues.map((_, row) =>
      columnValues.map((__, column) => score(row * columnValues.length + column)),
    ),
    errors,
  };
}
