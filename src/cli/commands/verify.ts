/**
 * `paperbot verify DIR...`: checks recorded sessions without replaying them (docs/backtesting.md,
 * "Verifying a recording"): every record read and checked, then count, byte length and SHA-256
 * against the manifest, and the cache's state. Exits 0 when every session is as its manifest
 * claims, 1 when one is damaged or cannot be read.
 */
import type { Command } from 'commander';
import { isoTimestamp } from '../../core/clock.ts';
import {
  describeDamage,
  isDamaged,
  verifyRecording,
  type VerifyResult,
} from '../../replay/format/index.ts';
import { commandFailure, type CommandOutput, standardOutput } from './terminal.ts';
import { defineCommand } from './define-command.ts';

export const VERIFY_EXIT = { ok: 0, damaged: 1 } as const;

export type VerifyCommandDependencies = CommandOutput;

const CACHE_TEXT = {
  none: 'no events.cache',
  matches: 'events.cache is the cache of this events file',
  stale: 'events.cache is of another events file (rebuilt on the next backtest)',
} as const;

export function formatVerifyResult(result: VerifyResult): string {
  const range =
    result.firstT === null
      ? 'no records'
      : `${isoTimestamp(result.firstT)} to ${isoTimestamp(result.lastT!)}`;
  const lines = [
    `${result.directory}: recording version ${result.manifestVersion}, ${result.complete ? 'complete' : 'not closed cleanly'}, ${result.records} records, ${range}`,
  ];
  const damage = describeDamage(result.damage);
  lines.push(...damage.map((line) => `  ${line}`));
  lines.push(`  ${CACHE_TEXT[result.cache]}`);
  lines.push(isDamaged(result.damage) ? '  DAMAGED' : '  OK: as its manifest claims');
  return `${lines.join('\n')}\n`;
}

export function registerVerifyCommand(
  program: Command,
  dependencies: Partial<VerifyCommandDependencies> = {},
): Command {
  const { command, dependencies: resolved } = defineCommand(
    program,
    'verify',
    'Check recorded sessions against their manifests without replaying them.',
    standardOutput,
    dependencies,
  );
  return command.argument('<dirs...>', 'session folders').action(async (directories: string[]) => {
    let damaged = false;
    for (const directory of directories) {
      try {
        const result = await verifyRecording(directory);
        resolved.print(formatVerifyResult(result));
        damaged ||= isDamaged(result.damage);
      } catch (error) {
        throw commandFailure('verify', error, VERIFY_EXIT.damaged, resolved.printError);
      }
    }
    if (damaged) {
      throw commandFailure(
        'verify',
        new Error('a recording is not what its manifest claims'),
        VERIFY_EXIT.damaged,
        resolved.printError,
      );
    }
  });
}
