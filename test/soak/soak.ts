/**
 * The soak: the real bot (`paperbot run`, its own process) against the emulator (`paperbot
 * emulator`, another process, with a data dir) with the demo's strategies (config/bot.yaml's
 * market makers) at an accelerated intent rate: the emulator steps its prices every 100 ms
 * instead of every 1 000 (ten times the tickers, so ten times the requotes), and the bot's order
 * rate limits are raised to let them through. Every sample it prints the bot's RSS, heap, active
 * handles, event-loop lag (p99), journal and store size on disk, the intent rate, log lines and
 * tick-to-place p50/p99 (from the histogram's buckets); after a warm-up it fits a least-squares
 * line to each figure and fails when one of them grows faster than its bound (`BOUNDS`).
 *
 * Journal retention runs with a short window (a sixth of the run, at most 5 minutes) so the
 * journal reaches its plateau (rate x window) inside the warm-up.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  createWriteStream,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';

/** The demo's rate: 4,246 intents in its 24 minutes (issue 27). */
export const DEMO_INTENTS_PER_SECOND = 4_246 / (24 * 60);
/** The soak runs at least this many times the demo's rate. */
export const RATE_FACTOR = 10;

export interface SoakOptions {
  readonly minutes: number;
  /** Seconds between two samples (one table row each). */
  readonly sampleSeconds: number;
  /** Minutes before the trends are fitted. */
  readonly warmupMinutes: number;
  readonly out: (line: string) => void;
  /** Keep the temporary folder (journal, store, logs) for a look afterwards. */
  readonly keep?: boolean;
}

export interface SoakSample {
  readonly minute: number;
  readonly rssMb: number;
  readonly heapMb: number;
  readonly handles: number;
  readonly lagP99Ms: number;
  /** The journal's main file (its size is bounded by rate x window). */
  readonly journalMb: number;
  /** The journal's WAL (checkpointed after every retention pass; not trended). */
  readonly walMb: number;
  readonly storeMb: number;
  readonly intentsPerSecond: number;
  readonly logLinesPerMinute: number;
  readonly tickToPlaceP50Ms: number | null;
  readonly tickToPlaceP99Ms: number | null;
}

type Figure = Exclude<keyof SoakSample, 'minute'>;
/** What is trended: the sample's figures, the journal and the store per unit of intent rate. */
type TrendedFigure =
  | Exclude<Figure, 'journalMb' | 'storeMb' | 'walMb' | 'intentsPerSecond' | 'logLinesPerMinute'>
  | 'journalMbPerRate'
  | 'storeMbPerRate';

/**
 * The trend bounds: a figure fails when the growth its least-squares line predicts over the
 * samples after the warm-up (slope x that span) is more than `relative` of its mean plus
 * `absolute` (in its own unit). Memory, handles and sizes must be flat; lag and tick to place
 * are noisy on a shared machine and may not double.
 */
export const BOUNDS: Readonly<Record<TrendedFigure, { relative: number; absolute: number }>> = {
  rssMb: { relative: 0.1, absolute: 10 },
  heapMb: { relative: 0.25, absolute: 5 },
  handles: { relative: 0.2, absolute: 5 },
  lagP99Ms: { relative: 1, absolute: 20 },
  journalMbPerRate: { relative: 0.25, absolute: 0.02 },
  storeMbPerRate: { relative: 0.25, absolute: 0.02 },
  tickToPlaceP50Ms: { relative: 1, absolute: 10 },
  tickToPlaceP99Ms: { relative: 1, absolute: 50 },
};

export interface SoakResult {
  readonly samples: readonly SoakSample[];
  readonly trends: readonly {
    figure: TrendedFigure;
    growth: number;
    bound: number;
    ok: boolean;
  }[];
  readonly intentsPerSecond: number;
  readonly failures: readonly string[];
}

const root = resolve(import.meta.dirname, '../..');
const bin = join(root, 'bin/paperbot.js');

