import { Command, CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { PaperbotError } from '../../src/core/errors.ts';
import { defineCommand } from '../../src/cli/commands/define-command.ts';
import { inputOrRunFailure } from '../../src/cli/commands/terminal.ts';

interface Dependencies {
  readonly print: (text: string) => void;
  readonly printError: (text: string) => void;
}

const fail = (text: string): never => {
  throw new Error(`unexpected output: ${text}`);
};

describe('defineCommand', () => {
  it('adds the named command with its description and fills what was not given', () => {
    const program = new Command('paperbot');
    const printed: string[] = [];
    const defaults: Dependencies = { print: fail, printError: fail };
    const { command, dependencies } = defineCommand(
      program,
      'status',
      'Show a running bot.',
      defaults,
      { print: (text) => printed.push(text) },
    );
    expect(program.commands).toEqual([command]);
    expect(command.name()).toBe('status');
    expect(command.description()).toBe('Show a running bot.');
    dependencies.print('hello');
    expect(printed).toEqual(['hello']);
    expect(dependencies.printError).toBe(fail);
  });

  it('keeps the default of a dependency given as undefined, as the commands did before', () => {
    const defaults: Dependencies = { print: fail, printError: fail };
    const { dependencies } = defineCommand(new Command(), 'kill', 'Halt the bot.', defaults, {
      print: undefined,
    });
    expect(dependencies.print).toBe(fail);
    expect(defaults.print).toBe(fail);
  });
});

describe('inputOrRunFailure', () => {
  const exits = { failed: 1, invalidArguments: 2 };

  it('exits 2 on bad arguments, config or key file and 1 on a failed run', () => {
    const errors: string[] = [];
    const printError = (text: string) => errors.push(text);
    const cases: [unknown, number][] = [
      [new PaperbotError('INVALID_ARGUMENT', 'bad --since'), 2],
      [new PaperbotError('INVALID_CONFIG', 'bad venue'), 2],
      [new PaperbotError('KEY_FILE_UNREADABLE', 'no key'), 2],
      [new PaperbotError('VENUE_UNAVAILABLE', 'down'), 1],
      [new Error('boom'), 1],
    ];
    for (const [error, exitCode] of cases) {
      const failure = inputOrRunFailure('download', error, exits, printError);
      expect(failure).toBeInstanceOf(CommanderError);
      expect(failure.exitCode).toBe(exitCode);
    }
    expect(errors[0]).toBe('paperbot download: bad --since\n');
    expect(errors[4]).toBe('paperbot download: boom\n');
  });
});
