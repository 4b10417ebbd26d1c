/**
 * `paperbot export --parquet DIR RECORDING`: a recorded session's events as Parquet files, one
 * per record kind with typed columns (docs/backtesting.md, "Parquet"), for pandas, Polars and
 * DuckDB. The recording is checked against its manifest as a backtest checks it; nothing is
 * written beside it. Prints each file written with its row count.
 */
import type { Command } from 'commander';
import { PaperbotError } from '../../core/errors.ts';
import { exportRecordingParquet } from '../../replay/parquet/recording.ts';
import { commandFailure, printToStderr, printToStdout } from './terminal.ts';

export const EXPORT_EXIT = { ok: 0, failed: 1 } as const;

export interface ExportCommandDependencies {
  readonly print: (text: string) => void;
  readonly printError: (text: string) => void;
}

interface ExportCommandOptions {
  readonly parquet?: string;
  readonly markets?: string;
  readonly rowGroupRows?: string;
}

function rowGroupRowsOption(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > 10_000_000) {
    throw new PaperbotError(
      'INVALID_ARGUMENT',
      `--row-group-rows ${text}: must be an integer from 1 to 10000000`,
    );
  }
  return Number(text);
}

export function registerExportCommand(
  program: Command,
  dependencies: Partial<ExportCommandDependencies> = {},
): Command {
  const resolved: ExportCommandDependencies = {
    print: printToStdout,
    printError: printToStderr,
    ...dependencies,
  };
  return program
    .command('export')
    .description(
      "Write a recorded session's events as Parquet files (one per record kind) for pandas, Polars or DuckDB.",
    )
    .argument('<recording>', 'recorded session folder')
    .option('--parquet <dir>', 'write the Parquet files into this folder (created when missing)')
    .option('--markets <ids>', 'only these markets (comma-separated)')
    .option('--row-group-rows <n>', 'rows per Parquet row group (default 50000)')
    .action(async (recording: string, options: ExportCommandOptions) => {
      try {
        if (options.parquet === undefined) {
          throw new PaperbotError(
            'INVALID_ARGUMENT',
            'export needs --parquet DIR (the one format it writes)',
          );
        }
        const markets = options.markets
          ?.split(',')
          .map((market) => market.trim())
          .filter((market) => market !== '');
        const rowGroupRows = rowGroupRowsOption(options.rowGroupRows);
        const result = await exportRecordingParquet(recording, options.parquet, {
          ...(markets === undefined ? {} : { markets }),
          ...(rowGroupRows === undefined ? {} : { rowGroupRows }),
        });
        const lines = (Object.keys(result.paths) as (keyof typeof result.paths)[]).map(
          (kind) => `${result.paths[kind]}: ${result.rows[kind]} rows`,
        );
        resolved.print(
          `${result.records} records of ${recording} exported:\n${lines.map((line) => `  ${line}\n`).join('')}`,
        );
      } catch (error) {
        throw commandFailure('export', error, EXPORT_EXIT.failed, resolved.printError);
      }
    });
}
