/**
 * Daily loss and drawdown, as pure functions of the equity seen so far. The gate feeds them
 * equity updates and moves the trading state on what they report.
 *
 * - Daily loss is the fall of equity since the trading day began (`day_start_utc` on the
 *   runtime's clock): the equity at the boundary, or the first equity seen that day.
 * - Drawdown is the fall from the highest equity seen since tracking began (or since the last
 *   `resume()`, which takes the drawdown so far as accepted), in percent of that peak.
 * A limit is reached when the figure equals or passes it.
 */
import { Big, type Decimal, maxDecimal, parseDecimal, toWire, ZERO } from '../../core/decimal.ts';
import type { RiskConfig } from './config.ts';

const DAY_MS = 86_400_000;
const HUNDRED = parseDecimal('100');

function dayOffsetMs(dayStartUtc: string): number {
  const [hours, minutes] = dayStartUtc.split(':').map(Number);
  return ((hours ?? 0) * 60 + (minutes ?? 0)) * 60_000;
}

/** Epoch milliseconds at which the trading day holding `now` began. */
export function tradingDayStart(now: number, dayStartUtc: string): number {
  const offset = dayOffsetMs(dayStartUtc);
  return Math.floor((now - offset) / DAY_MS) * DAY_MS + offset;
}

/** Epoch milliseconds at which the next trading day begins. */
export function nextTradingDayStart(now: number, dayStartUtc: string): number {
  return tradingDayStart(now, dayStartUtc) + DAY_MS;
}

/** Loss tracking with its equities as `T`: decimals in the gate, text in the journal. */
interface EquityTracking<T> {
  /** Start of the trading day the daily loss counts from. */
  readonly dayStartedAt: number;
  readonly dayStartEquity: T | null;
  readonly peakEquity: T | null;
  readonly lastEquity: T | null;
}

export type LossTracking = EquityTracking<Decimal>;

/** LossTracking as plain JSON, for the journal across restarts (so a restart resets nothing). */
export type LossTrackingRecord = EquityTracking<string>;

function convertEquities<A, B>(
  tracking: EquityTracking<A>,
  convert: (value: A) => B,
): EquityTracking<B> {
  const each = (value: A | null) => (value === null ? null : convert(value));
  return {
    dayStartedAt: tracking.dayStartedAt,
    dayStartEquity: each(tracking.dayStartEquity),
    peakEquity: each(tracking.peakEquity),
    lastEquity: each(tracking.lastEquity),
  };
}

export function lossTrackingToRecord(tracking: LossTracking): LossTrackingRecord {
  return convertEquities(tracking, toWire);
}

export function lossTrackingFromRecord(record: LossTrackingRecord): LossTracking {
  return convertEquities(record, parseDecimal);
}

/** Tracking as it stands after a new equity figure at `now` (rolling the day first if due). */
export function trackEquity(
  tracking: LossTracking,
  equity: Decimal,
  now: number,
  dayStartUtc: string,
): LossTracking {
  const rolled = rollTradingDay(tracking, now, dayStartUtc);
  return {
    dayStartedAt: rolled.dayStartedAt,
    dayStartEquity: rolled.dayStartEquity ?? equity,
    peakEquity: rolled.peakEquity ? maxDecimal(rolled.peakEquity, equity) : equity,
    lastEquity: equity,
  };
}

/**
 * Starts a new trading day when `now` has reached one: the day's starting equity becomes the
 * last equity seen (the best estimate of the equity at the boundary). Unchanged otherwise.
 */
export function rollTradingDay(
  tracking: LossTracking,
  now: number,
  dayStartUtc: string,
): LossTracking {
  const dayStartedAt = tradingDayStart(now, dayStartUtc);
  if (dayStartedAt <= tracking.dayStartedAt) return tracking;
  return { ...tracking, dayStartedAt, dayStartEquity: tracking.lastEquity };
}

export type LossSource = 'daily_loss' | 'drawdown';

export interface LossBreach {
  readonly source: LossSource;
  readonly state: 'REDUCING' | 'HALTED';
  /** The configuration key whose limit was reached, for example `daily_loss.halt_at`. */
  readonly rule: string;
  readonly limit: string;
  readonly observed: string;
  readonly reason: string;
}

/** The most severe limit reached per source (at most one daily loss and one drawdown breach). */
export function lossBreaches(tracking: LossTracking, config: RiskConfig): LossBreach[] {
  const breaches: LossBreach[] = [];
  const { lastEquity, dayStartEquity, peakEquity } = tracking;
  if (lastEquity === null) return breaches;

  if (dayStartEquity !== null) {
    const loss = dayStartEquity.minus(lastEquity);
    const daily = config.daily_loss;
    const candidates: Candidate[] = [
      ['daily_loss.halt_at', 'HALTED', daily.halt_at, loss, null],
      ['daily_loss.halt_at_percent', 'HALTED', daily.halt_at_percent, loss, dayStartEquity],
      ['daily_loss.reduce_at', 'REDUCING', daily.reduce_at, loss, null],
      ['daily_loss.reduce_at_percent', 'REDUCING', daily.reduce_at_percent, loss, dayStartEquity],
    ];
    const breach = firstBreach('daily_loss', 'daily loss', candidates);
    if (breach) breaches.push(breach);
  }

  if (peakEquity !== null) {
    const fall = peakEquity.minus(lastEquity);
    const drawdown = config.drawdown;
    const candidates: Candidate[] = [
      ['drawdown.halt_at_percent', 'HALTED', drawdown.halt_at_percent, fall, peakEquity],
      ['drawdown.reduce_at_percent', 'REDUCING', drawdown.reduce_at_percent, fall, peakEquity],
    ];
    const breach = firstBreach(
      'drawdown',
      `drawdown from the peak ${toWire(peakEquity)}`,
      candidates,
    );
    if (breach) breaches.push(breach);
  }
  return breaches;
}

/** [rule, state, limit, amount, base]: a percent limit when `base` is set, else an amount. */
type Candidate = [string, 'REDUCING' | 'HALTED', Decimal | null, Decimal, Decimal | null];

/** The first candidate (most severe first) whose limit is reached, compared exactly. */
function firstBreach(source: LossSource, what: string, candidates: Candidate[]): LossBreach | null {
  for (const [rule, state, limit, amount, base] of candidates) {
    if (limit === null) continue;
    if (base === null) {
      if (amount.lt(limit)) continue;
      return {
        source,
        state,
        rule,
        limit: toWire(limit),
        observed: toWire(amount),
        reason: `${what} ${toWire(amount)} reached ${rule} ${toWire(limit)}`,
      };
    }
    // Percent of a positive base; compared as amount * 100 >= limit * base, without division.
    if (base.lte(ZERO) || amount.times(HUNDRED).lt(limit.times(base))) continue;
    const percent = amount.times(HUNDRED).div(base).round(4, Big.roundDown);
    return {
      source,
      state,
      rule,
      limit: toWire(limit),
      observed: toWire(percent),
      reason: `${what} ${toWire(percent)}% reached ${rule} ${toWire(limit)}%`,
    };
  }
  return null;
}
