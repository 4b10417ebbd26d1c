/**
 * What the commands share to reach the terminal and the process: standard output and error,
 * the stop signals, and the one way a command fails (its message on stderr, then the exit code).
 */
import { CommanderError } from 'commander';
import { isPaperbotError } from '../../core/errors.ts';

export function printToStdout(text: string): void {
  process.stdout.write(text);
}

export function printToStderr(text: string): void {
  process.stderr.write(text);
}

/** Calls `onSignal` on SIGINT and SIGTERM; returns the function that stops listening. */
export function listenForStopSignals(onSignal: (signal: NodeJS.Signals) => void): () => void {
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];
  for (const signal of signals) process.on(signal, onSignal);
  return () => {
    for (const signal of signals) process.off(signal, onSignal);
  };
}

/**
 * Prints `paperbot <command>: <message>` and returns the CommanderError that ends the process
 * with `exitCode`; the caller throws it.
 */
export function commandFailure(
  command: string,
  error: unknown,
  exitCode: number,
  printError: (text: string) => void,
): CommanderError {
  const message = error instanceof Error ? error.message : String(error);
  printError(`paperbot ${command}: ${message}\n`);
  return new CommanderError(exitCode, `paperbot.${command}`, message);
}

/** Whether a command failed on what it was given (arguments, config, key file), not on the venue. */
function isInvalidInput(error: unknown): boolean {
  return (
    isPaperbotError(error) &&
    (['INVALID_ARGUMENT', 'INVALID_CONFIG'].includes(error.code) ||
      error.code.startsWith('KEY_FILE_'))
  );
}

/** The exit codes of a command that tells a bad input from a failed run. */
export interface InputOrRunExits {
  readonly failed: number;
  readonly invalidArguments: number;
}

/** `commandFailure` whose exit code says whether the input given or the run itself was at fault. */
export function inputOrRunFailure(
  command: string,
  error: unknown,
  exits: InputOrRunExits,
  printError: (text: string) => void,
): CommanderError {
  const exitCode = isInvalidInput(error) ? exits.invalidArguments : exits.failed;
  return commandFailure(command, error, exitCode, printError);
}

/** Resolves with the first SIGINT or SIGTERM, and stops listening then. */
export function nextStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stopListening = listenForStopSignals((signal) => {
      stopListening();
      resolve(signal);
    });
  });
}

/** Where a command writes its result and its errors. */
export interface CommandOutput {
  readonly print: (text: string) => void;
  readonly printError: (text: string) => void;
}

/** The process's standard output and error, the default `CommandOutput` of every command. */
export const standardOutput: CommandOutput = { print: printToStdout, printError: printToStderr };
