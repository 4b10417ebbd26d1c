/**
 * The report built while the run goes, in bounded memory (docs/backtesting.md, "The report"):
 * a backtest hands over each fill, equity sample, market price and accepted order as it
 * happens, and `finish` gives the report. Nothing grows with the run's length:
 *
 * - statistics are running sums (`running-statistics.ts`), exact, the same digits as before;
 * - trades are round trips built fill by fill (`RoundTripBook`), per market for the account and
 *   per strategy; only open trips and their lots are held, and each trip's MAE and MFE follow
 *   the market price while it is open;
 * - charts are bucketed series (`series.ts`) of at most `DEFAULT_SERIES_CAPACITY` buckets;
 * - the report lists the first and last `REPORT_LIST_LIMIT` fills and the first
 *   `REPORT_LIST_LIMIT` trades; every fill, trade and equity sample goes to `ReportFiles`
 *   (`--csv`) as it happens.
 *
 * A trade carries the reason of the fill that closed it (`fill`'s `reason`); trades still open at
 * the end are marked at the closing marks `finish` is given (else the last price seen) and
 * reported `open`, `end_of_data`. Trade prices are rounded to each market's tick (`priceTicks`).
 *
 * Fills are taken in the order given (the venue's, which is time order); equity samples in time
 * order. The same calls give the same report, byte for byte.
 */
import { isoTimestamp } from '../../core/clock.ts';
import { Big, type Decimal, parseDecimal, toWire, ZERO } from '../../core/decimal.ts';
import { PaperbotError } from '../../core/errors.ts';
import type { Fill } from '../../protocol/index.ts';
import { tripExcursion } from './excursions.ts';
import {
  checkReportInput,
  fillTime,
  type ReportInput,
  type ReportMetadata,
  type StrategyEntry,
} from './input.ts';
import {
  type BacktestReport,
  type ChartPoint,
  type MarketChart,
  type ParameterValue,
  quotient,
  ratio,
  REPORT_SCHEMA,
  REPORT_SCHEMA_VERSION,
  type ReportEquityPoint,
  type ReportFill,
  type ReportGap,
  type ReportGroup,
  type ReportIntents,
  type ReportTrade,
  reportSummary,
} from './report.ts';
import {
  type ExitReason,
  fillsInTimeOrder,
  type RoundTrip,
  RoundTripBook,
  unrealizedPnl,
} from './round-trips.ts';
import { RunningEquityStatistics } from './running-statistics.ts';
import { BucketedSeries, decimalNumber, type SeriesPoint } from './series.ts';
import { DEFAULT_SHARPE_PERIOD_MS, type StatisticsOptions } from './statistics.ts';

/** Fills listed at each end of the report, and trades listed from its start. */
export const REPORT_LIST_LIMIT = 1_000;

/** Where every fill, trade and equity sample goes as it happens (`csv.ts`). */
export interface ReportFiles {
  /** Paths of the files, as the report names them. */
  readonly paths: { readonly fills: string; readonly trades: string; readonly equity: string };
  fill(fill: ReportFill): void;
  trade(trade: ReportTrade): void;
  equity(point: ReportEquityPoint): void;
}

export interface ReportCollectorOptions extends StatisticsOptions {
  readonly currency: string;
  readonly startingBalance: string;
  readonly startMs: number;
  /** Markets charted from the start (others join at their first fill). */
  readonly markets?: readonly string[];
  readonly strategies?: readonly StrategyEntry[];
  readonly metadata?: ReportMetadata;
  readonly files?: ReportFiles | null;
  /** Fills listed at each end and trades from the start (default `REPORT_LIST_LIMIT`). */
  readonly listLimit?: number;
  /** Each market's price tick: trade prices are rounded to it (markets left out: unrounded). */
  readonly priceTicks?: ReadonlyMap<string, string>;
}

/** What the run knows at its end beyond the fills and samples. */
export interface ReportClosing {
  /** Equity at the end (a last sample at `endMs`). */
  readonly equity?: string;
  /** Mark price per market at the end, for the open trades (else the last price seen). */
  readonly marks?: ReadonlyMap<string, string>;
  /** The run's intents, counted once each. */
  readonly intents?: ReportIntents;
  /** The data's gaps the venue met (listed only when there are some). */
  readonly gaps?: readonly ReportGap[];
}

