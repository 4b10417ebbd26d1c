/**
 * The replay venue's settings (the `venue:` section of config/backtest.yaml) and the emulator
 * configuration the replay's engine is built from.
 *
 * The engine needs what a recording does not carry: fee rates and maintenance margin rates. They
 * come from an emulator configuration (`emulator_config`, the built-in defaults when null): a
 * recorded market with the same id takes that market's rates, any other market the global fee
 * schedule and a maintenance rate of half the initial margin at maximum leverage. `fees` and
 * `markets.<id>` override both. Slippage is charged as extra taker fee (see docs/backtesting.md,
 * "The fill model").
 */
import { z } from 'zod';
import { parseDecimal, toWire } from '../../core/decimal.ts';
import { PaperbotError } from '../../core/errors.ts';
import {
  defaultEmulatorConfig,
  type EmulatorConfig,
  type EmulatorConfigInput,
  loadEmulatorConfig,
  parseEmulatorConfig,
  SelfTradePrevention,
} from '../../emulator/index.ts';
import type { Market } from '../../protocol/index.ts';

const DECIMAL = /^(?:\d+(?:\.\d*)?|\.\d+)$/;

const DecimalText = z
  .string({ error: "write decimals as quoted strings, for example '0.5'" })
  .regex(DECIMAL, 'expected a non-negative decimal string such as "0.5"');

function decimalsOf(text: string): number {
  return (text.split('.')[1] ?? '').replace(/0+$/, '').length;
}

const Rate = DecimalText.refine((text) => decimalsOf(text) <= 6, {
  message: 'rates have at most 6 decimals',
});

export const FeeRates = z.strictObject({
  maker_rate: Rate,
  taker_rate: Rate,
});
export type FeeRates = z.infer<typeof FeeRates>;

export const MarketOverride = z.strictObject({
  maker_rate: Rate.optional(),
  taker_rate: Rate.optional(),
  maintenance_margin_rate: Rate.optional(),
});
export type MarketOverride = z.infer<typeof MarketOverride>;

const Milliseconds = z.int().min(0).max(3_600_000);

/** A delay distribution: 2 to 101 quantiles in ms at equal steps, never decreasing. */
export const LatencyQuantiles = z
  .array(Milliseconds)
  .min(2, 'give at least two quantiles (the 0 and 1 quantiles)')
  .max(101, 'at most 101 quantiles')
  .refine((values) => values.every((value, index) => index === 0 || value >= values[index - 1]!), {
    message: 'quantiles must not decrease',
  });

export const LatencyConfig = z.strictObject({
  /** From the moment a command is sent to the moment the venue applies it. */
  order_ms: Milliseconds.default(20),
  /** From the venue applying a command to its response reaching the bot. */
  response_ms: Milliseconds.default(20),
  /** From the venue's event (order status, fill, position, account) to the bot. */
  event_ms: Milliseconds.default(20),
  /** Reads (orders, positions, account, requests): the whole round trip. */
  read_ms: Milliseconds.default(0),
  /** Uniform extra delay in [0, jitter_ms] on each command leg, from the seeded generator. */
  jitter_ms: Milliseconds.default(0),
  /**
   * Measured distributions (`paperbot calibrate`), each leg's delay as quantiles at equal
   * probability steps from 0 to 1 (two values: uniform between them); a leg given here draws
   * its delay from it (seeded) instead of `<leg>_ms` plus jitter.
   */
  distribution: z
    .strictObject({
      order_ms: LatencyQuantiles.optional(),
      response_ms: LatencyQuantiles.optional(),
      event_ms: LatencyQuantiles.optional(),
    })
    .nullable()
    .default(null),
});
export type LatencyConfig = z.infer<typeof LatencyConfig>;

const Bps = DecimalText.refine((text) => decimalsOf(text) <= 2, {
  message: 'at most 2 decimals',
}).refine((text) => parseDecimal(text).lte(1000), { message: 'at most 1000 basis points' });

/** How a market's orders find liquidity: the recorded book, or the next recorded trade. */
export const FillModelName = z.enum(['book', 'taker']);
export type FillModelName = z.infer<typeof FillModelName>;

