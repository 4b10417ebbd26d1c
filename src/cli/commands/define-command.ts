/**
 * The opening every command module shares: add the named command with its description to the
 * program, and fill the dependencies a caller (a test) did not give from the command's defaults.
 */
import type { Command } from 'commander';

export interface DefinedCommand<D extends object> {
  readonly command: Command;
  readonly dependencies: D;
}

/** A given dependency left `undefined` keeps its default, as an absent one does. */
export function defineCommand<D extends object>(
  program: Command,
  name: string,
  description: string,
  defaults: D,
  given: Partial<D>,
): DefinedCommand<D> {
  const dependencies: D = { ...defaults };
  for (const key of Object.keys(given) as (keyof D)[]) {
    const value = given[key];
    if (value !== undefined) dependencies[key] = value as D[keyof D];
  }
  return { command: program.command(name).description(description), dependencies };
}
