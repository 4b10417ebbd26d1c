/**
 * Preloaded (`--import`) into each child process of the intent-cost bench, in front of either
 * tree's CLI: it measures the whole process from here to its exit and writes one JSON line to
 * the file named by `INTENT_COST_PROBE_OUT`. It imports nothing from either tree, so it works
 * against any revision. The bench subtracts a run of the same tree on a recording of three
 * records (start, shutdown, report, module loading: everything but the replay).
 *
 * Allocation: V8 counts no bytes allocated, so they are read off the garbage collector. The
 * heap in use only grows between two collections, by what was allocated, and only shrinks in
 * one; so the bytes allocated are the sum over the collections of the heap in use before each
 * one minus the heap in use after the one before (after the start, for the first), plus the
 * heap in use at exit minus after the last collection (`v8.GCProfiler`). Objects promoted or
 * compacted move without changing the sum; what a collection frees it had to allocate first.
 */
import { writeFileSync } from 'node:fs';
import { GCProfiler, getHeapStatistics } from 'node:v8';

const out = process.env.INTENT_COST_PROBE_OUT;
if (out === undefined) throw new Error('INTENT_COST_PROBE_OUT names no file');

const rssStart = process.memoryUsage().rss;
const heapStart = getHeapStatistics().used_heap_size;
const cpuStart = process.cpuUsage();
const profiler = new GCProfiler();
profiler.start();

process.on('exit', () => {
  const cpu = process.cpuUsage(cpuStart);
  const heapEnd = getHeapStatistics().used_heap_size;
  const { statistics } = profiler.stop();
  let allocated = 0;
  let afterPrevious = heapStart;
  for (const gc of statistics) {
    allocated += Math.max(0, gc.beforeGC.heapStatistics.usedHeapSize - afterPrevious);
    afterPrevious = gc.afterGC.heapStatistics.usedHeapSize;
  }
  allocated += Math.max(0, heapEnd - afterPrevious);
  writeFileSync(
    out,
    JSON.stringify({
      cpuUs: cpu.user + cpu.system,
      allocatedBytes: allocated,
      collections: statistics.length,
      rssStartBytes: rssStart,
      rssEndBytes: process.memoryUsage().rss,
      maxRssBytes: process.resourceUsage().maxRSS * 1024,
    }),
  );
});
