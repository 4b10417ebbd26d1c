/**
 * `npm run soak -- --minutes N [--sample S] [--warmup M] [--keep]`: the soak (./soak.ts). Prints
 * one table row per sample (a minute by default) and exits 1 when a figure trends beyond its
 * bound after the warm-up (a quarter of the run by default, at least one sample interval).
 */
import { runSoak } from './soak.ts';

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
