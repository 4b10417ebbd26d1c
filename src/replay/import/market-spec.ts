/**
 * The market an import describes: its id and grid (tick, step, minimum quantity), given on the
 * command line or in a small YAML file, turned into the protocol's `Market` for the manifest, and
 * the checks of imported prices and quantities against that grid.
 */
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { isoTimestamp } from '../../core/clock.ts';
import { isDecimalString, parseDecimal, toWire, type Decimal } from '../../core/decimal.ts';
import { PaperbotError } from '../../core/errors.ts';
import { parseOrRefuse } from '../../core/schema-issues.ts';
import { readUserFile } from '../../core/user-file.ts';
import { isOnIncrement } from '../../core/grid.ts';
import { type Market, MarketId } from '../../protocol/index.ts';

const PositiveDecimal = z
  .union([z.string(), z.number()])
  .transform((value) => String(value))
  .refine((text) => isDecimalString(text) && parseDecimal(text).gt(0), 'a positive decimal');

/** A market file holds a handful of fields. */
const MARKET_FILE_MAX_BYTES = 64 * 1024;

export const MarketSpec = z.strictObject({
  /** The interface's limit (3..40 characters): an id `backtest` would refuse is refused here. */
  market_id: MarketId,
  price_tick: PositiveDecimal,
  quantity_step: PositiveDecimal,
  minimum_quantity: PositiveDecimal.nullable().default(null),
  base_asset: z.string().min(1).optional(),
  quote_asset: z.string().min(1).optional(),
  route_id: z.string().min(1).default('imported'),
  /** The replay's leverage cap; files never say it, so it is given (default 20). */
  maximum_leverage: z.int().min(1).max(200).default(20),
});
export type MarketSpec = z.infer<typeof MarketSpec>;

/** Checks a market spec from flags or a parsed YAML document; every problem with its path. */
export function parseMarketSpec(value: unknown, origin: string): MarketSpec {
  return parseOrRefuse(MarketSpec, value, {
    code: 'INVALID_CONFIG',
    where: origin,
    topLabel: '(market)',
  });
}

export async function readMarketSpecFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = (
      await readUserFile(path, { what: 'market file', maxBytes: MARKET_FILE_MAX_BYTES })
    ).toString('utf8');
  } catch (cause) {
    const reason = cause instanceof PaperbotError ? `: ${cause.message}` : '';
    throw new PaperbotError('INVALID_CONFIG', `${path}: cannot read the market file${reason}`, {
      cause,
    });
  }
  try {
    return parseYaml(text) as unknown;
  } catch (cause) {
    throw new PaperbotError('INVALID_CONFIG', `${path}: not YAML`, { cause });
  }
}

/** The manifest's description of an imported market; what the data cannot tell is null. */
export function marketOf(spec: MarketSpec, observedAtMs: number): Market {
  const [base] = spec.market_id.split('-');
  return {
    market_id: spec.market_id,
    display_name: spec.market_id,
    base_asset: spec.base_asset ?? base ?? spec.market_id,
    // The replay's account settles in the service's asset whatever the file's quote currency.
    quote_asset: spec.quote_asset ?? 'pUSDC',
    category: 'imported',
    status: 'active',
    routes: [spec.route_id],
    preferred_route_id: spec.route_id,
    price_tick: spec.price_tick,
    quantity_step: spec.quantity_step,
    minimum_quantity: spec.minimum_quantity,
    minimum_notional: null,
    maximum_leverage: spec.maximum_leverage,
    margin_modes: null,
    order_types: null,
    mark_price: null,
    index_price: null,
    last_price: null,
    funding_rate: null,
    next_funding_time: null,
    volume_24h: null,
    open_interest: null,
    observed_at: isoTimestamp(observedAtMs),
    data_status: 'live',
  };
}

/** Price and quantity checks against the market's grid, decimals built once. */
export class GridCheck {
  private readonly tick: Decimal;
  private readonly step: Decimal;

  constructor(spec: MarketSpec) {
    this.tick = parseDecimal(spec.price_tick);
    this.step = parseDecimal(spec.quantity_step);
  }

  /** The canonical decimal text of a price on the tick; throws with the reason otherwise. */
  price(text: string): string {
    const value = decimalField(text, 'price');
    if (value.lte(0))
      throw new PaperbotError('IMPORT_INVALID_ROW', `price ${text} is not positive`);
    return onIncrement(value, text, 'price', this.tick, 'tick');
  }

  /** The canonical decimal text of a quantity (zero allowed: it deletes a book level). */
  quantity(text: string): string {
    const value = decimalField(text, 'quantity');
    if (value.lt(0)) {
      throw new PaperbotError('IMPORT_INVALID_ROW', `quantity ${text} is negative`);
    }
    return onIncrement(value, text, 'quantity', this.step, 'step');
  }

  /** An aggregate volume (a candle's): any non-negative decimal, not held to the step. */
  volume(text: string): Decimal {
    const value = decimalField(text, 'volume');
    if (value.lt(0)) throw new PaperbotError('IMPORT_INVALID_ROW', `volume ${text} is negative`);
    return value;
  }
}

/** The canonical text of a value on its increment; IMPORT_OFF_GRID otherwise. */
function onIncrement(
  value: Decimal,
  text: string,
  name: 'price' | 'quantity',
  increment: Decimal,
  incrementName: 'tick' | 'step',
): string {
  if (!isOnIncrement(value, increment)) {
    throw new PaperbotError(
      'IMPORT_OFF_GRID',
      `${name} ${text} is not a multiple of the ${incrementName} ${toWire(increment)}`,
    );
  }
  return toWire(value);
}

function decimalField(text: string, name: string): Decimal {
  const trimmed = text.trim();
  if (!isDecimalString(trimmed)) {
    throw new PaperbotError(
      'IMPORT_INVALID_ROW',
      `${name} ${JSON.stringify(text)} is not a decimal`,
    );
  }
  return parseDecimal(trimmed);
}
