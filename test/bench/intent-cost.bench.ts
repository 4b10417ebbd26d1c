/**
 * The market maker's cost per intent, this tree against a previous revision run back to back in
 * the same bench (ratios: the machine may be shared). `npm run bench -- intent-cost`.
 *
 * Each side is the market-maker backtest of config/backtest.yaml, from its own tree's sources
 * (tsx), on the bundled sample looped `--copies N` times (4 by default; each copy one hour
 * later), through the CLI (`paperbot backtest --json`, `intent-cost/cli.ts`), one child process
 * per run. The baseline is `--baseline REV` (or `BASELINE=REV`; `ec34d35` by default: the commit
 * issue 29 started from), checked out once with `git worktree add --detach` into
 * `.bench-baseline/REV` (ignored; node_modules linked from this tree) and kept for the next run.
 *
 * A preload (`intent-cost/probe.ts`) measures each child from its start to its exit: CPU time
 * (user + system), bytes allocated (summed over the garbage collections, see the probe), RSS.
 * Each full run is paired with a run of the same tree on the sample's first three records (no
 * intent: module loading, the kernel's start and shutdown, the report), whose figures are
 * subtracted, so what remains is the replay. Per intent = that difference over the intents of
 * the full run. One unmeasured full run of each tree first (it builds the recording's decode
 * cache and warms the disk); then `--runs N` rounds (3 by default, at least 3), each the current
 * tree then the baseline (A B A B ...); the median of each figure is printed, and the ratio.
 *
 * The reports of both trees on the looped sample must be byte-identical once the `run` block
 * (the run's own CPU and memory) is left out; the bench says whether they are and fails if not.
 */
import { spawn, execFileSync } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const ROOT = join(here, '..', '..');
const SAMPLE = 'backtest-data/emulator-seed42-1h';
/** Relative to each tree's root, so both reports name the same data folder. */
const DATA_DIR = '.bench-baseline/intent-cost-data';
const HEAD_RECORDS = 3;

function option(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? undefined : process.argv[index + 1];
}

const BASELINE = option('baseline') ?? process.env.BASELINE ?? 'ec34d35';
const COPIES = Number(option('copies') ?? process.env.COPIES ?? 4);
const RUNS = Math.max(3, Number(option('runs') ?? process.env.RUNS ?? 3));
if (!Number.isInteger(COPIES) || COPIES < 1)
  throw new Error(`--copies takes a count, not ${COPIES}`);

/** The baseline revision's worktree, added on first use and reused while it is at `rev`. */
function baselineTree(rev: string): string {
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
  const commit = git('rev-parse', '--verify', `${rev}^{commit}`);
  const tree = join(ROOT, '.bench-baseline', commit.slice(0, 12));
  if (existsSync(join(tree, '.git'))) {
    const at = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: tree, encoding: 'utf8' }).trim();
    if (at !== commit) throw new Error(`${tree} is at ${at}, not ${commit}: remove it`);
  } else {
    git('worktree', 'add', '--detach', tree, commit);
  }
  if (!existsSync(join(tree, 'node_modules'))) {
    execFileSync('ln', ['-s', join(ROOT, 'node_modules'), join(tree, 'node_modules')]);
  }
  return tree;
}

interface Line {
  readonly t: number;
  readonly text: string;
}

/** The sample's events, each line with its time, read once. */
async function sampleLines(): Promise<Line[]> {
  const text = gunzipSync(await readFile(join(ROOT, SAMPLE, 'events.jsonl.gz'))).toString('utf8');
  return text
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => ({ t: (JSON.parse(line) as { t: number }).t, text: line }));
}

type Kind = 'ticker' | 'book' | 'trade' | 'private' | 'gap';

/**
 * A recording of the sample's events `copies` times over, each copy one span later (its records
 * otherwise unchanged, as replay.bench.ts loops it), or of its first `limit` records: the
 * sample's manifest with the counts, time range and integrity of the new events file.
 */