interface Group {
  fills: number;
  notional: Decimal;
  fees: Decimal;
  /** Funding received (negative: paid): kept for the account and per market. */
  funding: Decimal;
  trades: number;
  winning: number;
  losing: number;
  realized: Decimal;
  /** Closed trips' realized PnL before fees. */
  realizedGross: Decimal;
  durationMs: number;
  readonly book: RoundTripBook;
}

interface MarketState {
  readonly price: BucketedSeries;
  readonly buyOrders: BucketedSeries;
  readonly sellOrders: BucketedSeries;
  readonly buyFills: BucketedSeries;
  readonly sellFills: BucketedSeries;
  /** The position sampled with each equity sample, so its buckets are the equity chart's. */
  readonly position: BucketedSeries;
  quantity: Decimal;
  /** `toWire(quantity)`, kept while the quantity stands (it is sampled every equity sample). */
  quantityText: string;
  /** The last market price seen (`price`), for marking an open trade without a closing mark. */
  lastPrice: string | null;
}

function newGroup(onClosed: (trip: RoundTrip) => void = () => {}): Group {
  const group: Group = {
    fills: 0,
    notional: ZERO,
    fees: ZERO,
    funding: ZERO,
    trades: 0,
    winning: 0,
    losing: 0,
    realized: ZERO,
    realizedGross: ZERO,
    durationMs: 0,
    book: new RoundTripBook((trip) => {
      group.trades++;
      if (trip.netPnl.gt(0)) group.winning++;
      if (trip.netPnl.lt(0)) group.losing++;
      group.realized = group.realized.plus(trip.netPnl);
      group.realizedGross = group.realizedGross.plus(trip.grossPnl);
      group.durationMs += trip.closedAt! - trip.openedAt;
      onClosed(trip);
    }),
  };
  return group;
}

function groupFigures(group: Group): ReportGroup {
  return {
    fills: group.fills,
    traded_notional: toWire(group.notional),
    fees: toWire(group.fees),
    trades: group.trades,
    winning_trades: group.winning,
    losing_trades: group.losing,
    open_trades: group.book.openCount,
    win_rate: group.trades > 0 ? ratio(new Big(group.winning).div(group.trades)) : null,
    realized_pnl: quotient(group.realized),
  };
}

/** A price on the market's tick grid (half-even), or as it is when the tick is not known. */
export type PriceRounder = (marketId: string, price: Decimal) => string;

function tickRounder(ticks: ReadonlyMap<string, string> | undefined): PriceRounder {
  const parsed = new Map<string, Decimal>();
  for (const [marketId, tick] of ticks ?? []) {
    const value = parseDecimal(tick);
    if (value.gt(0)) parsed.set(marketId, value);
  }
  return (marketId, price) => {
    const tick = parsed.get(marketId);
    if (tick === undefined) return quotient(price);
    return toWire(price.div(tick).round(0, Big.roundHalfEven).times(tick));
  };
}

/** A trade still open at the end, marked at `mark` (null: no price known, nothing unrealized). */
interface OpenMark {
  readonly mark: Decimal | null;
}

function reportTrade(
  trip: RoundTrip,
  endMs: number,
  round: PriceRounder,
  open: OpenMark | null = null,
): ReportTrade {
  const excursion = tripExcursion(trip);
  const mark = open === null ? null : open.mark;
  const unrealized = mark === null ? ZERO : unrealizedPnl(trip, mark);
  return {
    market_id: trip.marketId,
    direction: trip.direction,
    status: open === null ? 'closed' : 'open',
    exit_reason: open === null ? (trip.exitReason ?? 'signal') : 'end_of_data',
    opened_at_ms: trip.openedAt,
    opened_at: isoTimestamp(trip.openedAt),
    closed_at_ms: trip.closedAt,
    closed_at: trip.closedAt === null ? null : isoTimestamp(trip.closedAt),
    opened_quantity: toWire(trip.openedQuantity),
    closed_quantity: toWire(trip.closedQuantity),
    entry_price: round(trip.marketId, trip.entryPrice),
    exit_price: trip.exitPrice === null ? null : round(trip.marketId, trip.exitPrice),
    gross_pnl: toWire(trip.grossPnl),
    mark_price: mark === null ? null : round(trip.marketId, mark),
    unrealized_pnl: quotient(unrealized),
    fees: quotient(trip.fees),
    funding: toWire(trip.funding),
    net_pnl: quotient(trip.netPnl.plus(unrealized)),
    duration_ms: (trip.closedAt ?? endMs) - trip.openedAt,
    mae: ratio(excursion.adverse),
    mfe: ratio(excursion.favourable),
    fill_ids: trip.fillIds,
    fill_count: trip.fillCount,
  };
}

