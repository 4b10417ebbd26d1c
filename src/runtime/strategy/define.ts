/**
 * `defineStrategy`: how a plugin declares itself. The params schema is the plugin's config
 * contract: it is applied once, when the strategy is loaded, and its defaults are what `{}`
 * means.
 */
import type { Observable } from 'rxjs';
import type { z } from 'zod';
import { PaperbotError } from '../../core/errors.ts';
import type { OrderIntent } from '../intents.ts';
import type { CandleHistoryRequest, StrategyContext, StrategyDefinition } from './types.ts';

/**
 * Marks objects made by `defineStrategy`. A registered symbol, so a definition is recognised
 * even when the plugin reached the runtime through another copy of this module.
 */
const STRATEGY_DEFINITION = Symbol.for('paperbot.strategy-definition');

export const STRATEGY_NAME_PATTERN = /^[a-z0-9][a-z0-9-]*$/;

export interface StrategyDeclaration<Schema extends z.ZodType> {
  /** Lower case letters, digits and '-', like the plugin's folder. */
  readonly name: string;
  readonly description?: string;
  readonly params: Schema;
  /**
   * Candles to load before `create` runs, per market and interval, from the params: live from
   * the venue's candle history, in a replay from the recording's. `ctx.candles$` then starts
   * with them, so indicators are warm from the first live candle.
   */
  readonly candleHistory?: (params: z.output<Schema>) => readonly CandleHistoryRequest[];
  create(
    context: StrategyContext<z.output<Schema>>,
    params: z.output<Schema>,
  ): Observable<OrderIntent>;
}

export function defineStrategy<Schema extends z.ZodType>(
  declaration: StrategyDeclaration<Schema>,
): StrategyDefinition<z.output<Schema>> {
  if (!STRATEGY_NAME_PATTERN.test(declaration.name)) {
    throw new PaperbotError(
      'STRATEGY_INVALID_NAME',
      `strategy name ${JSON.stringify(declaration.name)} must match ${STRATEGY_NAME_PATTERN}`,
    );
  }
  const definition: StrategyDefinition<z.output<Schema>> = {
    name: declaration.name,
    description: declaration.description ?? '',
    // A schema's output type is its params type; zod's generic cannot say so on its own.
    params: declaration.params as unknown as z.ZodType<z.output<Schema>>,
    create: (context, params) => declaration.create(context, params),
    ...(declaration.candleHistory === undefined
      ? {}
      : { candleHistory: declaration.candleHistory }),
  };
  Object.defineProperty(definition, STRATEGY_DEFINITION, { value: true });
  return Object.freeze(definition);
}

export function isStrategyDefinition(value: unknown): value is StrategyDefinition {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[STRATEGY_DEFINITION] === true
  );
}