/** A child's JSON log lines, the first matching `until` resolved; every line counted. */
function watchLines(child: ChildProcess, file: string) {
  const sink = createWriteStream(file);
  let lines = 0;
  const waiters: { test: (line: string) => boolean; resolve: (line: string) => void }[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    if (stream === null) continue;
    createInterface({ input: stream }).on('line', (line) => {
      lines += 1;
      sink.write(`${line}\n`);
      for (const waiter of waiters.splice(0)) {
        if (waiter.test(line)) waiter.resolve(line);
        else waiters.push(waiter);
      }
    });
  }
  return {
    get lines() {
      return lines;
    },
    until(test: (line: string) => boolean, timeoutMs: number, what: string): Promise<string> {
      return new Promise((resolveLine, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`timed out waiting for ${what}`)),
          timeoutMs,
        );
        child.once('exit', (code) => reject(new Error(`${what}: the process exited (${code})`)));
        waiters.push({
          test,
          resolve: (line) => {
            clearTimeout(timer);
            resolveLine(line);
          },
        });
      });
    },
    close: () => sink.end(),
  };
}

function node(args: readonly string[], cwd: string): ChildProcess {
  return spawn(process.execPath, [bin, ...args], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1' },
  });
}

function run(args: readonly string[], cwd: string): Promise<string> {
  return new Promise((resolveRun, reject) => {
    const child = node(args, cwd);
    let text = '';
    child.stdout?.on('data', (chunk: Buffer) => (text += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (text += chunk.toString()));
    child.on('exit', (code) =>
      code === 0 ? resolveRun(text) : reject(new Error(`paperbot ${args[0]}: ${code} ${text}`)),
    );
  });
}

const sizeMb = (...paths: string[]) =>
  paths.reduce((sum, path) => sum + (existsSync(path) ? statSync(path).size : 0), 0) / 1_048_576;

/** Prometheus text: every sample as `name{labels}` -> value. */
function parseMetrics(text: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const space = line.lastIndexOf(' ');
    values.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return values;
}

function sumOf(values: Map<string, number>, prefix: string, skip?: (key: string) => boolean) {
  let sum = 0;
  for (const [key, value] of values) {
    if (key.startsWith(prefix) && !(skip?.(key) ?? false)) sum += value;
  }
  return sum;
}

/** The histogram's cumulative buckets (le -> count). */
function buckets(values: Map<string, number>, name: string): Map<number, number> {
  const result = new Map<number, number>();
  for (const [key, value] of values) {
    const match = new RegExp(`^${name}_bucket\\{le="([^"]+)"\\}$`).exec(key);
    if (match !== null) result.set(match[1] === '+Inf' ? Infinity : Number(match[1]), value);
  }
  return result;
}

/** A quantile (ms) of the observations between two scrapes, interpolated inside its bucket. */
function quantileMs(
  before: Map<number, number>,
  after: Map<number, number>,
  q: number,
): number | null {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((bound) => (after.get(bound) ?? 0) - (before.get(bound) ?? 0));
  const total = counts[counts.length - 1] ?? 0;
  if (total <= 0) return null;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (let index = 0; index < bounds.length; index++) {
    const bound = bounds[index] as number;
    const cumulative = counts[index] as number;
    if (cumulative >= rank) {
      if (bound === Infinity) return lower * 1_000;
      const inBucket = cumulative - below;
      const share = inBucket === 0 ? 0 : (rank - below) / inBucket;
      return (lower + (bound - lower) * share) * 1_000;
    }
    lower = bound;
    below = cumulative;
  }
  return null;
}

/** Least-squares slope of y over x. */
export function slope(points: readonly (readonly [number, number])[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / n;
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / n;
  let numerator = 0;
  let denominator = 0;
  for (const [x, y] of points) {
    numerator += (x - meanX) * (y - meanY);
    denominator += (x - meanX) ** 2;
  }
  return denominator === 0 ? 0 : numerator / denominator;
}

const COLUMNS: readonly [string, (sample: SoakSample) => string][] = [
  ['min', (s) => s.minute.toFixed(1)],
  ['RSS MB', (s) => s.rssMb.toFixed(0)],
  ['heap MB', (s) => s.heapMb.toFixed(0)],
  ['handles', (s) => String(s.handles)],
  ['lag p99 ms', (s) => s.lagP99Ms.toFixed(1)],
  ['journal MB', (s) => s.journalMb.toFixed(2)],
  ['WAL MB', (s) => s.walMb.toFixed(2)],
  ['store MB', (s) => s.storeMb.toFixed(2)],
  ['intents/s', (s) => s.intentsPerSecond.toFixed(1)],
  ['log lines/min', (s) => s.logLinesPerMinute.toFixed(0)],
  ['t2p p50 ms', (s) => (s.tickToPlaceP50Ms === null ? '-' : s.tickToPlaceP50Ms.toFixed(1))],
  ['t2p p99 ms', (s) => (s.tickToPlaceP99Ms === null ? '-' : s.tickToPlaceP99Ms.toFixed(1))],
];

export function tableHeader(): string {
  return `| ${COLUMNS.map(([name]) => name).join(' | ')} |\n|${COLUMNS.map(() => ' ---: |').join('')}`;
}

export function tableRow(sample: SoakSample): string {
  return `| ${COLUMNS.map(([, cell]) => cell(sample)).join(' | ')} |`;
}

/** The journal's retention window and pass interval of a run this long. */
export function soakRetention(minutes: number): { windowMs: number; intervalMs: number } {
  const windowMs = Math.min(5 * 60_000, Math.max(20_000, Math.round((minutes * 60_000) / 6)));
  return { windowMs, intervalMs: Math.max(5_000, Math.round(windowMs / 4)) };
}

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const folder = mkdtempSync(join(tmpdir(), 'paperbot-soak-'));
  const out = options.out;
  const durationMs = options.minutes * 60_000;
  const { windowMs, intervalMs } = soakRetention(options.minutes);
  const children: ChildProcess[] = [];
  const closers: (() => void)[] = [];
  try {
    // 1. The emulator, in its own process: ten times the demo's ticker rate, a quota that does
    //    not throttle the accelerated bot, its state in a data dir (the store measured).
    const emulatorConfig = join(folder, 'emulator.yaml');
    const base = parseYaml(readFileSync(join(root, 'config/emulator.yaml'), 'utf8')) as {
      simulation: Record<string, unknown>;
      retention: Record<string, unknown>;
    };
    // The store's windows sized like the journal's (about 60 events a second), so it too
    // reaches its plateau inside the warm-up.
    const storeRows = Math.max(1_000, Math.round((windowMs / 1_000) * 60));
    writeYaml(emulatorConfig, {
      ...base,
      simulation: { ...base.simulation, step_ms: 100 },
      retention: {
        ...base.retention,
        store_events: storeRows,
        store_fills: storeRows,
        store_idempotency: storeRows,
        store_terminal_orders: storeRows,
      },
    });
    const dataDir = join(folder, 'emulator');
    const emulator = node(
      [
        'emulator',
        '--port',
        '0',
        '--data',
        dataDir,
        '--config',
        emulatorConfig,
        '--rate-limit-quota',
        '1000000',
        '--log-format',
        'json',
      ],
      folder,
    );
    children.push(emulator);
    const emulatorLines = watchLines(emulator, join(folder, 'emulator.log'));
    closers.push(() => emulatorLines.close());
    const listening = await emulatorLines.until(
      (line) => line.includes('listening on'),
      60_000,
      'the emulator',
    );
    const api = /listening on (\S+)/.exec(listening)?.[1];
    if (api === undefined) throw new Error(`no emulator address in ${listening}`);
    const keyFile = join(folder, 'key.json');
    await run(['keys', 'create', '--api', api, '--data', dataDir, '--out', keyFile], folder);

    // 2. The bot with the demo's strategies, retention on a short window.
    const demo = parseYaml(readFileSync(join(root, 'config/bot.yaml'), 'utf8')) as {
      strategies: { params: { refreshTicks: number } }[];
      risk: Record<string, unknown>;
    };
    const botConfig = join(folder, 'bot.yaml');
    writeYaml(botConfig, {
      venue: { key_file: keyFile },
      strategies_dir: join(root, 'strategies'),
      // The demo's market makers, requoting after a tenth of the mark's move.
      strategies: demo.strategies.map((entry) => {
        const strategy = entry as { params: { refreshTicks: number } };
        return {
          ...strategy,
          params: {
            ...strategy.params,
            refreshTicks: Math.max(1, Math.round(strategy.params.refreshTicks / 10)),
          },
        };
      }),
      risk: {
        ...demo.risk,
        max_orders_per_second: 200,
        max_orders_per_minute: 12_000,
        kill_switch: { file: join(folder, 'paperbot.kill'), poll_ms: 1000, signal: null },
      },
      deadman: { timeout_seconds: 60 },
      journal: {
        path: join(folder, 'journal.sqlite'),
        retention: { window: windowMs, mode: 'archive', interval: intervalMs },
      },
      metrics: { host: '127.0.0.1', port: 0 },
      logging: { level: 'info', format: 'json' },
      market_data: { markets: ['BTC-PERP', 'ETH-PERP'] },
    });
    const bot = node(['run', '--config', botConfig], folder);
    children.push(bot);
    const botLines = watchLines(bot, join(folder, 'bot.log'));
    closers.push(() => botLines.close());
    const started = await botLines.until(
      (line) => line.includes('"bot.started"'),
      120_000,
      'the bot to start',
    );
    const metricsUrl = (JSON.parse(started) as { metrics: string | null }).metrics;
    if (metricsUrl === null) throw new Error('the bot serves no metrics');
    out(
      `soak: ${options.minutes} min, a sample every ${options.sampleSeconds} s, warm-up ${options.warmupMinutes} min, journal window ${windowMs / 1000} s; files in ${folder}`,
    );
    out(tableHeader());

    // 3. Samples.
    const samples: SoakSample[] = [];
    const startedAt = performance.now();
    let previous: { values: Map<string, number>; at: number; lines: number } | null = null;
    const scrape = async () => {
      const response = await fetch(metricsUrl, { signal: AbortSignal.timeout(10_000) });
      const text = await response.text();
      if (text.length > 4_000_000) throw new Error('metrics page too large');
      return parseMetrics(text);
    };
    previous = { values: await scrape(), at: performance.now(), lines: botLines.lines };
    while (performance.now() - startedAt < durationMs) {
      await new Promise((wake) => setTimeout(wake, options.sampleSeconds * 1_000));
      if (bot.exitCode !== null) throw new Error(`the bot exited (${bot.exitCode})`);
      const values = await scrape();
      const at = performance.now();
      const seconds = (at - previous.at) / 1_000;
      const intents = (map: Map<string, number>) =>
        sumOf(map, 'paperbot_intent_outcomes_total', (key) => key.includes('outcome="filled"'));
      const before = buckets(previous.values, 'paperbot_tick_to_place_seconds');
      const after = buckets(values, 'paperbot_tick_to_place_seconds');
      const sample: SoakSample = {
        minute: (at - startedAt) / 60_000,
        rssMb: (values.get('process_resident_memory_bytes') ?? 0) / 1_048_576,
        heapMb: (values.get('nodejs_heap_size_used_bytes') ?? 0) / 1_048_576,
        handles: values.get('nodejs_active_handles_total') ?? 0,
        lagP99Ms: (values.get('nodejs_eventloop_lag_p99_seconds') ?? 0) * 1_000,
        journalMb: sizeMb(join(folder, 'journal.sqlite')),
        walMb: sizeMb(join(folder, 'journal.sqlite-wal')),
        storeMb: sizeMb(join(dataDir, 'emulator.sqlite'), join(dataDir, 'emulator.sqlite-wal')),
        intentsPerSecond: (intents(values) - intents(previous.values)) / seconds,
        logLinesPerMinute: ((botLines.lines - previous.lines) / seconds) * 60,
        tickToPlaceP50Ms: quantileMs(before, after, 0.5),
        tickToPlaceP99Ms: quantileMs(before, after, 0.99),
      };
      samples.push(sample);
      out(tableRow(sample));
      previous = { values, at, lines: botLines.lines };
    }

    // 4. Trends after the warm-up, and the rate.
    const verdict = analyze(samples, options.warmupMinutes, (windowMs + intervalMs) / 60_000);
    for (const line of verdict.lines) out(line);
    const { trends, intentsPerSecond, failures } = verdict;
    return { samples, trends, intentsPerSecond, failures };
  } finally {
    for (const child of children.reverse()) await stop(child);
    for (const close of closers) close();
    if (options.keep !== true) rmSync(folder, { recursive: true, force: true });
  }
}

/**
 * The verdict on a run's samples: a least-squares line per figure after the warm-up, its
 * predicted growth over that span against the figure's bound, and the intent rate against 10x
 * the demo's. The journal and the store hold rate x window, so their sizes are trended per
 * unit of rate: MB / (intents a second, averaged over the `retainedMinutes` before the sample),
 * and a rate that rises during the run does not pass for a leak.
 */
export function analyze(
  samples: readonly SoakSample[],
  warmupMinutes: number,
  retainedMinutes: number,
): {
  trends: SoakResult['trends'][number][];
  intentsPerSecond: number;
  failures: string[];
  lines: string[];
} {
  const trailingRate = (index: number) => {
    const at = samples[index]?.minute ?? 0;
    const recent = samples
      .slice(0, index + 1)
      .filter((sample) => sample.minute > at - retainedMinutes);
    return recent.reduce((sum, sample) => sum + sample.intentsPerSecond, 0) / recent.length;
  };
  const measured = samples
    .map((sample, index) => ({ sample, rate: trailingRate(index) }))
    .filter(({ sample }) => sample.minute > warmupMinutes);
  const valueOf = (sample: SoakSample, rate: number, figure: TrendedFigure): number | null =>
    figure === 'journalMbPerRate'
      ? sample.journalMb / Math.max(rate, 0.1)
      : figure === 'storeMbPerRate'
        ? sample.storeMb / Math.max(rate, 0.1)
        : sample[figure];
  const failures: string[] = [];
  const trends: SoakResult['trends'][number][] = [];
  for (const [figure, bound] of Object.entries(BOUNDS) as [
    TrendedFigure,
    { relative: number; absolute: number },
  ][]) {
    const points = measured
      .map(({ sample, rate }) => [sample.minute, valueOf(sample, rate, figure)] as const)
      .filter((point): point is readonly [number, number] => point[1] !== null);
    if (points.length < 3) continue;
    const mean = points.reduce((sum, [, y]) => sum + y, 0) / points.length;
    const span = (points[points.length - 1]?.[0] ?? 0) - (points[0]?.[0] ?? 0);
    const growth = slope(points) * span;
    const limit = bound.relative * mean + bound.absolute;
    const ok = growth <= limit;
    trends.push({ figure, growth, bound: limit, ok });
    if (!ok) {
      failures.push(
        `${figure} trends up: +${growth.toFixed(3)} over the run, bound ${limit.toFixed(3)}`,
      );
    }
  }
  if (measured.length < 3) failures.push('fewer than 3 samples after the warm-up');
  const intentsPerSecond =
    measured.reduce((sum, { sample }) => sum + sample.intentsPerSecond, 0) /
    Math.max(1, measured.length);
  const target = DEMO_INTENTS_PER_SECOND * RATE_FACTOR;
  if (intentsPerSecond < target) {
    failures.push(
      `intent rate ${intentsPerSecond.toFixed(1)}/s is below ${RATE_FACTOR} x the demo's (${target.toFixed(1)}/s)`,
    );
  }
  const lines = [
    `fitted growth after the ${warmupMinutes} min warm-up (bound): ${trends
      .map(
        (trend) =>
          `${trend.figure} ${trend.growth.toFixed(3)} (${trend.bound.toFixed(3)})${trend.ok ? '' : ' FAIL'}`,
      )
      .join(', ')}`,
    `intent rate ${intentsPerSecond.toFixed(1)}/s (${(intentsPerSecond / DEMO_INTENTS_PER_SECOND).toFixed(1)} x the demo's ${DEMO_INTENTS_PER_SECOND.toFixed(2)}/s)`,
    failures.length === 0
      ? 'soak: no trend beyond its bound'
      : `soak FAILED: ${failures.join('; ')}`,
  ];
  return { trends, intentsPerSecond, failures, lines };
}

/** Samples back from a printed table (`--analyze FILE` of a run's output). */
export function samplesFromTable(text: string): SoakSample[] {
  const samples: SoakSample[] = [];
  for (const line of text.split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    if (cells.length !== COLUMNS.length + 2 || !/^\d/.test(cells[1] ?? '')) continue;
    const number = (index: number) => Number(cells[index + 1]);
    const optional = (index: number) => (cells[index + 1] === '-' ? null : number(index));
    samples.push({
      minute: number(0),
      rssMb: number(1),
      heapMb: number(2),
      handles: number(3),
      lagP99Ms: number(4),
      journalMb: number(5),
      walMb: number(6),
      storeMb: number(7),
      intentsPerSecond: number(8),
      logLinesPerMinute: number(9),
      tickToPlaceP50Ms: optional(10),
      tickToPlaceP99Ms: optional(11),
    });
  }
  return samples;
}

function writeYaml(path: string, value: unknown): void {
  writeFileSync(path, stringifyYaml(value));
}

/** SIGTERM, then SIGKILL after 30 s (the bot cancels its orders on the way out). */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}