async function writeRecording(
  directory: string,
  lines: readonly Line[],
  copies: number,
  limit = Number.POSITIVE_INFINITY,
): Promise<void> {
  if (existsSync(join(directory, 'manifest.json'))) return;
  await mkdir(directory, { recursive: true });
  const manifest = JSON.parse(await readFile(join(ROOT, SAMPLE, 'manifest.json'), 'utf8')) as {
    time_range: { first_t: number; last_t: number };
    counts: {
      total: number;
      by_kind: Record<Kind, number>;
      by_market: Record<string, Record<Kind, number>>;
    };
    files: Record<string, unknown>;
  };
  const span = lines[lines.length - 1]!.t - lines[0]!.t + 1_000;
  const out: string[] = [];
  const counts = {
    total: 0,
    by_kind: zeroCounts(),
    by_market: {} as Record<string, Record<Kind, number>>,
  };
  for (let copy = 0; copy < copies && out.length < limit; copy++) {
    for (const line of lines) {
      if (out.length >= limit) break;
      const record = JSON.parse(line.text) as { t: number; k: Kind; m?: string };
      out.push(JSON.stringify({ ...record, t: record.t + copy * span }));
      counts.total++;
      counts.by_kind[record.k]++;
      if (record.m !== undefined) (counts.by_market[record.m] ??= zeroCounts())[record.k]++;
    }
  }
  for (const market of Object.keys(manifest.counts.by_market))
    counts.by_market[market] ??= zeroCounts();
  const bytes = gzipSync(out.map((line) => `${line}\n`).join(''));
  const firstT = (JSON.parse(out[0]!) as { t: number }).t;
  const lastT = (JSON.parse(out[out.length - 1]!) as { t: number }).t;
  await writeFile(join(directory, 'events.jsonl.gz'), bytes);
  await copyFile(join(ROOT, SAMPLE, 'candles.json'), join(directory, 'candles.json'));
  const written = {
    ...manifest,
    time_range: { first_t: firstT, last_t: lastT },
    counts,
    files: {
      'events.jsonl.gz': {
        records: out.length,
        bytes: bytes.length,
        sha256: createHash('sha256').update(bytes).digest('hex'),
        first_t: firstT,
        last_t: lastT,
      },
    },
  };
  await writeFile(join(directory, 'manifest.json'), `${JSON.stringify(written, null, 2)}\n`);
}

function zeroCounts(): Record<Kind, number> {
  return { ticker: 0, book: 0, trade: 0, private: 0, gap: 0 };
}

interface Probe {
  readonly cpuUs: number;
  readonly allocatedBytes: number;
  readonly collections: number;
  readonly rssStartBytes: number;
  readonly rssEndBytes: number;
  readonly maxRssBytes: number;
}

interface Run extends Probe {
  readonly intents: number;
  readonly events: number;
  /** The report as printed. */
  readonly report: string;
}

const probeUrl = pathToFileURL(join(here, 'intent-cost', 'probe.ts')).href;
const cliPath = join(here, 'intent-cost', 'cli.ts');

