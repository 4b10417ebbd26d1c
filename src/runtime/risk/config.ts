/**
 * The risk gate's configuration, embedded by the kernel under `risk:` in `config/bot.yaml`.
 *
 * Strict (design rule 8): unknown keys are rejected and every problem is reported at once with
 * its path. Decimals are written as decimal strings; whole numbers may also be plain YAML
 * integers, but a fractional YAML number is refused because it has already been through binary
 * floating point. Decimals are parsed here, once, so evaluation never re-parses config text.
 * Every key is documented in docs/operations.md ("Risk gate").
 */
import { z } from 'zod';
import { type Decimal, isDecimalString, parseDecimal, ZERO } from '../../core/decimal.ts';
import { decimalStringMessage, explainConfigIssues } from '../../core/config-messages.ts';
import { PaperbotError } from '../../core/errors.ts';

function decimalSchema(rule: 'positive' | 'non_negative') {
  const kind = rule === 'positive' ? 'positive' : 'non-negative';
  return z.union([z.string(), z.number()]).transform((value, context): Decimal => {
    let parsed: Decimal;
    if (typeof value === 'number') {
      if (!Number.isSafeInteger(value)) {
        context.addIssue({ code: 'custom', message: decimalStringMessage(kind, value) });
        return z.NEVER;
      }
      parsed = parseDecimal(String(value));
    } else if (!isDecimalString(value)) {
      context.addIssue({ code: 'custom', message: decimalStringMessage(kind, value) });
      return z.NEVER;
    } else {
      parsed = parseDecimal(value);
    }
    if (rule === 'positive' ? parsed.lte(ZERO) : parsed.lt(ZERO)) {
      context.addIssue({ code: 'custom', message: decimalStringMessage(kind, value) });
      return z.NEVER;
    }
    return parsed;
  });
}

const PositiveDecimal = decimalSchema('positive');
const Percent = decimalSchema('positive').refine((value) => value.lte(100), {
  message: 'must be at most 100 (a percentage)',
});
const PositiveInteger = z.number().int().positive();
const Leverage = z.number().int().min(1).max(200);

/** Limits that can be set for all markets and overridden per market. */
const perMarketShape = {
  /** Largest order notional (quantity times limit price, or the mark for a market order). */
  max_order_notional: PositiveDecimal.nullable(),
  /** Largest order quantity in base units. */
  max_order_quantity: PositiveDecimal.nullable(),
  /** Largest absolute position in base units, counting resting orders that add to it. */
  max_position_quantity: PositiveDecimal.nullable(),
  /** Largest absolute position notional at the mark, counting resting orders that add to it. */
  max_position_notional: PositiveDecimal.nullable(),
  /** Largest leverage an order may ask for (the market's own maximum always applies too). */
  max_leverage: Leverage.nullable(),
  /** Most open orders on one market. */
  max_open_orders_per_market: PositiveInteger.nullable(),
  /** How far a limit price may sit from the mark, in percent of the mark. */
  price_band_percent: PositiveDecimal.nullable(),
} as const;

export const RiskMarketOverride = z.strictObject({
  /** `false` refuses new exposure on the market; reducing orders and closes stay allowed. */
  enabled: z.boolean().optional(),
  max_order_notional: perMarketShape.max_order_notional.optional(),
  max_order_quantity: perMarketShape.max_order_quantity.optional(),
  max_position_quantity: perMarketShape.max_position_quantity.optional(),
  max_position_notional: perMarketShape.max_position_notional.optional(),
  max_leverage: perMarketShape.max_leverage.optional(),
  max_open_orders_per_market: perMarketShape.max_open_orders_per_market.optional(),
  price_band_percent: perMarketShape.price_band_percent.optional(),
});
export type RiskMarketOverride = z.infer<typeof RiskMarketOverride>;

export const DailyLossConfig = z
  .strictObject({
    /** Loss since the day started, in the settlement asset, that moves trading to REDUCING. */
    reduce_at: PositiveDecimal.nullable().default(null),
    /** Loss since the day started, in the settlement asset, that moves trading to HALTED. */
    halt_at: PositiveDecimal.nullable().default(null),
    /** Loss in percent of the equity at the day's start that moves trading to REDUCING. */
    reduce_at_percent: Percent.nullable().default(null),
    /** Loss in percent of the equity at the day's start that moves trading to HALTED. */
    halt_at_percent: Percent.nullable().default(null),
  })
  .superRefine((value, context) => {
    checkOrdered(value.reduce_at, value.halt_at, 'reduce_at', context);
    checkOrdered(value.reduce_at_percent, value.halt_at_percent, 'reduce_at_percent', context);
  });
export type DailyLossConfig = z.infer<typeof DailyLossConfig>;

export const DrawdownConfig = z
  .strictObject({
    /** Fall from the peak equity, in percent of the peak, that moves trading to REDUCING. */
    reduce_at_percent: Percent.nullable().default(null),
    /** Fall from the peak equity, in percent of the peak, that moves trading to HALTED. */
    halt_at_percent: Percent.nullable().default(null),
  })
  .superRefine((value, context) => {
    checkOrdered(value.reduce_at_percent, value.halt_at_percent, 'reduce_at_percent', context);
  });
export type DrawdownConfig = z.infer<typeof DrawdownConfig>;

function checkOrdered(
  reduceAt: Decimal | null,
  haltAt: Decimal | null,
  key: string,
  context: z.RefinementCtx,
): void {
  if (reduceAt && haltAt && reduceAt.gt(haltAt)) {
    context.addIssue({
      code: 'custom',
      path: [key],
      message: 'the REDUCING threshold must not be above the HALTED threshold',
    });
  }
}

