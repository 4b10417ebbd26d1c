/**
 * `paperbot import`: turns CSV files (trades, candles, book snapshots or L2 updates) into a
 * recorded session that `paperbot backtest` replays (docs/backtesting.md, "Importing data").
 * Prints rows read, skipped (and why) and records written; exits 2 on bad arguments, 1 when a
 * file is refused (a row off the tick, time going backwards, a malformed row), naming the line.
 */
import { type Command, Option } from 'commander';
import { isPaperbotError, PaperbotError } from '../../core/errors.ts';
import {
  BINANCE_TRADES_LAYOUT,
  BOOK_FIELDS,
  BOOK_MODES,
  type BookMode,
  CANDLE_FIELDS,
  type ColumnLayout,
  formatImportReport,
  type ImportInput,
  importRecording,
  parseColumnMapping,
  parseMarketSpec,
  readMarketSpecFile,
  TIME_UNITS,
  type TimeUnit,
  TRADE_FIELDS,
} from '../../replay/import/index.ts';
import { commandFailure, type CommandOutput, standardOutput } from './terminal.ts';
import { defineCommand } from './define-command.ts';
import { integerOption } from '../options.ts';

export const IMPORT_EXIT = { ok: 0, failed: 1, invalidArguments: 2 } as const;

export type ImportCommandDependencies = CommandOutput;

interface ImportOptions {
  readonly out: string;
  readonly market?: string;
  readonly tick?: string;
  readonly step?: string;
  readonly minQty?: string;
  readonly maxLeverage?: string;
  readonly marketFile?: string;
  readonly trades?: string;
  readonly tradeLayout: 'columns' | 'binance-trades';
  readonly tradeColumns?: string;
  readonly candles?: string;
  readonly candleColumns?: string;
  readonly candleInterval?: string;
  readonly book?: string;
  readonly bookColumns?: string;
  readonly bookMode: BookMode;
  readonly depth: string;
  readonly interval: string;
  readonly header: boolean;
  readonly timeUnit: TimeUnit;
  readonly sort?: boolean;
  readonly gzip?: boolean;
}

/** A layout from a mapping (or the fields' own names as the header's). */
function columnsLayout(
  text: string | undefined,
  fields: { readonly required: readonly string[]; readonly optional: readonly string[] },
  header: boolean,
  fallback: string,
): ColumnLayout {
  return {
    header,
    columns: parseColumnMapping(text ?? fallback, fields.required, fields.optional),
  };
}

function leverage(options: ImportOptions): { maximum_leverage?: number } {
  return options.maxLeverage === undefined
    ? {}
    : { maximum_leverage: integerOption(options.maxLeverage, 'max-leverage') };
}

async function marketFrom(options: ImportOptions) {
  if (options.marketFile !== undefined) {
    const document = (await readMarketSpecFile(options.marketFile)) as Record<string, unknown>;
    const flags = {
      ...(options.market === undefined ? {} : { market_id: options.market }),
      ...(options.tick === undefined ? {} : { price_tick: options.tick }),
      ...(options.step === undefined ? {} : { quantity_step: options.step }),
      ...(options.minQty === undefined ? {} : { minimum_quantity: options.minQty }),
      ...leverage(options),
    };
    return parseMarketSpec({ ...document, ...flags }, options.marketFile);
  }
  return parseMarketSpec(
    {
      market_id: options.market,
      price_tick: options.tick,
      quantity_step: options.step,
      minimum_quantity: options.minQty ?? null,
      ...leverage(options),
    },
    'the market flags (--market, --tick, --step, --min-qty)',
  );
}

