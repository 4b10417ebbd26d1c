/**
 * What a backtest hands the report: a plain structure, built in-process by the backtest, so it is
 * typed but not parsed (it never crosses a trust boundary). `checkReportInput` reports every
 * problem at once before anything is computed.
 *
 * Money, prices and quantities are decimal strings (interface rule 1); times are epoch
 * milliseconds of the backtest's virtual clock.
 */
import { isDecimalString, parseDecimal } from '../../core/decimal.ts';
import { PaperbotError } from '../../core/errors.ts';
import type { Fill } from '../../protocol/index.ts';
import type { SeriesPoint } from './series.ts';

/** The account's equity (balance plus unrealized PnL, net of fees paid) at one instant. */
export interface EquitySample {
  readonly t: number;
  readonly equity: string;
}

/**
 * A market's signed position from `t` on (long positive, short negative). A step function: the
 * position holds until the next sample of the same market.
 */
export interface PositionSample {
  readonly t: number;
  readonly marketId: string;
  readonly quantity: string;
}

/** Who ran what, for the report header. Nothing here is computed on. */
export interface ReportMetadata {
  readonly strategy?: string;
  readonly parameters?: Readonly<Record<string, string | number | boolean | null>>;
  /** The recorded sessions replayed (folder names). */
  readonly data?: readonly string[];
  /** When the backtest ran, RFC 3339, passed in by the caller (left out: no "now" in reports). */
  readonly runAt?: string;
}

/** A strategy of the run: what it was configured to trade, and whether it ran. */
export interface StrategyEntry {
  readonly id: string;
  readonly name: string;
  /** The markets its params name (empty: every market of the data). */
  readonly markets: readonly string[];
  /** Markets it names that the data lacks; non-empty only for a strategy that was skipped. */
  readonly missingMarkets: readonly string[];
}

/** Bounded series one market's chart draws (`series.ts`), built while the run goes. */
export interface MarketSeries {
  /** Mark price (last price when the ticker has no mark). */
  readonly price: readonly SeriesPoint[];
  /** Limit prices of the strategies' accepted orders, by side. */
  readonly buyOrders: readonly SeriesPoint[];
  readonly sellOrders: readonly SeriesPoint[];
}

export interface ReportInput {
  /** The settlement asset the money is in, e.g. 'USDC'. */
  readonly currency: string;
  /** Equity at `startMs`, before any fill. Must be positive. */
  readonly startingBalance: string;
  /** The backtest's time range (virtual time). */
  readonly startMs: number;
  readonly endMs: number;
  /**
   * Every fill, as the venue reported it (`Fill` of the protocol). `fee` is what was paid:
   * positive a cost, negative a rebate. Fills are taken in time order, ties in list order.
   */
  readonly fills: readonly Fill[];
  /** Equity over time, in time order. The report's PnL is the last sample minus the start. */
  readonly equity: readonly EquitySample[];
  /** Positions over time; when left out they are rebuilt from the fills, starting flat. */
  readonly positions?: readonly PositionSample[];
  readonly metadata?: ReportMetadata;
  /** The strategy id behind each fill, by `fill_id` (fills of no strategy are left out). */
  readonly fillStrategies?: ReadonlyMap<string, string>;
  /** The run's strategies, skipped ones included. */
  readonly strategies?: readonly StrategyEntry[];
  /** Per market id: price and order series for its chart. */
  readonly marketSeries?: ReadonlyMap<string, MarketSeries>;
}

export interface InputProblem {
  readonly path: string;
  readonly message: string;
}

/** Fill times in epoch ms (RFC 3339 parsed once, here). */
export function fillTime(fill: Fill): number {
  return Date.parse(fill.occurred_at);
}

/** Every problem with the input, or [] when it can be reported on. */
export function reportInputProblems(input: ReportInput): InputProblem[] {
  const problems: InputProblem[] = [];
  const decimal = (path: string, value: unknown): void => {
    if (typeof value !== 'string' || !isDecimalString(value)) {
      problems.push({ path, message: 'must be a decimal string' });
    }
  };
  decimal('startingBalance', input.startingBalance);
  if (
    typeof input.startingBalance === 'string' &&
    isDecimalString(input.startingBalance) &&
    parseDecimal(input.startingBalance).lte(0)
  ) {
    problems.push({ path: 'startingBalance', message: 'must be positive' });
  }
  if (!Number.isSafeInteger(input.startMs)) {
    problems.push({ path: 'startMs', message: 'must be an integer' });
  }
  if (!Number.isSafeInteger(input.endMs) || input.endMs < input.startMs) {
    problems.push({
      path: 'endMs',
      message: 'must be an integer not before startMs',
    });
  }
  input.fills.forEach((fill, index) => {
    const path = `fills.${index}`;
    decimal(`${path}.quantity`, fill.quantity);
    decimal(`${path}.price`, fill.price);
    decimal(`${path}.fee`, fill.fee);
    if (fill.side !== 'buy' && fill.side !== 'sell') {
      problems.push({ path: `${path}.side`, message: 'must be buy or sell' });
    }
    if (isDecimalString(fill.quantity) && parseDecimal(fill.quantity).lte(0)) {
      problems.push({ path: `${path}.quantity`, message: 'must be positive' });
    }
    if (Number.isNaN(fillTime(fill))) {
      problems.push({
        path: `${path}.occurred_at`,
        message: 'must be an RFC 3339 time',
      });
    }
  });
  // Samples: a decimal each, at integer times in time order.
  const samples = <T extends { readonly t: number }>(
    list: string,
    items: readonly T[],
    field: string,
    value: (sample: T) => unknown,
  ) => {
    let previous = Number.NEGATIVE_INFINITY;
    items.forEach((sample, index) => {
      decimal(`${list}.${index}.${field}`, value(sample));
      if (!Number.isSafeInteger(sample.t) || sample.t < previous) {
        problems.push({ path: `${list}.${index}.t`, message: 'must be an integer, in time order' });
      }
      previous = sample.t;
    });
  };
  samples('equity', input.equity, 'equity', (sample) => sample.equity);
  samples('positions', input.positions ?? [], 'quantity', (sample) => sample.quantity);
  return problems;
}

export function checkReportInput(input: ReportInput): void {
  const problems = reportInputProblems(input);
  if (problems.length > 0) {
    throw new PaperbotError(
      'INVALID_REPORT_INPUT',
      `the backtest result cannot be reported on: ${problems
        .map((problem) => `${problem.path}: ${problem.message}`)
        .join('; ')}`,
      { details: { problems } },
    );
  }
}
