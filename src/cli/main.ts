/**
 * The `paperbot` command line. Each command group lives in its own file under `commands/` and
 * registers itself on the program. A file is imported only for the command that runs (or whose
 * help is asked for), so `paperbot --help` and `--version` start without loading the runtime,
 * the emulator or replay; `COMMANDS` lists every command with its one-line summary for the help.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { isPaperbotError } from '../core/errors.ts';

type Register = (program: Command) => unknown;

export interface CommandEntry {
  readonly name: string;
  /** The summary `paperbot --help` lists; the command's own `.description()` (a test checks). */
  readonly summary: string;
  load(): Promise<Register>;
}

export const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'keys',
    summary: 'Create and manage developer key files',
    load: async () => (await import('./commands/keys.ts')).registerKeysCommands,
  },
  {
    name: 'emulator',
    summary:
      'Run the local Practice Trading Service (HTTP and WebSocket on one port) until SIGINT or SIGTERM.',
    load: async () => (await import('./commands/emulator.ts')).registerEmulatorCommands,
  },
  {
    name: 'new',
    summary: 'Create project files from templates',
    load: async () => (await import('./commands/new.ts')).registerNewCommands,
  },
  {
    name: 'run',
    summary:
      'Run the trading bot until SIGINT or SIGTERM. Without venue.key_file in the config, it trades on an embedded emulator.',
    load: async () => (await import('./commands/run.ts')).registerRunCommand,
  },
  {
    name: 'status',
    summary: 'Show a running bot: trading state, positions, open orders, PnL.',
    load: async () => (await import('./commands/status.ts')).registerStatusCommand,
  },
  {
    name: 'kill',
    summary:
      'Halt the bot (or --reduce-only, --clear): write the kill file of its config (risk.kill_switch.file). Cancels and closes still go out; nothing new is placed.',
    load: async () => (await import('./commands/kill.ts')).registerKillCommand,
  },
  {
    name: 'record',
    summary:
      "Record a session for backtests: tickers, book snapshots and trades (and, with a key, the account's private events).",
    load: async () => (await import('./commands/record.ts')).registerRecordCommand,
  },
  {
    name: 'download',
    summary:
      "Download a service's candles and trades into a recording (events and candles.json) for backtests and warm-up.",
    load: async () => (await import('./commands/download.ts')).registerDownloadCommand,
  },
  {
    name: 'backtest',
    summary:
      'Replay recorded sessions through the strategies, risk gate and executor on virtual time, and report.',
    load: async () => (await import('./commands/backtest.ts')).registerBacktestCommand,
  },
  {
    name: 'import',
    summary: 'Turn CSV trades, candles or book data into a recorded session for backtests.',
    load: async () => (await import('./commands/import.ts')).registerImportCommand,
  },
  {
    name: 'calibrate',
    summary:
      "Fit the backtest's latency (order, response, event legs as distributions) to a live journal; print a venue.latency YAML fragment.",
    load: async () => (await import('./commands/calibrate.ts')).registerCalibrateCommand,
  },
  {
    name: 'worker',
    summary: 'Run backtest sweep cells from a BullMQ queue on Redis (see backtest --queue).',
    load: async () => (await import('./commands/worker.ts')).registerWorkerCommand,
  },
  {
    name: 'doctor',
    summary: 'Check a key and its service step by step before running the bot (places nothing).',
    load: async () => (await import('./commands/doctor.ts')).registerDoctorCommand,
  },
  {
    name: 'verify',
    summary: 'Check recorded sessions against their manifests without replaying them.',
    load: async () => (await import('./commands/verify.ts')).registerVerifyCommand,
  },
  {
    name: 'export',
    summary:
      "Write a recorded session's events as Parquet files (one per record kind) for pandas, Polars or DuckDB.",
    load: async () => (await import('./commands/export.ts')).registerExportCommand,
  },
];

/** Every command exits 2 on a config file it refuses (the file's path is in the message). */
export const EXIT_INVALID_CONFIG = 2;

/** The package's version, from its package.json (two folders up, from src/ and from dist/). */
export function packageVersion(): string {
  const manifest = JSON.parse(
    readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
  ) as { version: string };
  return manifest.version;
}

/** The command `argv` runs (`paperbot help NAME` asks for NAME); null for none. */
function requestedCommand(argv: readonly string[]): string | null {
  const [first, second] = argv.slice(2).filter((argument) => !argument.startsWith('-'));
  return first === 'help' ? (second ?? null) : (first ?? null);
}

/**
 * The program for `argv`: every command listed by its summary, the one `argv` names loaded and
 * registered whole. Without `argv`, every command is loaded (tests, and a full help).
 */
export async function buildProgram(argv?: readonly string[]): Promise<Command> {
  const program = new Command('paperbot')
    .description(
      'Trading runtime, emulator and backtester for the Practice Trading Service (paper trading).',
    )
    .version(packageVersion(), '-V, --version', 'print the version')
    .showHelpAfterError()
    .exitOverride();
  const requested = argv === undefined ? undefined : requestedCommand(argv);
  for (const entry of COMMANDS) {
    if (requested === undefined || requested === entry.name) {
      (await entry.load())(program);
    } else {
      // Listed for the help; never run (the command that runs is the one loaded above).
      program.command(entry.name).description(entry.summary);
    }
  }
  return program;
}

/** Runs the CLI and resolves to the process exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  try {
    const program = await buildProgram(argv);
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
