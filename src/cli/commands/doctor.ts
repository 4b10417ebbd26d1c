/**
 * `paperbot doctor`: the first command to run with a real key. It reads the key (`--key`, or
 * the config's `venue.key_file`) and the wire profile to sign with (`--wire`, or the config's
 * `venue.wire`), then checks in order everything the bot needs from the
 * service, each with a verdict and one line of advice, and places nothing. Exit 0 when the bot
 * could trade, 1 when not; `--json` prints the report for scripts.
 */
import { type Command, CommanderError } from 'commander';
import { systemClock } from '../../core/clock.ts';
import { PaperbotError } from '../../core/errors.ts';
import { runDoctor, ORDER_OF_CHECKS } from '../doctor/checks.ts';
import {
  type CheckResult,
  type DoctorReport,
  renderJson,
  renderText,
  reportOf,
} from '../doctor/report.ts';
import { type DoctorSource, loadDoctorTarget, sourceLabel } from '../doctor/target.ts';
import { printToStdout } from './terminal.ts';
import { defineCommand } from './define-command.ts';

export interface DoctorCommandDependencies {
  readonly print: (text: string) => void;
}

interface DoctorOptions {
  readonly config?: string;
  readonly key?: string;
  readonly caFile?: string;
  readonly wire?: string;
  readonly market?: string[];
  readonly timeoutMs?: string;
  readonly json?: boolean;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** The report for a source: the local `config` check first, then the service's. */
export async function doctorReport(
  source: DoctorSource,
  timeoutMs: number | undefined,
): Promise<DoctorReport> {
  let settings;
  try {
    settings = await loadDoctorTarget(source);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const checks: CheckResult[] = [
      {
        id: 'config',
        verdict: 'fail',
        summary: message,
        advice: 'fix the key file or the config; nothing was sent',
      },
      ...ORDER_OF_CHECKS.map((id): CheckResult => ({
        id,
        verdict: 'skip',
        summary: 'not checked',
        advice: 'fix "config" first',
      })),
    ];
    return reportOf({ restUrl: null, wsUrl: null, keyId: null, accountId: null }, checks);
  }
  const report = await runDoctor(settings, {
    clock: systemClock,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });
  const config: CheckResult = {
    id: 'config',
    verdict: 'ok',
    summary: `key ${settings.credential.keyId} (scopes ${settings.credential.scopes.join(', ')}) from ${sourceLabel(source)}${settings.transport.ca === undefined ? '' : ', with its CA file'}; wire profile ${settings.wireSource}`,
    advice: null,
  };
  return reportOf(report.target, [config, ...report.checks]);
}

export function registerDoctorCommand(
  program: Command,
  dependencies: Partial<DoctorCommandDependencies> = {},
): Command {
  const { command, dependencies: resolved } = defineCommand(
    program,
    'doctor',
    'Check a key and its service step by step before running the bot (places nothing).',
    { print: printToStdout },
    dependencies,
  );
  return command
    .option(
      '--config <file>',
      'bot config: its venue.key_file, venue.ca_file, venue.wire and markets',
    )
    .option('--key <file>', 'a key file, without a config')
    .option('--ca-file <file>', 'PEM certificates to trust (overrides venue.ca_file)')
    .option('--wire <file>', 'a wire profile file to sign with (overrides venue.wire)')
    .option('--market <id>', 'simulate an order on this market (repeatable)', collect)
    .option('--timeout-ms <ms>', 'each network step (default: venue.request_timeout_ms, 10000)')
    .option('--json', 'print the report as JSON')
    .action(async (options: DoctorOptions) => {
      if ((options.config === undefined) === (options.key === undefined)) {
        throw new PaperbotError('INVALID_ARGUMENT', 'give one of --config FILE and --key FILE');
      }
      let timeoutMs: number | undefined;
      if (options.timeoutMs !== undefined) {
        timeoutMs = Number(options.timeoutMs);
        if (!/^\d+$/.test(options.timeoutMs) || timeoutMs < 1 || timeoutMs > 120_000) {
          throw new PaperbotError(
            'INVALID_ARGUMENT',
            '--timeout-ms must be an integer from 1 to 120000',
          );
        }
      }
      const report = await doctorReport(
        {
          ...(options.config === undefined ? {} : { config: options.config }),
          ...(options.key === undefined ? {} : { key: options.key }),
          ...(options.caFile === undefined ? {} : { caFile: options.caFile }),
          ...(options.wire === undefined ? {} : { wire: options.wire }),
          ...(options.market === undefined ? {} : { markets: options.market }),
        },
        timeoutMs,
      );
      resolved.print(options.json === true ? renderJson(report) : renderText(report));
      if (!report.ok) {
        throw new CommanderError(1, 'paperbot.doctor', 'the bot cannot trade');
      }
    });
}