/** One `paperbot backtest --json` of `tree` on `data` in a child process, probed. */
async function runChild(tree: string, data: string, scratch: string): Promise<Run> {
  const probeOut = join(scratch, 'probe.json');
  const reportOut = join(scratch, 'report.json');
  await rm(probeOut, { force: true });
  const stdout = createWriteStream(reportOut);
  await new Promise((resolve) => stdout.once('open', resolve));
  const child = spawn(
    process.execPath,
    [
      '--conditions=paperbot-source',
      '--import',
      'tsx',
      '--import',
      probeUrl,
      cliPath,
      tree,
      'backtest',
      '--config',
      'config/backtest.yaml',
      '--data',
      data,
      '--json',
    ],
    {
      cwd: tree,
      env: { ...process.env, INTENT_COST_PROBE_OUT: probeOut },
      stdio: ['ignore', stdout, 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    if (stderr.length < 10_000) stderr += chunk;
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  stdout.close();
  if (code !== 0) throw new Error(`backtest in ${tree} exited ${code}: ${stderr}`);
  const probe = JSON.parse(await readFile(probeOut, 'utf8')) as Probe;
  const report = await readFile(reportOut, 'utf8');
  const run = (JSON.parse(report) as { run?: { events?: number; intents?: number } }).run;
  if (typeof run?.intents !== 'number' || typeof run.events !== 'number')
    throw new Error(`the report of ${tree} has no run.events and run.intents`);
  return { ...probe, intents: run.intents, events: run.events, report };
}

/** The report without its `run` block, serialized the same way for both trees. */
function withoutRun(report: string): string {
  const { run: _run, ...rest } = JSON.parse(report) as Record<string, unknown>;
  return JSON.stringify(rest, null, 2);
}

interface Figures {
  readonly cpuUsPerIntent: number;
  readonly bytesPerIntent: number;
  readonly eventsPerCpuSecond: number;
  readonly rssStartMb: number;
  readonly rssEndMb: number;
  readonly maxRssMb: number;
}

/** The replay's share of a full run: the full run minus the head run of the same tree. */
function figures(full: Run, head: Run): Figures {
  const cpuUs = full.cpuUs - head.cpuUs;
  const intents = full.intents - head.intents;
  const mb = (bytes: number) => bytes / (1024 * 1024);
  return {
    cpuUsPerIntent: cpuUs / intents,
    bytesPerIntent: (full.allocatedBytes - head.allocatedBytes) / intents,
    eventsPerCpuSecond: (full.events - head.events) / (cpuUs / 1e6),
    rssStartMb: mb(full.rssStartBytes),
    rssEndMb: mb(full.rssEndBytes),
    maxRssMb: mb(full.maxRssBytes),
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function medians(rounds: readonly Figures[]): Figures {
  const of = (key: keyof Figures) => median(rounds.map((round) => round[key]));
  return {
    cpuUsPerIntent: of('cpuUsPerIntent'),
    bytesPerIntent: of('bytesPerIntent'),
    eventsPerCpuSecond: of('eventsPerCpuSecond'),
    rssStartMb: of('rssStartMb'),
    rssEndMb: of('rssEndMb'),
    maxRssMb: of('maxRssMb'),
  };
}

function row(task: string, figures: Figures, intents: number) {
  return {
    task,
    intents: intents.toLocaleString('en-US'),
    'µs CPU per intent': figures.cpuUsPerIntent.toFixed(1),
    'KB allocated per intent': (figures.bytesPerIntent / 1024).toFixed(1),
    'events/s (CPU)': Math.round(figures.eventsPerCpuSecond).toLocaleString('en-US'),
    'RSS start MB': figures.rssStartMb.toFixed(0),
    'RSS end MB': figures.rssEndMb.toFixed(0),
    'max RSS MB': figures.maxRssMb.toFixed(0),
  };
}

export default async function run(): Promise<void> {
  const baseline = baselineTree(BASELINE);
  const trees = [
    { name: 'current', root: ROOT },
    { name: `baseline ${BASELINE}`, root: baseline },
  ];
  const lines = await sampleLines();
  const full = join(DATA_DIR, `sample-x${COPIES}`);
  const head = join(DATA_DIR, `sample-head${HEAD_RECORDS}`);
  for (const tree of trees) {
    await writeRecording(join(tree.root, full), lines, COPIES);
    await writeRecording(join(tree.root, head), lines, 1, HEAD_RECORDS);
  }
  const scratch = await mkdtemp(join(tmpdir(), 'paperbot-intent-cost-'));
  try {
    // Unmeasured: builds each tree's decode cache; their reports are compared.
    const [current, previous] = [
      await runChild(trees[0]!.root, full, scratch),
      await runChild(trees[1]!.root, full, scratch),
    ];
    const identical = withoutRun(current.report) === withoutRun(previous.report);
    console.log(
      `${COPIES} copies of the sample: ${current.events.toLocaleString('en-US')} events, ` +
        `${current.intents.toLocaleString('en-US')} intents (baseline ${previous.intents.toLocaleString('en-US')}); ` +
        `reports without \`run\` ${identical ? 'byte-identical' : 'DIFFER'}`,
    );
    const rounds: Figures[][] = [[], []];
    const perRun: Record<string, string>[] = [];
    for (let round = 0; round < RUNS; round++) {
      for (const [index, tree] of trees.entries()) {
        const headRun = await runChild(tree.root, head, scratch);
        const fullRun = await runChild(tree.root, full, scratch);
        const result = figures(fullRun, headRun);
        rounds[index]!.push(result);
        perRun.push({
          run: `${round + 1} ${tree.name}`,
          'µs CPU per intent': result.cpuUsPerIntent.toFixed(1),
          'KB allocated per intent': (result.bytesPerIntent / 1024).toFixed(1),
          'head run CPU ms': (headRun.cpuUs / 1000).toFixed(0),
          'full run CPU ms': (fullRun.cpuUs / 1000).toFixed(0),
          GCs: `${headRun.collections} / ${fullRun.collections}`,
        });
      }
    }
    console.table(perRun);
    const [now, before] = [medians(rounds[0]!), medians(rounds[1]!)];
    console.table([
      row(trees[0]!.name, now, current.intents),
      row(trees[1]!.name, before, previous.intents),
      {
        task: 'ratio current / baseline',
        intents: '',
        'µs CPU per intent': (now.cpuUsPerIntent / before.cpuUsPerIntent).toFixed(2),
        'KB allocated per intent': (now.bytesPerIntent / before.bytesPerIntent).toFixed(2),
        'events/s (CPU)': (now.eventsPerCpuSecond / before.eventsPerCpuSecond).toFixed(2),
        'RSS start MB': '',
        'RSS end MB': (now.rssEndMb / before.rssEndMb).toFixed(2),
        'max RSS MB': (now.maxRssMb / before.maxRssMb).toFixed(2),
      },
    ]);
    if (!identical) {
      const out = join(ROOT, DATA_DIR, 'differing-reports');
      await mkdir(out, { recursive: true });
      await writeFile(join(out, 'current.json'), current.report);
      await writeFile(join(out, 'baseline.json'), previous.report);
      throw new Error(`the reports differ beyond their run block (both written to ${out})`);
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
