/**
 * The emulator's configuration: markets, fees, starting balance, order latency, retention and
 * the market simulation. Strict (unknown keys refused) and checked whole before anything starts,
 * every problem reported with its path (design rule 8). Decimal values (prices, quantities,
 * money, rates) are written as quoted strings, so none of them passes through a binary float;
 * model parameters of the random price process (volatility, probabilities) are plain numbers.
 *
 * `config/emulator.yaml` documents every field with the defaults below.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { type ConfigProblem, explainConfigIssues } from '../core/config-messages.ts';
import { isPaperbotError, PaperbotError } from '../core/errors.ts';
import { parseWireProfile, type WireProfile } from '../signing/index.ts';
import { parseScaled } from './engine/fixed.ts';

const DECIMAL = /^(?:\d+(?:\.\d*)?|\.\d+)$/;

function decimalsOf(text: string): number {
  const fraction = text.split('.')[1] ?? '';
  return fraction.replace(/0+$/, '').length;
}

/** A non-negative decimal string (YAML must quote it, so it never becomes a float). */
const DecimalText = z
  .string({ error: "write decimals as quoted strings, for example '0.5'" })
  .regex(DECIMAL, 'expected a non-negative decimal string such as "0.5"');

const PositiveDecimalText = DecimalText.refine((text) => (parseScaled(text, 18) ?? 0n) > 0n, {
  message: 'must be greater than zero',
});

const Rate = DecimalText.refine((text) => decimalsOf(text) <= 6, {
  message: 'rates have at most 6 decimals',
});

const FeeSchedule = z.strictObject({
  /** Paid by the resting side of an execution; may be zero. */
  maker_rate: Rate,
  /** Paid by the incoming side. */
  taker_rate: Rate,
});
export type FeeSchedule = z.infer<typeof FeeSchedule>;

const MakerSimulation = z.strictObject({
  /** Price levels quoted on each side. */
  levels: z.int().min(1).max(200).default(10),
  /** Distance in ticks from the mark price to the best bid and to the best ask. */
  spread_ticks: z.int().min(1).default(2),
  /** Distance in ticks between consecutive levels. */
  level_spacing_ticks: z.int().min(1).default(2),
  /** Quantity quoted at the best level; deeper levels grow by `depth_growth` each. */
  level_quantity: PositiveDecimalText,
  depth_growth: z.number().min(0).max(10).default(0.25),
  /** Random variation of each level's quantity, as a fraction of it (0 = none). */
  quantity_jitter: z.number().min(0).max(0.99).default(0.3),
});

const TakerSimulation = z.strictObject({
  /** Chance, at each simulation step, that a synthetic taker sends a market order. */
  probability_per_step: z.number().min(0).max(1).default(0.5),
  minimum_quantity: PositiveDecimalText,
  maximum_quantity: PositiveDecimalText,
  /** The takers' price bound, in ticks beyond the best opposite price. */
  maximum_slippage_ticks: z.int().min(0).default(20),
});

const MarketSimulation = z.strictObject({
  initial_price: PositiveDecimalText,
  /** Standard deviation of the index's daily log return (0.03 = 3 % a day). */
  daily_volatility: z.number().min(0).max(5).default(0.03),
  /** Pull of the index back to `initial_price`, per day, on the log price (0 = a pure walk). */
  mean_reversion_per_day: z.number().min(0).max(100).default(0.5),
  /** Standard deviation of the mark's premium over the index, in basis points. */
  basis_volatility_bps: z.number().min(0).max(1000).default(2),
  makers: MakerSimulation,
  /** Null: the market is quoted but nobody trades on it (no trades, no candles). */
  takers: TakerSimulation.nullable().default(null),
});

