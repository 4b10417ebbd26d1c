/**
 * `paperbot kill`: moves the kill switch of every bot watching the configured kill file
 * (`risk.kill_switch.file`): halted (the default), `--reduce-only`, or `--clear`. A running bot
 * obeys within its poll interval, one started later at start; the dashboard's Halt,
 * Reduce-only and Clear move the same switch. A halt must never be stood in the way of: a
 * config that does not parse still halts, through the kill file found as best as can be (the
 * raw `risk.kill_switch.file`, else the default), with a warning naming the problem.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { isPaperbotError, PaperbotError } from '../../core/errors.ts';
import {
  clearKill,
  type KillMode,
  KillSwitchConfig,
  requestKill,
} from '../../runtime/risk/index.ts';
import { DEFAULT_BOT_CONFIG_PATH, readConfigDocument, readRiskSection } from '../bot/config.ts';
import { type CommandOutput, printToStderr, printToStdout } from './terminal.ts';
import { defineCommand } from './define-command.ts';

export interface KillCommandDependencies extends Pick<CommandOutput, 'print'> {
  /** Warnings (a config problem the halt went past); default stderr. */
  readonly warn: (text: string) => void;
}

interface KillOptions {
  readonly config: string;
  readonly reason?: string;
  readonly clear?: boolean;
  readonly reduceOnly?: boolean;
}

/** Where the kill file is, and how often a bot looks at it. */
interface KillFileLocation {
  readonly file: string | null;
  readonly pollMs: number;
  readonly signal: string | null;
}

const DEFAULTS = KillSwitchConfig.parse({});

/**
 * The kill switch settings of `configPath`; when the `risk:` section does not parse, the raw
 * `risk.kill_switch.file` if it is a path, else the default, and `warn` says why.
 */
export function locateKillFile(configPath: string, warn: (text: string) => void): KillFileLocation {
  try {
    const killSwitch = readRiskSection(configPath).kill_switch;
    return { file: killSwitch.file, pollMs: killSwitch.poll_ms, signal: killSwitch.signal };
  } catch (error) {
    if (!isPaperbotError(error)) throw error;
    const raw = rawKillSwitch(configPath);
    const file = typeof raw.file === 'string' && raw.file.length > 0 ? raw.file : DEFAULTS.file;
    const pollMs = typeof raw.poll_ms === 'number' ? raw.poll_ms : DEFAULTS.poll_ms;
    warn(
      `warning: ${error.message.trim()}\nwarning: ${configPath} has the problem above; the kill switch goes on with the kill file ${
        file === null ? '(none)' : resolve(file)
      }${typeof raw.file === 'string' ? ' it names' : ' (the default)'}\n`,
    );
    return { file, pollMs, signal: null };
  }
}

/** `risk.kill_switch` as written, whatever else is wrong; empty when the file does not parse. */
function rawKillSwitch(configPath: string): Record<string, unknown> {
  let document: Record<string, unknown>;
  try {
    document = readConfigDocument(configPath);
  } catch {
    return {};
  }
  const risk = document.risk;
  if (risk === null || typeof risk !== 'object') return {};
  const killSwitch = (risk as Record<string, unknown>).kill_switch;
  if (killSwitch === null || typeof killSwitch !== 'object') return {};
  return killSwitch as Record<string, unknown>;
}

export function registerKillCommand(
  program: Command,
  dependencies: Partial<KillCommandDependencies> = {},
): Command {
  const { command, dependencies: resolved } = defineCommand(
    program,
    'kill',
    'Halt the bot (or --reduce-only, --clear): write the kill file of its config (risk.kill_switch.file). Cancels and closes still go out; nothing new is placed.',
    { print: printToStdout, warn: printToStderr },
    dependencies,
  );
  return command
    .option('--config <file>', 'bot config whose kill file to write', DEFAULT_BOT_CONFIG_PATH)
    .option('--reason <text>', 'why; shown in the bot log and status', 'paperbot kill')
    .option('--reduce-only', 'only orders that reduce exposure pass, instead of a halt')
    .option('--clear', 'remove the kill file: a running bot resumes trading')
    .action((options: KillOptions) => {
      if (options.clear === true && options.reduceOnly === true) {
        throw new PaperbotError('INVALID_ARGUMENT', '--clear and --reduce-only exclude each other');
      }
      const location = locateKillFile(options.config, resolved.warn);
      if (location.file === null) {
        throw new PaperbotError(
          'KILL_SWITCH_DISABLED',
          `${options.config} disables the kill file (risk.kill_switch.file: null)${
            location.signal === null ? '' : `; send ${location.signal} to the bot instead`
          }`,
        );
      }
      const path = resolve(location.file);
      if (options.clear === true) {
        const existed = clearKill(path);
        resolved.print(
          existed
            ? `removed the kill file ${path}: a running bot resumes within ${location.pollMs} ms (a daily loss limit still applies)\n`
            : `there was no kill file at ${path}\n`,
        );
        return;
      }
      const mode: KillMode = options.reduceOnly === true ? 'reduce-only' : 'halt';
      requestKill(path, options.reason ?? 'paperbot kill', mode);
      const what = mode === 'halt' ? 'halts' : 'goes reduce-only';
      resolved.print(
        `wrote the kill file ${path}: a running bot ${what} within ${location.pollMs} ms, and one started later at start; \`paperbot kill --clear\` resumes\n`,
      );
    });
}
