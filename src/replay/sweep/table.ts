/**
 * The sweep's results as a terminal table, one row per grid cell in grid order: the swept
 * parameters, then the result's fields, then the status. A failed cell keeps its row, with the
 * error in the status column.
 */
import { formatTable } from '../../core/text-table.ts';
import type { SweepAxis } from './grid.ts';
import type { SweepResult } from './pool.ts';

export type MetricsOf<Value> = (value: Value) => Readonly<Record<string, string>>;

/** A result's own fields when it is a plain object of scalars, else one `result` column. */
export function defaultMetrics(value: unknown): Record<string, string> {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const metrics: Record<string, string> = {};
    for (const [name, field] of Object.entries(value)) {
      if (field === null || ['string', 'number', 'boolean'].includes(typeof field)) {
        metrics[name] = field === null ? 'n/a' : String(field);
      }
    }
    return metrics;
  }
  return {
    result: value === null || value === undefined ? 'n/a' : String(value),
  };
}

export function formatSweepTable<Value>(
  axes: readonly SweepAxis[],
  results: readonly SweepResult<Value>[],
  metrics: MetricsOf<Value> = defaultMetrics as MetricsOf<Value>,
): string {
  const rowMetrics = results.map((result) => (result.status === 'ok' ? metrics(result.value) : {}));
  const metricNames: string[] = [];
  for (const row of rowMetrics) {
    for (const name of Object.keys(row)) if (!metricNames.includes(name)) metricNames.push(name);
  }
  const rows = results.map((result, row) => [
    ...axes.map((axis) => result.raw[axis.name] ?? ''),
    ...metricNames.map((name) => rowMetrics[row]![name] ?? ''),
    result.status === 'ok' ? 'ok' : `error ${result.error.code}: ${result.error.message}`,
  ]);
  return formatTable([...axes.map((axis) => axis.name), ...metricNames, 'status'], rows);
}
