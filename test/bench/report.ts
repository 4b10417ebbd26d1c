/** Shared printing of benchmark results, so every bench file reports the same way. */
import type { Bench } from 'tinybench';

export function printBench(bench: Bench): void {
  const rows = bench.tasks.map((task) => {
    const result = task.result;
    if (!result || result.state !== 'completed') {
      return { task: task.name, 'ops/s': 'failed', 'p50 (us)': '', 'p99 (us)': '' };
    }
    return {
      task: task.name,
      'ops/s': Math.round(result.throughput.mean).toLocaleString('en-US'),
      'p50 (us)': (result.latency.p50 * 1000).toFixed(2),
      'p99 (us)': (result.latency.p99 * 1000).toFixed(2),
    };
  });
  console.table(rows);
}

/** Prints a latency summary of samples measured in milliseconds. */
export function printLatency(
  name: string,
  samplesMs: number[],
  extra: Record<string, string> = {},
) {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  console.table([
    {
      task: name,
      samples: sorted.length,
      'p50 (ms)': at(0.5).toFixed(3),
      'p99 (ms)': at(0.99).toFixed(3),
      ...extra,
    },
  ]);
}