export const MarketConfig = z
  .strictObject({
    market_id: z.string().min(3).max(40),
    display_name: z.string().min(1),
    base_asset: z.string().min(1),
    quote_asset: z.string().min(1).default('pUSDC'),
    category: z.string().min(1).default('perpetual'),
    status: z.string().min(1).default('active'),
    price_tick: PositiveDecimalText,
    quantity_step: PositiveDecimalText,
    minimum_quantity: PositiveDecimalText.nullable().default(null),
    minimum_notional: PositiveDecimalText.nullable().default(null),
    maximum_leverage: z.int().min(1).max(200),
    margin_modes: z
      .array(z.enum(['cross', 'isolated']))
      .min(1)
      .refine((modes) => new Set(modes).size === modes.length, {
        message: 'duplicate margin mode',
      }),
    /** Maintenance margin as a fraction of position value; must be below 1 / maximum_leverage. */
    maintenance_margin_rate: Rate,
    /** Overrides the global fee schedule for this market. */
    fees: FeeSchedule.nullable().default(null),
    simulation: MarketSimulation,
  })
  .superRefine((market, context) => {
    const priceDecimals = decimalsOf(market.price_tick);
    const stepDecimals = decimalsOf(market.quantity_step);
    // price × quantity × rate must stay exact at 18 decimals (rates carry at most 6).
    if (priceDecimals + stepDecimals > 12) {
      context.addIssue({
        code: 'custom',
        path: ['quantity_step'],
        message: 'price_tick and quantity_step together may carry at most 12 decimals',
      });
    }
    const mmr = parseScaled(market.maintenance_margin_rate, 18) ?? 0n;
    if (mmr <= 0n || mmr * BigInt(market.maximum_leverage) >= 10n ** 18n) {
      context.addIssue({
        code: 'custom',
        path: ['maintenance_margin_rate'],
        message: 'must be above 0 and below 1 / maximum_leverage',
      });
    }
    const takers = market.simulation.takers;
    if (takers) {
      const minimum = parseScaled(takers.minimum_quantity, 18) ?? 0n;
      const maximum = parseScaled(takers.maximum_quantity, 18) ?? 0n;
      if (maximum < minimum) {
        context.addIssue({
          code: 'custom',
          path: ['simulation', 'takers', 'maximum_quantity'],
          message: 'must not be below minimum_quantity',
        });
      }
    }
  });
export type MarketConfig = z.infer<typeof MarketConfig>;

/**
 * What happens when an account's incoming order would trade with its own resting order:
 * `cancel_incoming` (Binance's default, EXPIRE_TAKER) cancels the rest of the incoming order,
 * `cancel_resting` cancels the resting order and matching goes on, `cancel_both` cancels both.
 */
export const SelfTradePrevention = z.enum(['cancel_incoming', 'cancel_resting', 'cancel_both']);
export type SelfTradePrevention = z.infer<typeof SelfTradePrevention>;

export const EmulatorConfig = z
  .strictObject({
    /** Seeds every random choice; the same seed and clock moves replay the same run. */
    seed: z.union([z.string().min(1), z.int()]).default('paperbot'),
    /** pUSDC credited to a new or reset account. */
    starting_balance: PositiveDecimalText.default('10000'),
    route: z
      .strictObject({
        provider: z.string().min(1).default('paperbot-emulator'),
        environment: z.string().min(1).default('practice'),
        network: z.string().min(1).default('local'),
        capital_location: z.string().min(1).default('emulator-ledger'),
      })
      .prefault({}),
    fees: FeeSchedule.prefault({ maker_rate: '0.0002', taker_rate: '0.0005' }),
    latency: z
      .strictObject({
        /** Delay between PENDING and SUBMITTED (then matching), on the injected clock. */
        submit_ms: z.int().min(0).max(60_000).default(20),
      })
      .prefault({}),
    /** Self-trade prevention: an account never trades with itself (docs/emulator.md, "Orders"). */
    self_trade_prevention: SelfTradePrevention.default('cancel_incoming'),
    simulation: z
      .strictObject({
        /** False: prices and books stay where they are until driven in-process. */
        enabled: z.boolean().default(true),
        /** Period of the market simulation, on the injected clock. */
        step_ms: z.int().min(10).max(3_600_000).default(1000),
        funding_interval_ms: z
          .int()
          .min(60_000)
          .default(8 * 3_600_000),
        /** Bound of the absolute funding rate per interval. */
        funding_rate_cap: Rate.default('0.0075'),
      })
      .prefault({}),
    retention: z
      .strictObject({
        /** Public trades kept per market (the trades endpoint serves at most 500). */
        trades: z.int().min(1).max(100_000).default(500),
        /** Candles kept per market and interval (the candles endpoint serves at most 1000). */
        candles: z.int().min(1).max(100_000).default(1000),
        /** With a data dir: the newest events and fills kept per account (docs/emulator.md). */
        store_events: z.int().min(1).max(100_000_000).default(100_000),
        store_fills: z.int().min(1).max(100_000_000).default(100_000),
        /** With a data dir: the newest idempotency records kept, all accounts together. */
        store_idempotency: z.int().min(1).max(100_000_000).default(100_000),
        /** With a data dir: the newest terminal orders kept per account (active ones always). */
        store_terminal_orders: z.int().min(1).max(100_000_000).default(100_000),
      })
      .prefault({}),
    /**
     * The seeded past: one-minute candles and trades for this long before the emulator started,
     * made from the seed when read (docs/emulator.md, "History"). 0: no past.
     */
    history: z
      .strictObject({
        length_minutes: z
          .int()
          .min(0)
          .max(30 * 1440)
          .default(3 * 1440),
      })
      .prefault({}),
    /** Transport bounds: what one client can hold open or make the emulator buffer. */
    limits: z
      .strictObject({
        /** TCP connections at once, HTTP and WebSocket together; more are answered 503. */
        max_connections: z.int().min(1).max(1_000_000).default(1024),
        /** Time to receive a request's headers (408 beyond), in wall-clock ms. */
        headers_timeout_ms: z.int().min(1).max(3_600_000).default(10_000),
        /** Time to receive a whole request, headers and body (408 beyond), in wall-clock ms. */
        request_timeout_ms: z.int().min(1).max(3_600_000).default(30_000),
        /** Request line and headers together (431 beyond). */
        max_header_bytes: z.int().min(1024).max(1_048_576).default(16_384),
        websocket: z
          .strictObject({
            /** WebSocket connections at once; more upgrades are answered 503. */
            max_connections: z.int().min(1).max(1_000_000).default(256),
            /** Largest client frame (the connection is closed with 1009 beyond). */
            max_frame_bytes: z.int().min(1024).max(16_777_216).default(65_536),
            /**
             * Bytes waiting to be sent to one client that does not read; beyond, the connection
             * is closed with 1008 rather than buffered further.
             */
            max_buffered_bytes: z.int().min(1024).max(268_435_456).default(1_048_576),
          })
          .prefault({}),
      })
      .prefault({})
      .refine((limits) => limits.headers_timeout_ms <= limits.request_timeout_ms, {
        path: ['headers_timeout_ms'],
        message: 'must not be above request_timeout_ms',
      }),
    markets: z.array(MarketConfig).min(1),
  })
  .superRefine((config, context) => {
    const seen = new Set<string>();
    config.markets.forEach((market, index) => {
      if (seen.has(market.market_id)) {
        context.addIssue({
          code: 'custom',
          path: ['markets', index, 'market_id'],
          message: `duplicate market_id ${market.market_id}`,
        });
      }
      seen.add(market.market_id);
    });
  });