function reportFill(fill: Fill, t: number, strategyId: string | undefined): ReportFill {
  return {
    t,
    occurred_at: fill.occurred_at,
    fill_id: fill.fill_id,
    order_id: fill.order_id,
    strategy_id: strategyId ?? null,
    market_id: fill.market_id,
    side: fill.side,
    quantity: fill.quantity,
    price: fill.price,
    fee: fill.fee,
    is_maker: fill.is_maker,
  };
}

/** One point per bucket: the first at its first sample (the run's start), the others at their last. */
function chartLine(
  points: readonly SeriesPoint[],
  pick: (point: SeriesPoint) => string = (point) => point.close,
): ChartPoint[] {
  return points.map((point, index) => [index === 0 ? point.first : point.last, pick(point)]);
}

function sortedParameters(
  parameters: Readonly<Record<string, ParameterValue>> | undefined,
): Record<string, ParameterValue> {
  const sorted: Record<string, ParameterValue> = {};
  for (const name of Object.keys(parameters ?? {}).sort()) sorted[name] = parameters![name]!;
  return sorted;
}

export class ReportCollector {
  private readonly startingBalance: Decimal;
  private readonly limit: number;
  private readonly files: ReportFiles | null;
  private readonly round: PriceRounder;
  private readonly equityStatistics: RunningEquityStatistics;
  private readonly equitySeries = new BucketedSeries();
  private readonly drawdownSeries = new BucketedSeries();
  private readonly markets = new Map<string, MarketState>();
  /** The markets' states in the map's order. */
  private readonly marketList: MarketState[] = [];
  private readonly marketGroups = new Map<string, Group>();
  private readonly strategyGroups = new Map<string, Group>();
  /** The account: every fill, trips per market (the report's trades and summary). */
  private readonly account: Group;
  /** The last sample, taken when a later one comes (fields, not an object per sample). */
  private pendingT = Number.NaN;
  private pendingEquity: string | null = null;
  /**
   * The last sample's equity as given, parsed and on the wire, and its drawdown: an equity that
   * stays flat between samples (no position, no fill) is parsed and formatted once.
   */
  private sampled = { text: '', value: ZERO, wire: '', drawdown: ZERO, drawdownText: '' };
  /**
   * The time of the last sample while its positions are unread: they are read when a later fill
   * or sample comes, so a fill at the sample's own time counts (the venue may report it after).
   */
  private positionsDueAt: number | null = null;
  private lastEquityT = Number.NEGATIVE_INFINITY;
  private readonly firstFills: ReportFill[] = [];
  /** The last fills, a ring of `limit` once the first `limit` are kept. */
  private readonly lastFills: ReportFill[] = [];
  private lastFillsNext = 0;
  private fillCount = 0;
  private readonly listedTrades: { sequence: number; trade: ReportTrade }[] = [];
  // Exposure: markets with a non-zero position, and the time any was.
  private readonly openMarkets = new Set<string>();
  private exposedMs = 0;
  private exposureCursor: number;
  private finished = false;

