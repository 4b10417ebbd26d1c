/**
 * `paperbot export --parquet DIR RECORDING`: a recorded session's events as Parquet files, one
 * per record kind with typed columns (docs/backtesting.md, "Parquet"), for pandas, Polars and
 * DuckDB. The recording is checked against its manifest as a backtest checks it; nothing is
 * written beside it. Prints each file written with its row count.
 */
import type { Command } from 'commander';
import { PaperbotError } from '../../core/errors.ts';
import { exportRecordingParquet } from '../../replay/parquet/recording.ts';
import { commandFailure, type CommandOutput, standardOutput } from './terminal.ts';
import { defineCommand } from './define-command.ts';

export const EXPORT_EXIT = { ok: 0, failed: 1 } as const;

export type ExportCommandDependencies = CommandOutput;

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
  const { command, dependencies: resolved } = defineCommand(
    program,
    'export',
    "Write a recorded session's events as Parquet files (one per record kind) for pandas, Polars or DuckDB.",
    standardOutput,
    dependencies,
  );
  return command
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
