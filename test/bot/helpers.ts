/** Shared pieces of the bot tests. */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { systemClock, type TimerHandle, VirtualClock } from '../../src/core/clock.ts';
import {
  type CreateKeyOptions,
  type RunningEmulator,
  type StartEmulatorOptions,
  startEmulator,
} from '../../src/emulator/index.ts';
import type { Order } from '../../src/protocol/index.ts';
import { writeKeyFile } from '../../src/signing/index.ts';
import type { DestinationStream } from 'pino';

/** A pino destination that keeps each line. */
export class LineCollector implements DestinationStream {
  readonly lines: string[] = [];

  write(text: string): void {
    for (const line of text.split('\n')) if (line !== '') this.lines.push(line);
  }

  records(): Record<string, unknown>[] {
    return this.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  get text(): string {
    return this.lines.join('\n');
  }
}

export const REPOSITORY_ROOT = resolve(import.meta.dirname, '../..');
export const FIXTURE_STRATEGIES = resolve(import.meta.dirname, 'fixtures/strategies');

/** A small seeded PRNG (mulberry32): the same seed, the same kill points. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => {
    systemClock.setTimeout(resolve, ms);
  });
}

/**
 * An emulator in this process on a VirtualClock that follows real time (so a child signing
 * with the system clock stays inside the signature window) until `freeze()`; then the test
 * moves it, past a dead-man deadline for instance.
 */
export interface PacedEmulator {
  readonly emulator: RunningEmulator;
  readonly clock: VirtualClock;
  freeze(): void;
  close(): Promise<void>;
}

export async function startPacedEmulator(
  options: Omit<StartEmulatorOptions, 'clock'> = {},
): Promise<PacedEmulator> {
  const clock = new VirtualClock(systemClock.now());
  const emulator = await startEmulator({ seed: 'bot-tests', ...options, clock });
  let pump: TimerHandle | null = systemClock.setInterval(() => {
    clock.advanceTo(Math.max(clock.now(), systemClock.now()));
  }, 5);
  const freeze = () => {
    if (pump !== null) systemClock.clearInterval(pump);
    pump = null;
  };
  return {
    emulator,
    clock,
    freeze,
    async close() {
      freeze();
      await emulator.close();
    },
  };
}

/** Writes a key file (mode 0600) for a fresh key of the emulator; returns its path and account. */
export async function writeEmulatorKey(
  emulator: RunningEmulator,
  directory: string,
  options: CreateKeyOptions = {},
): Promise<{ path: string; accountId: string }> {
  const credential = emulator.createKey(options);
  const path = join(directory, 'bot.key.json');
  await writeKeyFile(path, credential, { overwrite: true });
  return { path, accountId: credential.accountId };
}

/**
 * Writes a bot config as YAML and returns its path. Tests follow the bot by its intent lines,
 * so `logging.intent_lines_max_per_minute` is off (null) unless the config sets it.
 */
export function writeBotConfig(directory: string, config: Record<string, unknown>): string {
  const path = join(directory, 'bot.yaml');
  // The project's bots read the emulator strictly, so that it cannot drift (contract section
  // 7), unless the config says how to read.
  const venue = config.venue ?? {};
  const section = typeof venue === 'object' && venue !== null && !Array.isArray(venue);
  const logging = (config.logging ?? {}) as Record<string, unknown>;
  const withLines = { ...config, logging: { intent_lines_max_per_minute: null, ...logging } };
  writeFileSync(
    path,
    stringify(section ? { ...withLines, venue: { reading: 'strict', ...venue } } : withLines),
  );
  return path;
}

/** Every order of an account at the emulator, all pages. */
export function allOrders(emulator: RunningEmulator, accountId: string): Order[] {
  const orders: Order[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = emulator.exchange.listOrders(accountId, {
      limit: 100,
      ...(cursor === undefined ? {} : { cursor }),
    });
    orders.push(...page.data);
    if (!page.page.has_more || page.page.next_cursor === null) return orders;
    cursor = page.page.next_cursor;
  }
}

export interface BotChild {
  readonly process: ChildProcess;
  /** Every JSON log line so far, parsed. */
  readonly records: Record<string, unknown>[];
  /** Everything on stderr. */
  stderr(): string;
  /** Resolves with the first record (from the start) matching `test`. */
  waitFor(
    test: (record: Record<string, unknown>) => boolean,
    what: string,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  /** Resolves with the exit code (or the signal's name). */
  readonly exited: Promise<number | string>;
}

/** `node bin/paperbot.js run --config <path>`, its stdout parsed as JSON lines. */
export function spawnBot(
  configPath: string,
  extraArgs: readonly string[] = [],
  env: NodeJS.ProcessEnv = process.env,
): BotChild {
  const args = ['bin/paperbot.js', 'run', '--config', configPath, ...extraArgs];
  const child = spawn(process.execPath, args, {
    cwd: REPOSITORY_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  const records: Record<string, unknown>[] = [];
  const waiters: {
    test: (record: Record<string, unknown>) => boolean;
    resolve: (record: Record<string, unknown>) => void;
  }[] = [];
  let buffered = '';
  let errors = '';
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      if (line.trim() === '') continue;
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(line) as Record<string, unknown>;
      } catch {
        record = { msg: line, unparsed: true };
      }
      records.push(record);
      for (const waiter of waiters.slice()) {
        if (waiter.test(record)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(record);
        }
      }
    }
  });
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    errors += chunk;
  });
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
  });
  return {
    process: child,
    records,
    stderr: () => errors,
    exited,
    waitFor(test, what, timeoutMs = 15_000) {
      const found = records.find(test);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = systemClock.setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          reject(
            new Error(
              `timed out waiting for ${what}; last lines:\n${records
                .slice(-8)
                .map((record) => JSON.stringify(record))
                .join('\n')}\nstderr:\n${errors}`,
            ),
          );
        }, timeoutMs);
        const waiter = {
          test,
          resolve: (record: Record<string, unknown>) => {
            systemClock.clearTimeout(timer);
            resolve(record);
          },
        };
        waiters.push(waiter);
        void exited.then((code) => {
          if (waiters.includes(waiter)) {
            waiters.splice(waiters.indexOf(waiter), 1);
            systemClock.clearTimeout(timer);
            reject(new Error(`the bot exited (${code}) before ${what}; stderr:\n${errors}`));
          }
        });
      });
    },
  };
}

/** Counts the records whose message is `message`. */
export function countMessages(
  records: readonly Record<string, unknown>[],
  message: string,
): number {
  return records.filter((record) => record.msg === message).length;
}