  constructor(private readonly options: ReportCollectorOptions) {
    this.startingBalance = parseDecimal(options.startingBalance);
    this.limit = options.listLimit ?? REPORT_LIST_LIMIT;
    this.files = options.files ?? null;
    this.round = tickRounder(options.priceTicks);
    this.equityStatistics = new RunningEquityStatistics(
      this.startingBalance,
      options.startMs,
      options.sharpePeriodMs ?? DEFAULT_SHARPE_PERIOD_MS,
    );
    this.exposureCursor = options.startMs;
    this.account = newGroup((trip) => this.onAccountTrip(trip));
    for (const entry of options.strategies ?? []) this.strategyGroups.set(entry.id, newGroup());
    this.equitySeries.add(options.startMs, options.startingBalance);
    this.drawdownSeries.add(options.startMs, '0');
    for (const marketId of options.markets ?? []) this.market(marketId);
  }

  /** A market price (mark, else last) at t: its chart, and the excursions of its open trip. */
  price(marketId: string, t: number, price: string): void {
    const numeric = decimalNumber(price);
    const market = this.markets.get(marketId);
    if (market === undefined) return;
    market.lastPrice = price;
    market.price.add(t, price, numeric);
    this.account.book.price(marketId, price, numeric);
  }

  /** The limit price of a strategy's accepted order (the market's chart). */
  order(marketId: string, side: 'buy' | 'sell', t: number, price: string): void {
    const market = this.markets.get(marketId);
    (side === 'buy' ? market?.buyOrders : market?.sellOrders)?.add(t, price);
  }

  /**
   * A funding payment of the account's position in `marketId` (`amount` received; negative:
   * paid): in the account's and the market's funding, and in the trade open in that market.
   */
  funding(marketId: string, amount: string): void {
    const value = parseDecimal(amount);
    this.account.funding = this.account.funding.plus(value);
    let marketGroup = this.marketGroups.get(marketId);
    if (marketGroup === undefined) {
      marketGroup = newGroup();
      this.marketGroups.set(marketId, marketGroup);
    }
    marketGroup.funding = marketGroup.funding.plus(value);
    this.account.book.funding(marketId, value);
  }

  /** A fill, with the strategy whose order it was and why it traded (when it closes a trade). */
  fill(fill: Fill, strategyId?: string, reason: ExitReason = 'signal'): void {
    const t = fillTime(fill);
    if (this.positionsDueAt !== null && t > this.positionsDueAt) this.readPositions();
    const quantity = parseDecimal(fill.quantity);
    const notional = parseDecimal(fill.price).times(quantity);
    const fee = parseDecimal(fill.fee);
    const count = (group: Group, key: string) => {
      group.fills++;
      group.notional = group.notional.plus(notional);
      group.fees = group.fees.plus(fee);
      group.book.add(fill, t, key, reason);
    };
    count(this.account, fill.market_id);
    let marketGroup = this.marketGroups.get(fill.market_id);
    if (marketGroup === undefined) {
      marketGroup = newGroup();
      this.marketGroups.set(fill.market_id, marketGroup);
    }
    // The market's trips are the account's: only its counts are kept here.
    marketGroup.fills++;
    marketGroup.notional = marketGroup.notional.plus(notional);
    marketGroup.fees = marketGroup.fees.plus(fee);
    if (strategyId !== undefined) {
      let group = this.strategyGroups.get(strategyId);
      if (group === undefined) {
        group = newGroup();
        this.strategyGroups.set(strategyId, group);
      }
      count(group, fill.market_id);
    }
    const market = this.market(fill.market_id);
    (fill.side === 'buy' ? market.buyFills : market.sellFills).add(t, fill.price);
    const position =
      fill.side === 'buy' ? market.quantity.plus(quantity) : market.quantity.minus(quantity);
    market.quantity = position;
    market.quantityText = toWire(position);
    const at = Math.max(t, this.options.startMs);
    if (this.openMarkets.size > 0) this.exposedMs += at - this.exposureCursor;
    this.exposureCursor = at;
    if (position.eq(0)) this.openMarkets.delete(fill.market_id);
    else this.openMarkets.add(fill.market_id);

    const row = reportFill(fill, t, strategyId);
    this.files?.fill(row);
    this.fillCount++;
    if (this.firstFills.length < this.limit) {
      this.firstFills.push(row);
    } else if (this.lastFills.length < this.limit) {
      this.lastFills.push(row);
    } else {
      this.lastFills[this.lastFillsNext] = row;
      this.lastFillsNext = (this.lastFillsNext + 1) % this.limit;
    }
  }

