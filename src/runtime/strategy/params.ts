/**
 * Params validation: a plugin's params are parsed once, with the plugin's own zod schema, and
 * every problem is reported at once with its path (design rule 8).
 */
import { z } from 'zod';
import { decimalStringMessage, explainConfigIssues } from '../../core/config-messages.ts';
import { isDecimalString, parseDecimal } from '../../core/decimal.ts';
import { PaperbotError } from '../../core/errors.ts';
import type { StrategyDefinition } from './types.ts';

export interface ParamsIssue {
  /** Path inside the params object, e.g. `['markets', 0]`; empty for the object itself. */
  readonly path: readonly (string | number)[];
  readonly message: string;
}

export function formatParamsPath(path: readonly (string | number)[]): string {
  if (path.length === 0) return '(params)';
  return path
    .map((part, index) =>
      typeof part === 'number' ? `[${part}]` : index === 0 ? part : `.${part}`,
    )
    .join('');
}

/**
 * Parses raw params (from a config file; `undefined` reads as `{}`) with the plugin's schema.
 * Throws `STRATEGY_PARAMS_INVALID` listing every issue; `details.issues` holds them as data.
 */
export function parseStrategyParams<Params>(
  definition: StrategyDefinition<Params>,
  raw: unknown,
  label: string = definition.name,
): Params {
  const result = definition.params.safeParse(raw ?? {}, { reportInput: true });
  if (result.success) return result.data;
  const issues: ParamsIssue[] = explainConfigIssues(result.error.issues, definition.params).map(
    (problem) => ({
      path: problem.path.map((part) => (typeof part === 'symbol' ? String(part) : part)),
      message: problem.message,
    }),
  );
  const lines = issues.map((issue) => `  - ${formatParamsPath(issue.path)}: ${issue.message}`);
  throw new PaperbotError(
    'STRATEGY_PARAMS_INVALID',
    `invalid params for strategy ${label} (${issues.length} ${issues.length === 1 ? 'problem' : 'problems'}):\n${lines.join('\n')}`,
    { details: { strategy: label, issues } },
  );
}

/**
 * A params field holding a positive decimal string (`quantity: '0.002'`), refused with the
 * same sentence as every decimal of the config: "must be a positive decimal string such as
 * '0.002'; quote decimals in YAML" for an unquoted number, one problem whatever is wrong.
 */
export function positiveDecimalString(): z.ZodType<string> {
  return z.custom<string>(
    (value) => typeof value === 'string' && isDecimalString(value) && parseDecimal(value).gt(0),
    { error: (issue) => decimalStringMessage('positive', issue.input) },
  );
}
