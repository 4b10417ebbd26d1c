/**
 * One chaos scenario, start to end: a venue on 127.0.0.1, the chaos proxy in front of it, the
 * real bot process (`bin/paperbot.js run`) on a key file that points at the proxy, the
 * scenario's driving (faults, signals, restarts), then the counting from the venue's truth
 * after the bot has exited. Bounded: every wait has a time limit, and the scenario as a whole.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../../src/core/clock.ts';
import {
  type BotChild,
  delay,
  REPOSITORY_ROOT,
  seededRandom,
  spawnBot,
  writeBotConfig,
} from '../bot/helpers.ts';
import { countFigures, type Figures } from './counting.ts';
import { type ChaosProxy, startChaosProxy } from './proxy.ts';
import { type ChaosVenue, startEmulatorVenue, startMinimalVenue } from './venue.ts';

export interface ScenarioContext {
  readonly venue: ChaosVenue;
  readonly proxy: ChaosProxy;
  readonly accountId: string;
  /** The bot's journal (SQLite), the same file for every run of the scenario. */
  readonly journalPath: string;
  readonly random: () => number;
  /** Starts the bot (same config, same journal) and waits for its start line. */
  start(): Promise<BotChild>;
  /** Starts the bot without waiting for anything. */
  spawn(): BotChild;
  /** Stops the market, lets the bot see the last fills, then SIGTERM; resolves the exit. */
  stopCleanly(child: BotChild, options?: { beforeSignal?: () => void }): Promise<number | string>;
  /** SIGKILL, expected: this run's exit does not count. */
  kill(child: BotChild): Promise<void>;
  /** Adds to a scenario-specific figure that must stay 0 (or to the faults with `fault`). */
  note(figure: string, amount?: number): void;
  fault(amount?: number): void;
  /** Adds a line to the scenario's notes (printed under a failing line, or with --verbose). */
  noteText(text: string): void;
  /** Waits for `count` more `intent submitted` lines of `child` (bounded). */
  submissions(child: BotChild, count: number, timeoutMs?: number): Promise<void>;
}

export interface Scenario {
  readonly name: string;
  /**
   * `minimal-contract`: the minimal server with the contract's open shapes (a control);
   * `minimal-additive`: its own shapes plus additive drift (a field in every object, ...).
   */
  readonly venue: 'emulator' | 'minimal' | 'minimal-contract' | 'minimal-additive';
  /** With `minimal-additive`: every n-th private event breaks its schema (order and fill events). */
  readonly breakEvery?: number;
  readonly seed: number;
  /** The whole scenario, driving and stopping included. */
  readonly timeLimitMs: number;
  /** Merged over the base bot config (section by section; other values replaced). */
  readonly config?: Record<string, unknown>;
  readonly cutWebSocketsEveryMs?: number;
  setup?(proxy: ChaosProxy, random: () => number): void;
  drive(context: ScenarioContext): Promise<void>;
}

export interface ScenarioResult extends Figures {
  readonly name: string;
  readonly faults: number;
  readonly exit: number | string;
  /** Scenario-specific figures that must be 0 (the dead-man firing when it should not, ...). */
  readonly extra: Readonly<Record<string, number>>;
  readonly seconds: number;
  readonly notes: readonly string[];
}

const QUIESCE_MS = 3_000;
const STOP_LIMIT_MS = 30_000;

export function baseBotConfig(directory: string, keyPath: string): Record<string, unknown> {
  return {
    venue: { key_file: keyPath, request_timeout_ms: 2_000 },
    strategies_dir: join(REPOSITORY_ROOT, 'strategies'),
    strategies: [
      {
        id: 'mm',
        name: 'market-maker',
        params: { markets: ['BTC-PERP'], halfSpreadTicks: 2, refreshTicks: 2 },
      },
    ],
    risk: { kill_switch: { file: null, signal: null } },
    journal: { path: join(directory, 'journal.sqlite') },
    metrics: { port: 0 },
    market_data: { markets: ['BTC-PERP'] },
  };
}