  /**
   * An equity sample. Samples come in time order; a sample at the time of the one before
   * replaces it (the closing sample of `finish` does so too).
   */
  equity(t: number, equity: string): void {
    if (t < this.lastEquityT) {
      throw new PaperbotError(
        'INVALID_REPORT_INPUT',
        `equity sample at ${t} is before the one at ${this.lastEquityT}`,
      );
    }
    if (this.pendingEquity !== null && this.pendingT !== t) {
      this.takeSample(this.pendingT, this.pendingEquity);
    }
    if (this.positionsDueAt !== null) this.readPositions();
    this.pendingT = t;
    this.pendingEquity = equity;
    this.lastEquityT = t;
    this.positionsDueAt = t;
  }

  /** Positions at the last sample's time, on the equity chart's times. */
  private readPositions(): void {
    const t = this.positionsDueAt!;
    this.positionsDueAt = null;
    // Indexed over a list (every sample): no iterator objects.
    const markets = this.marketList;
    for (let index = 0; index < markets.length; index++) {
      const market = markets[index]!;
      market.position.add(t, market.quantityText);
    }
  }

  /**
   * The report of a run that ended at `endMs`, with its closing equity, marks and intent counts
   * when given (a string is the closing equity alone).
   */
  finish(endMs: number, closing: ReportClosing | string = {}): BacktestReport {
    if (this.finished) throw new Error('the report is already finished');
    this.finished = true;
    const {
      equity: closingEquity,
      marks,
      intents,
      gaps,
    } = typeof closing === 'string'
      ? { equity: closing, marks: undefined, intents: undefined, gaps: undefined }
      : closing;
    if (closingEquity !== undefined) this.equity(endMs, closingEquity);
    if (this.pendingEquity !== null) this.takeSample(this.pendingT, this.pendingEquity);
    if (this.positionsDueAt !== null) this.readPositions();
    this.pendingEquity = null;
    const { options } = this;
    const figures = this.equityStatistics.finish(endMs);
    if (this.openMarkets.size > 0) this.exposedMs += endMs - this.exposureCursor;
    const openTrips = this.account.book.open();
    let openGross = ZERO;
    let unrealized = ZERO;
    for (const trip of openTrips) {
      const markText = marks?.get(trip.marketId) ?? this.markets.get(trip.marketId)?.lastPrice;
      const mark = markText === undefined || markText === null ? null : parseDecimal(markText);
      const trade = reportTrade(trip, endMs, this.round, { mark });
      openGross = openGross.plus(trip.grossPnl);
      if (mark !== null) unrealized = unrealized.plus(unrealizedPnl(trip, mark));
      this.files?.trade(trade);
      if (trip.sequence < this.limit) this.listedTrades.push({ sequence: trip.sequence, trade });
    }
    const account = this.account;
    const netPnl = figures.endingEquity.minus(this.startingBalance);
    const summary = reportSummary({
      startingBalance: this.startingBalance,
      endingEquity: figures.endingEquity,
      netPnl,
      grossPnl: netPnl.plus(account.fees),
      realizedGrossPnl: account.realizedGross.plus(openGross),
      unrealizedPnl: unrealized,
      fees: account.fees,
      funding: account.funding,
      returnFraction: netPnl.div(this.startingBalance),
      sharpe: figures.sharpe,
      drawdown: figures.drawdown,
      trades: account.trades,
      winningTrades: account.winning,
      losingTrades: account.losing,
      openTrades: openTrips.length,
      winRate: account.trades > 0 ? new Big(account.winning).div(account.trades) : null,
      realizedPnl: account.realized,
      averageTradePnl: account.trades > 0 ? account.realized.div(account.trades) : null,
      averageTradeDurationMs:
        account.trades > 0 ? Math.round(account.durationMs / account.trades) : null,
      fills: this.fillCount,
      tradedNotional: account.notional,
      averageEquity: figures.averageEquity,
      exposure:
        endMs <= options.startMs ? null : new Big(this.exposedMs).div(endMs - options.startMs),
      turnover: figures.averageEquity.gt(0) ? account.notional.div(figures.averageEquity) : null,
    });
    const listedTrades = this.listedTrades.sort((a, b) => a.sequence - b.sequence);
    const lastFills = [
      ...this.lastFills.slice(this.lastFillsNext),
      ...this.lastFills.slice(0, this.lastFillsNext),
    ];
    return {
      schema: REPORT_SCHEMA,
      schema_version: REPORT_SCHEMA_VERSION,
      metadata: {
        strategy: options.metadata?.strategy ?? null,
        parameters: sortedParameters(options.metadata?.parameters),
        data: [...(options.metadata?.data ?? [])],
        run_at: options.metadata?.runAt ?? null,
      },
      currency: options.currency,
      range: {
        start_ms: options.startMs,
        end_ms: endMs,
        start: isoTimestamp(options.startMs),
        end: isoTimestamp(endMs),
        duration_ms: endMs - options.startMs,
      },
      summary,
      markets: this.reportMarkets(),
      strategies: this.reportStrategies(),
      trades: listedTrades.map((entry) => entry.trade),
      fills: [...this.firstFills, ...lastFills],
      lists: {
        limit: this.limit,
        fills: this.fillCount,
        fills_omitted: this.fillCount - this.firstFills.length - lastFills.length,
        trades: account.book.count,
        trades_omitted: account.book.count - listedTrades.length,
        equity_samples: figures.samples,
      },
      files: this.files?.paths ?? null,
      intents: intents ?? null,
      charts: {
        equity: chartLine(this.equitySeries.points()),
        drawdown: chartLine(this.drawdownSeries.points(), (point) => point.high),
        markets: this.reportCharts(),
      },
      ...(gaps !== undefined && gaps.length > 0 ? { gaps } : {}),
    };
  }

