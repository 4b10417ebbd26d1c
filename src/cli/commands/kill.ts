/**
 * `paperbot kill`: halts every bot watching the configured kill file by writing it
 * (`risk.kill_switch.file`). Only the `risk:` section of the config is read, so a mistake
 * elsewhere in the file never stands in the way of a halt. `--clear` removes the file, which
 * lets a restarted bot trade again.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { PaperbotError } from '../../core/errors.ts';
import { clearKill, requestKill } from '../../runtime/risk/index.ts';
import { DEFAULT_BOT_CONFIG_PATH, readRiskSection } from '../bot/config.ts';
import { printToStdout } from './terminal.ts';

export interface KillCommandDependencies {
  readonly print: (text: string) => void;
}

interface KillOptions {
  readonly config: string;
  readonly reason?: string;
  readonly clear?: boolean;
}

export function registerKillCommand(
  program: Command,
  dependencies: Partial<KillCommandDependencies> = {},
): Command {
  const print = dependencies.print ?? printToStdout;
  return program
    .command('kill')
    .description(
      'Halt the bot: write the kill file of its config (risk.kill_switch.file). Cancels and closes still go out; nothing new is placed.',
    )
    .option('--config <file>', 'bot config whose kill file to write', DEFAULT_BOT_CONFIG_PATH)
    .option('--reason <text>', 'why; shown in the bot log and status', 'paperbot kill')
    .option('--clear', 'remove the kill file instead (a restarted bot then trades again)')
    .action((options: KillOptions) => {
      const risk = readRiskSection(options.config);
      const file = risk.kill_switch.file;
      if (file === null) {
        throw new PaperbotError(
          'KILL_SWITCH_DISABLED',
          `${options.config} disables the kill file (risk.kill_switch.file: null)${
            risk.kill_switch.signal === null
              ? ''
              : `; send ${risk.kill_switch.signal} to the bot instead`
          }`,
        );
      }
      const path = resolve(file);
      if (options.clear === true) {
        const existed = clearKill(path);
        print(existed ? `removed the kill file ${path}\n` : `there was no kill file at ${path}\n`);
        return;
      }
      requestKill(path, options.reason ?? 'paperbot kill');
      print(
        `wrote the kill file ${path}: a running bot halts within ${risk.kill_switch.poll_ms} ms, and one started later halts at start\n`,
      );
    });
}