/** Signals a kill switch may listen on. SIGUSR1 is left out: Node.js reserves it for debugging. */
export const KillSignal = z.enum(['SIGUSR2', 'SIGHUP']);
export type KillSignal = z.infer<typeof KillSignal>;

export const KillSwitchConfig = z.strictObject({
  /** A file whose existence halts trading; `paperbot kill` writes it. `null` disables. */
  file: z.string().min(1).nullable().default('data/paperbot.kill'),
  /** How often the file is checked, in milliseconds of the runtime's clock. */
  poll_ms: z.number().int().min(10).max(60_000).default(1000),
  /** A process signal that halts trading. `null` disables. */
  signal: KillSignal.nullable().default('SIGUSR2'),
});
export type KillSwitchConfig = z.infer<typeof KillSwitchConfig>;

const DAY_START = /^([01]\d|2[0-3]):([0-5]\d)$/;

export const RiskConfig = z.strictObject({
  max_order_notional: perMarketShape.max_order_notional.default(null),
  max_order_quantity: perMarketShape.max_order_quantity.default(null),
  max_position_quantity: perMarketShape.max_position_quantity.default(null),
  max_position_notional: perMarketShape.max_position_notional.default(null),
  max_leverage: perMarketShape.max_leverage.default(null),
  max_open_orders_per_market: perMarketShape.max_open_orders_per_market.default(50),
  price_band_percent: perMarketShape.price_band_percent.prefault('5'),
  /** Sum over markets of the absolute worst-case position at the mark. */
  max_gross_exposure: PositiveDecimal.nullable().default(null),
  /** Gross exposure (as above, after the order) divided by the account equity. */
  max_account_leverage: PositiveDecimal.nullable().default(null),
  /** Most open orders on the account. */
  max_open_orders: PositiveInteger.nullable().default(100),
  /** Order commands (place, amend, close) in any sliding second. */
  max_orders_per_second: PositiveInteger.nullable().default(5),
  /** Order commands (place, amend, close) in any sliding minute. */
  max_orders_per_minute: PositiveInteger.nullable().default(120),
  /** Market data older than this (from the market's `observed_at`) counts as stale. */
  max_market_data_age_ms: PositiveInteger.nullable().default(null),
  /** Whether close_position intents pass while HALTED, so a halted bot can still flatten. */
  halted_allows_closes: z.boolean().default(true),
  /** Whether reduce-only orders pass while HALTED (the venue refuses them any new exposure). */
  halted_allows_reduce_only: z.boolean().default(false),
  daily_loss: DailyLossConfig.prefault({}),
  drawdown: DrawdownConfig.prefault({}),
  /** When the trading day starts, `HH:MM` in UTC; the daily loss counts from there. */
  day_start_utc: z
    .string()
    .regex(DAY_START, 'write the day start as HH:MM in UTC, for example "00:00"')
    .default('00:00'),
  kill_switch: KillSwitchConfig.prefault({}),
  /** Per-market overrides of the per-market limits, keyed by market id. */
  markets: z.record(z.string().min(1), RiskMarketOverride).default({}),
});
export type RiskConfig = z.infer<typeof RiskConfig>;
export type RiskConfigInput = z.input<typeof RiskConfig>;

/** The limits that apply on one market: the global ones with that market's overrides. */
export interface MarketLimits {
  readonly enabled: boolean;
  readonly max_order_notional: Decimal | null;
  readonly max_order_quantity: Decimal | null;
  readonly max_position_quantity: Decimal | null;
  readonly max_position_notional: Decimal | null;
  readonly max_leverage: number | null;
  readonly max_open_orders_per_market: number | null;
  readonly price_band_percent: Decimal | null;
}

/** Merges a market's overrides over the global limits; an override of `null` lifts the limit. */
export function limitsFor(config: RiskConfig, marketId: string): MarketLimits {
  const override = Object.hasOwn(config.markets, marketId) ? config.markets[marketId] : undefined;
  if (!override) {
    return {
      enabled: true,
      max_order_notional: config.max_order_notional,
      max_order_quantity: config.max_order_quantity,
      max_position_quantity: config.max_position_quantity,
      max_position_notional: config.max_position_notional,
      max_leverage: config.max_leverage,
      max_open_orders_per_market: config.max_open_orders_per_market,
      price_band_percent: config.price_band_percent,
    };
  }
  const pick = <K extends keyof typeof perMarketShape>(key: K): RiskConfig[K] =>
    (override[key] === undefined ? config[key] : override[key]) as RiskConfig[K];
  return {
    enabled: override.enabled ?? true,
    max_order_notional: pick('max_order_notional'),
    max_order_quantity: pick('max_order_quantity'),
    max_position_quantity: pick('max_position_quantity'),
    max_position_notional: pick('max_position_notional'),
    max_leverage: pick('max_leverage'),
    max_open_orders_per_market: pick('max_open_orders_per_market'),
    price_band_percent: pick('price_band_percent'),
  };
}

/**
 * Parses a `risk:` section, reporting every problem at once with its path (`INVALID_CONFIG`,
 * `details.issues`). The kernel may instead embed `RiskConfig` in its own schema.
 */
export function parseRiskConfig(raw: unknown): RiskConfig {
  const result = RiskConfig.safeParse(raw ?? {}, { reportInput: true });
  if (result.success) return result.data;
  const issues = explainConfigIssues(result.error.issues, RiskConfig).map((problem) => ({
    path: ['risk', ...problem.path.map(String)].join('.'),
    message: problem.message,
  }));
  throw new PaperbotError(
    'INVALID_CONFIG',
    `invalid risk configuration:\n${issues.map((issue) => `  ${issue.path}: ${issue.message}`).join('\n')}`,
    { details: { issues } },
  );
}

/** The configuration with every default. */
export function defaultRiskConfig(): RiskConfig {
  return RiskConfig.parse({});
}
