/**
 * Parameter grids for `paperbot backtest --sweep name=a,b,c [--sweep other=x,y]`: each spec is
 * one axis, several specs make the cartesian product. Values stay strings until a coercion hook
 * (the strategy's zod parameter schema, later) types them; every problem is reported at once.
 *
 * Order is part of the contract: the first axis varies slowest, values in the order given, so
 * cell `index` is stable and results print in the same order every time.
 */
import { PaperbotError } from '../../core/errors.ts';

export interface SweepAxis {
  readonly name: string;
  readonly values: readonly string[];
}

export interface GridCell {
  /** Position in the grid (0-based), the order results are reported in. */
  readonly index: number;
  /** Parameter name to (coerced) value, in axis order. */
  readonly parameters: Readonly<Record<string, unknown>>;
  /** The swept values as typed on the command line, before coercion. */
  readonly raw: Readonly<Record<string, string>>;
  /** `name=value` pairs as typed on the command line, for tables and errors. */
  readonly label: string;
}

export interface SweepProblem {
  readonly spec: string;
  readonly message: string;
}

/** Dotted names reach nested parameters (`risk.max_position`). */
// Segments may hold dashes: strategy ids do (`mm-btc.halfSpreadTicks`).
const NAME_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_][A-Za-z0-9_-]*)*$/;
export const DEFAULT_MAX_CELLS = 10_000;

function invalid(problems: readonly SweepProblem[]): PaperbotError {
  return new PaperbotError(
    'INVALID_SWEEP',
    `invalid --sweep: ${problems.map((problem) => `${problem.spec}: ${problem.message}`).join('; ')}`,
    { details: { problems } },
  );
}

function parseOne(spec: string, problems: SweepProblem[]): SweepAxis | null {
  const equals = spec.indexOf('=');
  if (equals < 0) {
    problems.push({ spec, message: 'expected name=value1,value2,...' });
    return null;
  }
  const name = spec.slice(0, equals).trim();
  const values = spec
    .slice(equals + 1)
    .split(',')
    .map((value) => value.trim());
  const before = problems.length;
  if (!NAME_PATTERN.test(name)) {
    problems.push({ spec, message: `"${name}" is not a parameter name` });
  }
  if (values.some((value) => value === '')) {
    problems.push({ spec, message: 'empty value' });
  }
  const duplicates = values.filter(
    (value, index) => value !== '' && values.indexOf(value) !== index,
  );
  if (duplicates.length > 0) {
    problems.push({
      spec,
      message: `repeated value ${JSON.stringify(duplicates[0])}`,
    });
  }
  return problems.length === before ? { name, values } : null;
}

/** Parses `--sweep` specs into axes; throws `INVALID_SWEEP` listing every problem. */
export function parseSweepSpecs(specs: readonly string[]): SweepAxis[] {
  const problems: SweepProblem[] = [];
  const axes: SweepAxis[] = [];
  const names = new Set<string>();
  for (const spec of specs) {
    const axis = parseOne(spec, problems);
    if (!axis) continue;
    if (names.has(axis.name)) {
      problems.push({
        spec,
        message: `parameter "${axis.name}" is swept twice`,
      });
      continue;
    }
    names.add(axis.name);
    axes.push(axis);
  }
  if (problems.length > 0) throw invalid(problems);
  return axes;
}

/** Types a raw value; throw to refuse it (the message is reported with the parameter). */
export type Coerce = (name: string, raw: string) => unknown;

export interface GridOptions {
  readonly coerce?: Coerce;
  /** Refuse grids larger than this (default 10,000 cells). */
  readonly maxCells?: number;
  /** Fixed parameters every cell gets (swept ones override them). */
  readonly base?: Readonly<Record<string, unknown>>;
}

/** The cartesian product of the axes, first axis slowest. No axes: one cell with `base`. */
export function buildGrid(axes: readonly SweepAxis[], options: GridOptions = {}): GridCell[] {
  const coerce: Coerce = options.coerce ?? ((_, raw) => raw);
  const problems: SweepProblem[] = [];
  const typed = axes.map((axis) =>
    axis.values.map((raw) => {
      try {
        return coerce(axis.name, raw);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        problems.push({ spec: `${axis.name}=${raw}`, message });
        return undefined;
      }
    }),
  );
  const size = axes.reduce((product, axis) => product * axis.values.length, 1);
  const maxCells = options.maxCells ?? DEFAULT_MAX_CELLS;
  if (size > maxCells) {
    problems.push({
      spec: axes.map((axis) => axis.name).join(' x '),
      message: `the grid has ${size} cells, more than the limit of ${maxCells}`,
    });
  }
  if (problems.length > 0) throw invalid(problems);

  const cells: GridCell[] = [];
  const choice = axes.map(() => 0);
  for (let index = 0; index < size; index++) {
    const parameters: Record<string, unknown> = { ...options.base };
    const raw: Record<string, string> = {};
    const label: string[] = [];
    axes.forEach((axis, position) => {
      const at = choice[position]!;
      parameters[axis.name] = typed[position]![at];
      raw[axis.name] = axis.values[at]!;
      label.push(`${axis.name}=${axis.values[at]}`);
    });
    cells.push({ index, parameters, raw, label: label.join(' ') });
    // Odometer: the last axis turns fastest.
    for (let position = axes.length - 1; position >= 0; position--) {
      const next = choice[position]! + 1;
      if (next < axes[position]!.values.length) {
        choice[position] = next;
        break;
      }
      choice[position] = 0;
    }
  }
  return cells;
}