function merged(
  base: Record<string, unknown>,
  over: Record<string, unknown> | undefined,
): Record<string, unknown> {
  const isSection = (value: unknown): value is Record<string, unknown> =>
    typeof value === 'object' && value !== null && !Array.isArray(value);
  const out: Record<string, unknown> = { ...base };
  for (const [section, values] of Object.entries(over ?? {})) {
    const current = out[section];
    out[section] = isSection(current) && isSection(values) ? { ...current, ...values } : values;
  }
  return out;
}

function withLimit<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = systemClock.setTimeout(
      () => reject(new Error(`${what}: over the time limit of ${ms} ms`)),
      ms,
    );
    work.then(
      (value) => {
        systemClock.clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        systemClock.clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

export async function runScenario(scenario: Scenario): Promise<ScenarioResult> {
  const started = systemClock.now();
  const directory = mkdtempSync(join(tmpdir(), `paperbot-chaos-${scenario.name}-`));
  const random = seededRandom(scenario.seed);
  const venue =
    scenario.venue === 'emulator'
      ? await startEmulatorVenue({ seed: `chaos-${scenario.name}` })
      : await startMinimalVenue({
          seed: `chaos-${scenario.name}`,
          shapes: scenario.venue === 'minimal-contract' ? 'contract' : 'own',
          additive: scenario.venue === 'minimal-additive',
          breakEvery: scenario.breakEvery ?? 0,
        });
  const proxy = await startChaosProxy({
    upstream: venue.baseUrl,
    cutWebSocketsEveryMs: scenario.cutWebSocketsEveryMs ?? null,
  });
  const key = await venue.writeKey(directory, proxy.baseUrl);
  const base = baseBotConfig(directory, key.path);
  const journalPath = join(directory, 'journal.sqlite');
  const configPath = writeBotConfig(directory, merged(base, scenario.config));
  scenario.setup?.(proxy, random);

  const children: { child: BotChild; killed: boolean; stopTimedOut: boolean }[] = [];
  const extra: Record<string, number> = {};
  let injectedHere = 0;
  const notes: string[] = [];
  // Set once the driving has ended or run out of time: a late step may not start a bot.
  let over = false;
  const spawn = () => {
    if (over) throw new Error('the scenario is over; no new bot process');
    const child = spawnBot(configPath);
    children.push({ child, killed: false, stopTimedOut: false });
    return child;
  };
  const context: ScenarioContext = {
    venue,
    proxy,
    accountId: key.accountId,
    journalPath,
    random,
    spawn,
    async start() {
      const child = spawn();
      await child.waitFor((record) => record.event === 'bot.started', 'the start line', 30_000);
      return child;
    },
    async stopCleanly(child, options = {}) {
      venue.quiesce();
      await delay(QUIESCE_MS);
      options.beforeSignal?.();
      const signalledAt = new Date(systemClock.now()).toISOString();
      child.process.kill('SIGTERM');
      return withLimit(child.exited, STOP_LIMIT_MS, 'the clean stop').catch(async () => {
        notes.push(`the bot did not stop within 30 s of SIGTERM (sent ${signalledAt}); killed`);
        const entry = children.find((candidate) => candidate.child === child);
        if (entry !== undefined) entry.stopTimedOut = true;
        child.process.kill('SIGKILL');
        await child.exited;
        return 'stop-timeout';
      });
    },
    async kill(child) {
      const entry = children.find((candidate) => candidate.child === child);
      if (entry !== undefined) entry.killed = true;
      child.process.kill('SIGKILL');
      await child.exited;
    },
    note(figure, amount = 1) {
      extra[figure] = (extra[figure] ?? 0) + amount;
    },
    fault(amount = 1) {
      injectedHere += amount;
    },
    noteText(text) {
      notes.push(text);
    },
    async submissions(child, count, timeoutMs = 20_000) {
      let seen = 0;
      const from = child.records.length;
      await child.waitFor(
        (record) =>
          child.records.indexOf(record) >= from &&
          record.msg === 'intent submitted' &&
          ++seen >= count,
        `${count} more submissions`,
        timeoutMs,
      );
    },
  };

  let failure: string | null = null;
  try {
    await withLimit(scenario.drive(context), scenario.timeLimitMs, scenario.name);
  } catch (error) {
    const message = (error as Error).message;
    failure = message.split('\n')[0] ?? 'failed';
    notes.push(`driving failed: ${message.slice(0, 2_000)}`);
  }
  over = true;
  // Whatever is still running is stopped now (counted as a failure above if unexpected).
  for (const { child } of children) {
    if (child.process.exitCode === null && child.process.signalCode === null) {
      child.process.kill('SIGKILL');
      await child.exited;
    }
  }
  proxy.policy = {};

  const unexpectedExits = await Promise.all(
    children
      .filter((entry) => !entry.killed)
      .map((entry) => (entry.stopTimedOut ? 'stop-timeout' : entry.child.exited)),
  );
  // What the bot said last when a run did not end well (warnings and errors only).
  for (const [index, entry] of children.entries()) {
    const code = await entry.child.exited;
    if (entry.killed || code === 0) continue;
    // After a stop that hung, the last lines whatever their level; else warnings and errors.
    const worrying = entry.stopTimedOut
      ? entry.child.records
      : entry.child.records.filter(
          (record) =>
            record.level === 'warn' || record.level === 'error' || record.level === 'fatal',
        );
    const stopping = entry.child.records.findIndex((record) => record.event === 'bot.stopping');
    if (stopping >= 0) {
      const after = entry.child.records.slice(stopping);
      notes.push(
        `run ${index + 1}: stopping at ${String(after[0]?.time)}; then ${
          after.filter((record) => record.msg === 'intent submitted').length
        } intents submitted, last line at ${String(after.at(-1)?.time)}`,
      );
    }
    for (const record of worrying.slice(-6)) {
      notes.push(`run ${index + 1}: ${JSON.stringify(record).slice(0, 400)}`);
    }
    const stderr = entry.child.stderr().trim();
    if (stderr !== '') notes.push(`run ${index + 1} stderr: ${stderr.slice(0, 600)}`);
  }
  const exit = failure !== null ? 'failed' : (unexpectedExits.find((code) => code !== 0) ?? 0);
  const figures = countFigures({
    orders: venue.orders(key.accountId),
    fills: venue.fills(key.accountId),
    records: children.flatMap((entry) => entry.child.records),
    journalPath,
  });
  notes.push(...figures.notes);
  const faults = proxy.totalFaults() + injectedHere;
  await proxy.close();
  await venue.close();
  rmSync(directory, { recursive: true, force: true });
  return {
    name: scenario.name,
    faults,
    duplicates: figures.duplicates,
    lost_fills: figures.lost_fills,
    double_counted: figures.double_counted,
    left_open: figures.left_open,
    venueFills: figures.venueFills,
    venueOrders: figures.venueOrders,
    exit,
    extra,
    seconds: Math.round((systemClock.now() - started) / 100) / 10,
    notes,
  };
}

/** One line per scenario: the figures, then anything scenario-specific. */
export function formatResult(result: ScenarioResult): string {
  const extra = Object.entries(result.extra).map(([name, value]) => ` ${name}=${value}`);
  return (
    `${result.name.padEnd(31)} faults=${result.faults} duplicates=${result.duplicates} ` +
    `lost_fills=${result.lost_fills} double_counted=${result.double_counted} ` +
    `left_open=${result.left_open} exit=${result.exit}${extra.join('')} ` +
    `(orders=${result.venueOrders} fills=${result.venueFills} ${result.seconds}s)`
  );
}

/** True when every figure but the faults is 0 and the exit codes were 0. */
export function passed(result: ScenarioResult): boolean {
  return (
    result.duplicates === 0 &&
    result.lost_fills === 0 &&
    result.double_counted === 0 &&
    result.left_open === 0 &&
    result.exit === 0 &&
    Object.values(result.extra).every((value) => value === 0)
  );
}
