/**
 * `npm run soak -- --minutes N [--sample S] [--warmup M] [--keep]`: the soak (./soak.ts). Prints
 * one table row per sample (a minute by default) and exits 1 when a figure trends beyond its
 * bound after the warm-up (a quarter of the run by default, at least one sample interval).
 * `--analyze FILE` judges the table a run printed into FILE again, with this code's bounds.
 */
import { readFileSync } from 'node:fs';
import { analyze, runSoak, samplesFromTable, soakRetention } from './soak.ts';

const args = process.argv.slice(2);
function option(name: string, fallback: number): number {
  const index = args.indexOf(`--${name}`);
  if (index < 0) return fallback;
  const value = Number(args[index + 1]);
  if (!Number.isFinite(value) || value <= 0) {
    process.stderr.write(`--${name} needs a positive number, not ${args[index + 1]}\n`);
    process.exit(2);
  }
  return value;
}

const analyzeIndex = args.indexOf('--analyze');
if (analyzeIndex >= 0) {
  const samples = samplesFromTable(readFileSync(String(args[analyzeIndex + 1]), 'utf8'));
  const length = samples[samples.length - 1]?.minute ?? 0;
  const run = option('minutes', Math.round(length));
  const { windowMs, intervalMs } = soakRetention(run);
  const verdict = analyze(samples, option('warmup', run / 4), (windowMs + intervalMs) / 60_000);
  process.stdout.write(`${samples.length} samples over ${length.toFixed(1)} min\n`);
  for (const line of verdict.lines) process.stdout.write(`${line}\n`);
  process.exit(verdict.failures.length === 0 ? 0 : 1);
}

const minutes = option('minutes', 60);
const sampleSeconds = option('sample', minutes >= 10 ? 60 : 10);
const warmupMinutes = option('warmup', Math.max(sampleSeconds / 60, minutes / 4));
const result = await runSoak({
  minutes,
  sampleSeconds,
  warmupMinutes,
  keep: args.includes('--keep'),
  out: (line) => process.stdout.write(`${line}\n`),
});
process.exit(result.failures.length === 0 ? 0 : 1);