export type EmulatorConfig = z.infer<typeof EmulatorConfig>;
export type EmulatorConfigInput = z.input<typeof EmulatorConfig>;

/** The default markets: three perpetuals with different grids, limits and margin modes. */
export const DEFAULT_EMULATOR_CONFIG_INPUT: EmulatorConfigInput = {
  seed: 'paperbot',
  starting_balance: '10000',
  fees: { maker_rate: '0.0002', taker_rate: '0.0005' },
  latency: { submit_ms: 20 },
  simulation: { enabled: true, step_ms: 1000, funding_interval_ms: 28_800_000 },
  markets: [
    {
      market_id: 'BTC-PERP',
      display_name: 'Bitcoin perpetual',
      base_asset: 'BTC',
      price_tick: '0.5',
      quantity_step: '0.001',
      minimum_quantity: '0.001',
      minimum_notional: '10',
      maximum_leverage: 50,
      margin_modes: ['cross', 'isolated'],
      maintenance_margin_rate: '0.005',
      simulation: {
        initial_price: '64000',
        daily_volatility: 0.03,
        makers: { levels: 12, spread_ticks: 2, level_spacing_ticks: 4, level_quantity: '0.25' },
        takers: {
          probability_per_step: 0.6,
          minimum_quantity: '0.001',
          maximum_quantity: '0.2',
        },
      },
    },
    {
      market_id: 'ETH-PERP',
      display_name: 'Ether perpetual',
      base_asset: 'ETH',
      price_tick: '0.01',
      quantity_step: '0.01',
      minimum_quantity: '0.01',
      minimum_notional: '5',
      maximum_leverage: 25,
      margin_modes: ['isolated'],
      maintenance_margin_rate: '0.01',
      fees: { maker_rate: '0.0001', taker_rate: '0.0004' },
      simulation: {
        initial_price: '3200',
        daily_volatility: 0.04,
        makers: { levels: 10, spread_ticks: 5, level_spacing_ticks: 10, level_quantity: '3' },
        takers: {
          probability_per_step: 0.5,
          minimum_quantity: '0.01',
          maximum_quantity: '2',
        },
      },
    },
    {
      market_id: 'SOL-PERP',
      display_name: 'Solana perpetual (quoted, no trading yet)',
      base_asset: 'SOL',
      price_tick: '0.001',
      quantity_step: '0.1',
      minimum_quantity: '1',
      minimum_notional: '20',
      maximum_leverage: 10,
      margin_modes: ['cross'],
      maintenance_margin_rate: '0.02',
      simulation: {
        initial_price: '145',
        daily_volatility: 0.06,
        makers: { levels: 8, spread_ticks: 10, level_spacing_ticks: 20, level_quantity: '40' },
        takers: null,
      },
    },
  ],
};

