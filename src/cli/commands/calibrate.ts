/**
 * `paperbot calibrate --journal FILE`: fits the replay's latency (order, response and event legs,
 * each as a distribution) to what a live bot's journal measured, and prints it, or writes it to
 * `--out`, as a YAML fragment for backtest.yaml's `venue.latency` (docs/backtesting.md,
 * "Calibrating latency from live").
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import {
  cancelAppliedTimes,
  fitLatency,
  journalSamples,
  latencyFragment,
} from '../../replay/calibrate/index.ts';
import { printToStdout } from './terminal.ts';
import { defineCommand } from './define-command.ts';

export interface CalibrateCommandDependencies {
  readonly print: (text: string) => void;
}

interface CalibrateOptions {
  readonly journal: string;
  readonly out?: string;
  readonly recording?: string;
}

export function registerCalibrateCommand(
  program: Command,
  dependencies: Partial<CalibrateCommandDependencies> = {},
): Command {
  const { command, dependencies: resolved } = defineCommand(
    program,
    'calibrate',
    "Fit the backtest's latency (order, response, event legs as distributions) to a live journal; print a venue.latency YAML fragment.",
    { print: printToStdout },
    dependencies,
  );
  return command
    .requiredOption('--journal <file>', 'the live bot journal (SQLite) to measure; the bot stopped')
    .option(
      '--recording <dir>',
      "a recording of the same session with its private events: splits each round trip at the venue's time",
    )
    .option('--out <file>', 'write the fragment here instead of printing it')
    .action(async (options: CalibrateOptions) => {
      const journal = resolve(options.journal);
      const samples = journalSamples(journal);
      const appliedAt =
        options.recording === undefined
          ? undefined
          : await cancelAppliedTimes(
              resolve(options.recording),
              new Set(samples.cancels.flatMap((cancel) => cancel.orderId ?? [])),
            );
      const source =
        options.recording === undefined ? journal : `${journal} and ${resolve(options.recording)}`;
      const fragment = latencyFragment(fitLatency(samples, appliedAt), source);
      if (options.out === undefined) {
        resolved.print(fragment);
        return;
      }
      const out = resolve(options.out);
      writeFileSync(out, fragment);
      resolved.print(`wrote ${out}\n`);
    });
}