/** The taker model of data without a book (docs/backtesting.md, "Fills without a book"). */
export const TakerModelConfig = z.strictObject({
  /** Half the assumed spread: a buy fills this far above the next trade's price, a sell below. */
  half_spread_bps: Bps.default('0'),
  /** Further price impact, in the same direction as the half-spread. */
  slippage_bps: Bps.default('0'),
  /** The share of each trade's quantity the account's orders may take together, in (0, 1]. */
  max_volume_share: DecimalText.refine((text) => decimalsOf(text) <= 6, {
    message: 'at most 6 decimals',
  })
    .refine((text) => parseDecimal(text).gt(0) && parseDecimal(text).lte(1), {
      message: 'must be above 0 and at most 1',
    })
    .default('1'),
});
export type TakerModelConfig = z.infer<typeof TakerModelConfig>;

export const FillModelConfig = z.strictObject({
  /** auto: the book model for a market whose recording has book snapshots, taker otherwise. */
  model: z.enum(['auto', 'book', 'taker']).default('auto'),
  /** Per-market choice, by market id, over `model`. */
  markets: z.record(z.string(), FillModelName).default({}),
  taker: TakerModelConfig.prefault({}),
});
export type FillModelConfig = z.infer<typeof FillModelConfig>;

/**
 * The fill model of each market: the per-market choice, else `model`, where `auto` is the book
 * model when the recording has book snapshots of the market (or when that is not known).
 */
export function fillModelOf(
  config: FillModelConfig,
  marketId: string,
  bookedMarkets: ReadonlySet<string> | null,
): FillModelName {
  const chosen = config.markets[marketId] ?? config.model;
  if (chosen !== 'auto') return chosen;
  return bookedMarkets === null || bookedMarkets.has(marketId) ? 'book' : 'taker';
}

export const ReplayVenueConfig = z.strictObject({
  /** pUSDC the simulated account starts with. */
  starting_balance: DecimalText.refine((text) => parseDecimal(text).gt(0), {
    message: 'must be greater than zero',
  }).default('10000'),
  /** An emulator config (YAML) whose fee and maintenance margin rates apply; null: built-in. */
  emulator_config: z.string().min(1).nullable().default(null),
  /** Fee rates for every market, overriding the emulator config's. */
  fees: FeeRates.nullable().default(null),
  /** Per-market overrides, by market id. */
  markets: z.record(z.string(), MarketOverride).default({}),
  latency: LatencyConfig.prefault({}),
  /** Extra cost of taker fills in basis points of notional (at most 2 decimals). */
  slippage_bps: DecimalText.refine((text) => decimalsOf(text) <= 2, {
    message: 'at most 2 decimals',
  }).default('0'),
  /**
   * true: a resting order waits behind the displayed quantity at its price. false: it fills as
   * soon as a recorded trade reaches its price (optimistic, for comparison).
   */
  queue_position: z.boolean().default(true),
  /**
   * Self-trade prevention of the replay's engine (`cancel_incoming`, `cancel_resting` or
   * `cancel_both`, as in the emulator config); null: the emulator config's.
   */
  self_trade_prevention: SelfTradePrevention.nullable().default(null),
  /** Which fill model each market uses, and the taker model's settings. */
  fill_model: FillModelConfig.prefault({}),
});
export type ReplayVenueConfig = z.infer<typeof ReplayVenueConfig>;
export type ReplayVenueConfigInput = z.input<typeof ReplayVenueConfig>;

export function parseReplayVenueConfig(input: unknown): ReplayVenueConfig {
  const parsed = ReplayVenueConfig.safeParse(input ?? {});
  if (!parsed.success) {
    throw new PaperbotError(
      'INVALID_CONFIG',
      `invalid replay venue config: ${parsed.error.issues
        .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
        .join('; ')}`,
      {
        details: {
          issues: parsed.error.issues.map((issue) => ({
            path: issue.path.map((part) => (typeof part === 'symbol' ? String(part) : part)),
            message: issue.message,
          })),
        },
      },
    );
  }
  return parsed.data;
}

/** The quoter ids the recorded book is posted under, one per side. */
export const RECORDED_BIDS = 'recorded-bids';
export const RECORDED_ASKS = 'recorded-asks';

const MARGIN_MODES = ['cross', 'isolated'] as const;