function describeProblems(problems: readonly ConfigProblem[]): string {
  return problems
    .map(
      (problem) =>
        `${problem.path.length > 0 ? problem.path.map(String).join('.') : '(root)'}: ${problem.message}`,
    )
    .join('; ');
}

/** Parses a config object; every problem is listed in one `INVALID_CONFIG` error. */
export function parseEmulatorConfig(input: unknown): EmulatorConfig {
  const result = EmulatorConfig.safeParse(input, { reportInput: true });
  if (!result.success) {
    const problems = explainConfigIssues(result.error.issues, EmulatorConfig);
    throw new PaperbotError(
      'INVALID_CONFIG',
      `invalid emulator config: ${describeProblems(problems)}`,
      {
        details: {
          issues: problems.map((problem) => ({
            path: problem.path.map((part) => (typeof part === 'symbol' ? String(part) : part)),
            message: problem.message,
          })),
        },
      },
    );
  }
  return result.data;
}

export function defaultEmulatorConfig(): EmulatorConfig {
  return parseEmulatorConfig(DEFAULT_EMULATOR_CONFIG_INPUT);
}

/** Reads and checks a YAML config file. */
export function loadEmulatorConfig(yamlPath: string): EmulatorConfig {
  let text: string;
  try {
    text = readFileSync(yamlPath, 'utf8');
  } catch (cause) {
    throw new PaperbotError('INVALID_CONFIG', `cannot read emulator config ${yamlPath}`, { cause });
  }
  let document: unknown;
  try {
    // The yaml package's alias cap (100), stated so an alias bomb is refused here by name.
    document = parseYaml(text, { maxAliasCount: 100 });
  } catch (cause) {
    const message = cause instanceof Error ? (cause.message.split('\n')[0] ?? '') : '';
    throw new PaperbotError(
      'INVALID_CONFIG',
      `emulator config ${yamlPath} is not valid YAML${message === '' ? '' : `: ${message}`}`,
      { cause, details: { source: yamlPath, issues: [{ path: '(yaml)', message }] } },
    );
  }
  return parseEmulatorConfig(document);
}

/** Characters a wire profile file may have; a profile is a few hundred. */
const WIRE_PROFILE_MAX_BYTES = 64 * 1024;

/**
 * A wire profile file (YAML or JSON, the keys of `venue.wire`), for `paperbot emulator --wire`
 * and a `venue.wire` that names a file. Refused with `WIRE_PROFILE_INVALID`, every problem with
 * its path (`details.issues`), before anything is opened.
 */
export function loadWireProfileFile(path: string): WireProfile {
  const refuse = (message: string, issues: readonly { path: PropertyKey[]; message: string }[]) =>
    new PaperbotError('WIRE_PROFILE_INVALID', `wire profile ${path}: ${message}`, {
      details: { source: path, issues },
    });
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const message =
      code === 'ENOENT' ? 'the file does not exist' : `cannot read it (${String(code)})`;
    throw refuse(message, [{ path: [], message }]);
  }
  if (text.length > WIRE_PROFILE_MAX_BYTES) {
    const message = `the file is larger than ${WIRE_PROFILE_MAX_BYTES} characters`;
    throw refuse(message, [{ path: [], message }]);
  }
  let document: unknown;
  try {
    document = parseYaml(text, { maxAliasCount: 100 });
  } catch (cause) {
    const message = `not valid YAML or JSON: ${cause instanceof Error ? (cause.message.split('\n')[0] ?? '') : ''}`;
    throw refuse(message, [{ path: [], message }]);
  }
  if (
    document !== null &&
    document !== undefined &&
    (typeof document !== 'object' || Array.isArray(document))
  ) {
    const message = 'the profile must be a mapping of keys';
    throw refuse(message, [{ path: [], message }]);
  }
  try {
    return parseWireProfile(document ?? {}, `wire profile ${path}`);
  } catch (error) {
    if (isPaperbotError(error)) {
      throw new PaperbotError(error.code, error.message, {
        details: { source: path, ...error.details },
      });
    }
    throw error;
  }
}