async function execute(options: ImportOptions, dependencies: ImportCommandDependencies) {
  const market = await marketFrom(options);
  const common = { timeUnit: options.timeUnit, sort: options.sort === true };
  const inputs: ImportInput[] = [];
  if (options.book !== undefined) {
    inputs.push({
      kind: 'book',
      path: options.book,
      layout: columnsLayout(
        options.bookColumns,
        BOOK_FIELDS,
        options.header,
        'timestamp=timestamp,side=side,price=price,quantity=quantity',
      ),
      mode: options.bookMode,
      depth: integerOption(options.depth, 'depth'),
      intervalMs: integerOption(options.interval, 'interval'),
      ...common,
    });
  }
  if (options.trades !== undefined) {
    inputs.push({
      kind: 'trades',
      path: options.trades,
      layout:
        options.tradeLayout === 'binance-trades'
          ? BINANCE_TRADES_LAYOUT
          : columnsLayout(
              options.tradeColumns,
              TRADE_FIELDS,
              options.header,
              'timestamp=timestamp,price=price,quantity=quantity,side=side',
            ),
      ...common,
    });
  }
  if (options.candles !== undefined) {
    if (options.candleInterval === undefined) {
      throw new PaperbotError('INVALID_ARGUMENT', '--candles needs --candle-interval <ms>');
    }
    inputs.push({
      kind: 'candles',
      path: options.candles,
      layout: columnsLayout(
        options.candleColumns,
        CANDLE_FIELDS,
        options.header,
        'timestamp=timestamp,open=open,high=high,low=low,close=close,volume=volume',
      ),
      intervalMs: integerOption(options.candleInterval, 'candle-interval'),
      ...common,
    });
  }
  const report = await importRecording({
    out: options.out,
    market,
    inputs,
    compression: options.gzip === true ? 'gzip' : 'none',
  });
  dependencies.print(formatImportReport(report));
}

export function registerImportCommand(
  program: Command,
  dependencies: Partial<ImportCommandDependencies> = {},
): Command {
  const { command, dependencies: resolved } = defineCommand(
    program,
    'import',
    'Turn CSV trades, candles or book data into a recorded session for backtests.',
    standardOutput,
    dependencies,
  );
  return command
    .requiredOption('--out <dir>', 'the session folder to write (missing or empty)')
    .option('--market <id>', 'market id of the data')
    .option('--tick <decimal>', 'price tick; every price must be a multiple')
    .option('--step <decimal>', 'quantity step; every quantity must be a multiple')
    .option('--min-qty <decimal>', 'minimum order quantity')
    .option(
      '--market-file <file>',
      'YAML with market_id, price_tick, quantity_step, minimum_quantity',
    )
    .option('--trades <file>', 'trades CSV (.gz read as gzip)')
    .addOption(
      new Option('--trade-layout <layout>', 'columns (see --trade-columns) or binance-trades')
        .choices(['columns', 'binance-trades'])
        .default('columns'),
    )
    .option(
      '--trade-columns <map>',
      'timestamp=COL,price=COL,quantity=COL,side=COL|buyer_maker=COL[,id=COL]',
    )
    .option('--candles <file>', 'candles CSV')
    .option('--candle-columns <map>', 'timestamp=,open=,high=,low=,close=,volume= columns')
    .option('--candle-interval <ms>', 'candle length in milliseconds')
    .option('--book <file>', 'book CSV: snapshots or L2 updates, one level a row')
    .option('--book-columns <map>', 'timestamp=COL,side=COL,price=COL,quantity=COL')
    .addOption(
      new Option(
        '--book-mode <mode>',
        'updates (zero removes a level) or snapshots (rows of one time)',
      )
        .choices([...BOOK_MODES])
        .default('updates'),
    )
    .option('--depth <n>', 'levels per side in the snapshots written', '10')
    .option('--interval <ms>', 'snapshot interval in milliseconds', '1000')
    .option('--no-header', 'the CSV files have no header line (columns are 0-based indices)')
    .addOption(
      new Option('--time-unit <unit>', 'timestamp unit (auto: by digit count, or RFC 3339)')
        .choices([...TIME_UNITS])
        .default('auto'),
    )
    .option('--sort', 'sort rows by time (held in memory) instead of refusing time going backwards')
    .option('--gzip', 'write events.jsonl.gz')
    .action(async (options: ImportOptions) => {
      try {
        await execute(options, resolved);
      } catch (error) {
        const invalid =
          isPaperbotError(error) && ['INVALID_ARGUMENT', 'INVALID_CONFIG'].includes(error.code);
        throw commandFailure(
          'import',
          error,
          invalid ? IMPORT_EXIT.invalidArguments : IMPORT_EXIT.failed,
          resolved.printError,
        );
      }
    });
}