function fallbackMaintenanceRate(maximumLeverage: number): string {
  // Half the initial margin at maximum leverage: always above 0 and below 1 / leverage.
  const units = Math.floor(1_000_000 / (2 * maximumLeverage));
  return toWire(parseDecimal(String(Math.max(1, units))).div(1_000_000));
}

function withSlippage(takerRate: string, slippageBps: string): string {
  return toWire(parseDecimal(takerRate).plus(parseDecimal(slippageBps).div(10_000)));
}

/** The base emulator config the fee and maintenance rates are read from. */
export function baseEmulatorConfig(config: ReplayVenueConfig): EmulatorConfig {
  return config.emulator_config === null
    ? defaultEmulatorConfig()
    : loadEmulatorConfig(config.emulator_config);
}

/**
 * The engine configuration of a replay: the recorded markets with their grids and limits, the
 * rates described above, no simulation (recorded data drives the engine) and no submission
 * delay (the venue applies its own latency before a command reaches the engine).
 */
export function replayEngineConfig(
  markets: readonly Market[],
  config: ReplayVenueConfig,
  seed: string | number,
  base: EmulatorConfig = baseEmulatorConfig(config),
): EmulatorConfig {
  const problems: string[] = [];
  const known = new Map(base.markets.map((market) => [market.market_id, market]));
  const marketInputs = markets.flatMap((market) => {
    if (market.price_tick === null || market.quantity_step === null) {
      problems.push(`${market.market_id}: the recording has no price_tick or quantity_step`);
      return [];
    }
    const override = config.markets[market.market_id] ?? {};
    const emulated = known.get(market.market_id);
    const leverage = Math.max(1, Math.min(200, market.maximum_leverage ?? 1));
    const baseFees = config.fees ?? emulated?.fees ?? base.fees;
    const makerRate = override.maker_rate ?? baseFees.maker_rate;
    const takerRate = withSlippage(override.taker_rate ?? baseFees.taker_rate, config.slippage_bps);
    const modes = (market.margin_modes ?? [...MARGIN_MODES]).filter(
      (mode): mode is (typeof MARGIN_MODES)[number] =>
        (MARGIN_MODES as readonly string[]).includes(mode),
    );
    const initialPrice = market.mark_price ?? market.index_price ?? market.price_tick;
    return [
      {
        market_id: market.market_id,
        display_name: market.display_name,
        base_asset: market.base_asset,
        quote_asset: market.quote_asset,
        category: market.category,
        status: market.status,
        price_tick: market.price_tick,
        quantity_step: market.quantity_step,
        minimum_quantity: market.minimum_quantity,
        minimum_notional: market.minimum_notional,
        maximum_leverage: leverage,
        margin_modes: modes.length > 0 ? modes : [...MARGIN_MODES],
        maintenance_margin_rate:
          override.maintenance_margin_rate ??
          emulated?.maintenance_margin_rate ??
          fallbackMaintenanceRate(leverage),
        fees: { maker_rate: makerRate, taker_rate: takerRate },
        simulation: {
          initial_price: parseDecimal(initialPrice).gt(0) ? initialPrice : market.price_tick,
          makers: { level_quantity: market.quantity_step },
          takers: null,
        },
      },
    ];
  });
  for (const id of Object.keys(config.markets)) {
    if (!markets.some((market) => market.market_id === id)) {
      problems.push(`venue.markets.${id}: no such market in the recording`);
    }
  }
  for (const id of Object.keys(config.fill_model.markets)) {
    if (!markets.some((market) => market.market_id === id)) {
      problems.push(`venue.fill_model.markets.${id}: no such market in the recording`);
    }
  }
  if (marketInputs.length === 0)
    problems.push('the recording lists no market that can be replayed');
  if (problems.length > 0) {
    throw new PaperbotError('INVALID_CONFIG', `cannot replay: ${problems.join('; ')}`, {
      details: { problems },
    });
  }
  const input: EmulatorConfigInput = {
    seed,
    starting_balance: config.starting_balance,
    fees: base.fees,
    route: base.route,
    latency: { submit_ms: 0 },
    self_trade_prevention: config.self_trade_prevention ?? base.self_trade_prevention,
    simulation: { enabled: false, step_ms: base.simulation.step_ms },
    retention: { trades: 100, candles: 1 },
    markets: marketInputs,
  };
  return parseEmulatorConfig(input);
}