  /** How many entries the collector holds now (for tests: it must not grow with the run). */
  heldEntries(): number {
    let series = this.equitySeries.size + this.drawdownSeries.size;
    for (const market of this.markets.values()) {
      series +=
        market.price.size +
        market.buyOrders.size +
        market.sellOrders.size +
        market.buyFills.size +
        market.sellFills.size +
        market.position.size;
    }
    let trips = this.account.book.openCount;
    for (const group of this.strategyGroups.values()) trips += group.book.openCount;
    return (
      series +
      trips +
      this.firstFills.length +
      this.lastFills.length +
      this.listedTrades.length +
      this.markets.size +
      this.strategyGroups.size
    );
  }

  private market(marketId: string): MarketState {
    let market = this.markets.get(marketId);
    if (market === undefined) {
      market = {
        price: new BucketedSeries(),
        buyOrders: new BucketedSeries(),
        sellOrders: new BucketedSeries(),
        buyFills: new BucketedSeries(),
        sellFills: new BucketedSeries(),
        position: new BucketedSeries(),
        quantity: ZERO,
        quantityText: toWire(ZERO),
        lastPrice: null,
      };
      market.position.add(this.options.startMs, '0');
      this.markets.set(marketId, market);
      this.marketList.push(market);
      if (!this.marketGroups.has(marketId)) this.marketGroups.set(marketId, newGroup());
    }
    return market;
  }

  private takeSample(t: number, equity: string): void {
    const sampled = this.sampled;
    if (equity !== sampled.text || sampled.wire === '') {
      sampled.text = equity;
      sampled.value = parseDecimal(equity);
      sampled.wire = toWire(sampled.value);
    }
    const drawdownValue = this.equityStatistics.add(t, sampled.value);
    if (drawdownValue !== sampled.drawdown || sampled.drawdownText === '') {
      sampled.drawdown = drawdownValue;
      sampled.drawdownText = ratio(drawdownValue);
    }
    const drawdown = sampled.drawdownText;
    this.equitySeries.add(t, equity);
    this.drawdownSeries.add(t, drawdown);
    this.files?.equity({ t, equity: sampled.wire, drawdown });
  }

