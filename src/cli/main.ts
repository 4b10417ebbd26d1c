/**
 * The `paperbot` command line. Each command group lives in its own file under
 * `commands/` and registers itself on the program here.
 */
import { Command, CommanderError } from 'commander';
import { registerBacktestCommand } from './commands/backtest.ts';
import { registerEmulatorCommands } from './commands/emulator.ts';
import { registerImportCommand } from './commands/import.ts';
import { registerKeysCommands } from './commands/keys.ts';
import { registerKillCommand } from './commands/kill.ts';
import { registerNewCommands } from './commands/new.ts';
import { registerRecordCommand } from './commands/record.ts';
import { registerRunCommand } from './commands/run.ts';
import { registerStatusCommand } from './commands/status.ts';
import { registerWorkerCommand } from './commands/worker.ts';
import { isPaperbotError } from '../core/errors.ts';

/** Every command exits 2 on a config file it refuses (the file's path is in the message). */
export const EXIT_INVALID_CONFIG = 2;

export function buildProgram(): Command {
  const program = new Command('paperbot')
    .description(
      'Trading runtime, emulator and backtester for the Practice Trading Service (paper trading).',
    )
    .showHelpAfterError()
    .exitOverride();
  registerKeysCommands(program);
  registerEmulatorCommands(program);
  registerNewCommands(program);
  registerRunCommand(program);
  registerStatusCommand(program);
  registerKillCommand(program);
  registerRecordCommand(program);
  registerBacktestCommand(program);
  registerImportCommand(program);
  registerWorkerCommand(program);
  return program;
}

/** Runs the CLI and resolves to the process exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync([...argv]);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode;
    }
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`paperbot: ${message}\n`);
    return isPaperbotError(error) && error.code === 'INVALID_CONFIG' ? EXIT_INVALID_CONFIG : 1;
  }
}
