/**
 * Trigger evaluation, pure: given an exit's rule, its side, its trailing memory and one
 * observed price, does it fire, and what does it remember? A price exactly at the level fires;
 * a price that gaps through it fires too (the released order then trades at the market, or at
 * its limit). A trailing level only ever moves in the position's favour.
 */
import { type Decimal, parseDecimal, toWire } from '../../core/decimal.ts';
import type { Side } from '../intents.ts';
import type { TrailingState, TriggerRule, TriggerSource } from './types.ts';

const HUNDRED = parseDecimal('100');

export interface PriceObservation {
  readonly mark?: Decimal | undefined;
  readonly last?: Decimal | undefined;
  readonly bid?: Decimal | undefined;
  readonly ask?: Decimal | undefined;
}

/** The price an exit of `side` watches under `source`; undefined when it is not known yet. */
export function observedPrice(
  source: TriggerSource,
  side: Side,
  observation: PriceObservation,
): Decimal | undefined {
  switch (source) {
    case 'mark':
      return observation.mark;
    case 'last':
      return observation.last;
    case 'bid_ask':
      return side === 'sell' ? observation.bid : observation.ask;
  }
}

export interface Evaluation {
  readonly fired: boolean;
  readonly trailing: TrailingState | null;
}

/** The trailing stop's level for a best price `extreme` (sell: below it, buy: above it). */
export function trailingLevel(
  rule: Extract<TriggerRule, { kind: 'trailing' }>,
  side: Side,
  extreme: Decimal,
): Decimal {
  const distance =
    rule.offset !== undefined
      ? parseDecimal(rule.offset)
      : extreme.times(parseDecimal(rule.offsetPercent ?? '0')).div(HUNDRED);
  return side === 'sell' ? extreme.minus(distance) : extreme.plus(distance);
}

/** The level the exit fires at now; null for a trailing stop not yet active. */
export function triggerLevel(
  rule: TriggerRule,
  side: Side,
  trailing: TrailingState | null,
): Decimal | null {
  if (rule.kind !== 'trailing') return parseDecimal(rule.price);
  if (trailing === null || !trailing.active || trailing.extreme === null) return null;
  return trailingLevel(rule, side, parseDecimal(trailing.extreme));
}

/** Whether `price` is at or beyond `level` in the direction that fires a stop of `side`. */
function reachesStop(side: Side, price: Decimal, level: Decimal): boolean {
  return side === 'sell' ? price.lte(level) : price.gte(level);
}

/** Whether `price` is at or beyond `level` in the position's favour (take-profit, activation). */
function reachesProfit(side: Side, price: Decimal, level: Decimal): boolean {
  return side === 'sell' ? price.gte(level) : price.lte(level);
}

/** A trailing stop's starting memory. */
export function initialTrailing(rule: TriggerRule): TrailingState | null {
  if (rule.kind !== 'trailing') return null;
  return { active: false, extreme: null };
}

/** Evaluates one observed price. */
export function evaluate(
  rule: TriggerRule,
  side: Side,
  trailing: TrailingState | null,
  price: Decimal,
): Evaluation {
  switch (rule.kind) {
    case 'stop':
      return { fired: reachesStop(side, price, parseDecimal(rule.price)), trailing: null };
    case 'take_profit':
      return { fired: reachesProfit(side, price, parseDecimal(rule.price)), trailing: null };
    case 'trailing':
      return evaluateTrailing(rule, side, trailing ?? { active: false, extreme: null }, price);
  }
}

function evaluateTrailing(
  rule: Extract<TriggerRule, { kind: 'trailing' }>,
  side: Side,
  state: TrailingState,
  price: Decimal,
): Evaluation {
  if (!state.active) {
    const activation = rule.activationPrice;
    if (activation !== undefined && !reachesProfit(side, price, parseDecimal(activation))) {
      return { fired: false, trailing: state };
    }
    // Activation starts the memory at this price; the same tick cannot fire it.
    return { fired: false, trailing: { active: true, extreme: toWire(price) } };
  }
  const previous = state.extreme === null ? price : parseDecimal(state.extreme);
  const better = side === 'sell' ? price.gt(previous) : price.lt(previous);
  const extreme = better ? price : previous;
  const level = trailingLevel(rule, side, extreme);
  const fired = !better && reachesStop(side, price, level);
  const kept = better ? { active: true, extreme: toWire(extreme) } : state;
  return { fired, trailing: kept };
}

/**
 * How far the price is from firing, signed so that positive means "not yet": the distance a
 * sell stop's price has left to fall, a take-profit's left to rise, and so on. Null when there
 * is no level yet (a trailing stop before activation).
 */
export function distanceToTrigger(
  rule: TriggerRule,
  side: Side,
  trailing: TrailingState | null,
  price: Decimal,
): Decimal | null {
  const level = triggerLevel(rule, side, trailing);
  if (level === null) return null;
  const towardsStop = side === 'sell' ? price.minus(level) : level.minus(price);
  return rule.kind === 'take_profit' ? towardsStop.times(-1) : towardsStop;
}