  private onAccountTrip(trip: RoundTrip): void {
    const trade = reportTrade(trip, trip.closedAt!, this.round);
    this.files?.trade(trade);
    if (trip.sequence < this.limit) this.listedTrades.push({ sequence: trip.sequence, trade });
    const group = this.marketGroups.get(trip.marketId);
    if (group !== undefined) {
      group.trades++;
      if (trip.netPnl.gt(0)) group.winning++;
      if (trip.netPnl.lt(0)) group.losing++;
      group.realized = group.realized.plus(trip.netPnl);
    }
  }

  private reportMarkets(): BacktestReport['markets'] {
    const open = new Map(this.account.book.open().map((trip) => [trip.marketId, 1]));
    return [...this.marketGroups.keys()].sort().map((marketId) => {
      const group = this.marketGroups.get(marketId)!;
      return {
        market_id: marketId,
        ...groupFigures(group),
        open_trades: open.get(marketId) ?? 0,
        final_position: toWire(this.markets.get(marketId)?.quantity ?? ZERO),
        funding: toWire(group.funding),
      };
    });
  }

  private reportStrategies(): BacktestReport['strategies'] {
    const entries = this.options.strategies ?? [];
    return [...this.strategyGroups.entries()].map(([id, group]) => {
      const entry = entries.find((candidate) => candidate.id === id);
      return {
        strategy_id: id,
        name: entry?.name ?? id,
        markets: [...(entry?.markets ?? [])],
        status: entry !== undefined && entry.missingMarkets.length > 0 ? 'skipped' : 'ran',
        missing_markets: [...(entry?.missingMarkets ?? [])],
        ...groupFigures(group),
      };
    });
  }

  private reportCharts(): MarketChart[] {
    return [...this.markets.keys()].sort().map((marketId) => {
      const market = this.markets.get(marketId)!;
      return {
        market_id: marketId,
        price: chartLine(market.price.points()),
        buy_fills: chartLine(market.buyFills.points()),
        sell_fills: chartLine(market.sellFills.points()),
        buy_orders: chartLine(market.buyOrders.points()),
        sell_orders: chartLine(market.sellOrders.points()),
        position: chartLine(market.position.points()),
      };
    });
  }
}

/**
 * The report of a whole run held in memory (tests, imports): checks the input (every problem
 * at once), then feeds it to a `ReportCollector` in time order.
 */
export function buildReport(input: ReportInput, options: StatisticsOptions = {}): BacktestReport {
  checkReportInput(input);
  const ordered = fillsInTimeOrder(input.fills);
  const markets = new Set<string>(input.marketSeries?.keys() ?? []);
  for (const fill of ordered) markets.add(fill.market_id);
  const collector = new ReportCollector({
    ...options,
    currency: input.currency,
    startingBalance: input.startingBalance,
    startMs: input.startMs,
    markets: [...markets].sort(),
    ...(input.strategies === undefined ? {} : { strategies: input.strategies }),
    ...(input.metadata === undefined ? {} : { metadata: input.metadata }),
  });
  // Prices, orders, fills and samples in one time order; at one time, a fill before a sample.
  const events: { t: number; order: number; apply: () => void }[] = [];
  const at = (t: number, apply: () => void) => events.push({ t, order: events.length, apply });
  // A bucket of a given series as three samples: its low and high, then its close.
  const replay = (points: readonly SeriesPoint[], add: (t: number, value: string) => void) => {
    for (const point of points) {
      at(point.first, () => add(point.first, point.low));
      at(point.first, () => add(point.first, point.high));
      at(point.last, () => add(point.last, point.close));
    }
  };
  for (const [marketId, series] of input.marketSeries ?? []) {
    replay(series.price, (t, value) => collector.price(marketId, t, value));
    replay(series.buyOrders, (t, value) => collector.order(marketId, 'buy', t, value));
    replay(series.sellOrders, (t, value) => collector.order(marketId, 'sell', t, value));
  }
  for (const fill of ordered) {
    at(fillTime(fill), () => collector.fill(fill, input.fillStrategies?.get(fill.fill_id)));
  }
  for (const sample of input.equity) at(sample.t, () => collector.equity(sample.t, sample.equity));
  events.sort((a, b) => a.t - b.t || a.order - b.order);
  for (const event of events) event.apply();
  return collector.finish(input.endMs);
}
