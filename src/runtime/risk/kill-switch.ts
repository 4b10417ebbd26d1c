/**
 * The kill switch: one switch with three positions (halted, reduce-only, clear), moved from
 * outside the strategies by `paperbot kill`, the kill file, a process signal or the dashboard,
 * with the same meaning and effect whichever moved it.
 * - The kill file is the switch's state: present means HALTED, or REDUCING when its first line
 *   starts with `reduce-only`; absent means clear. It is polled on the runtime's clock (not
 *   `fs.watch`, which neither works on virtual time nor reliably on every file system), so a
 *   bot started later obeys it too. `paperbot kill` writes it with `requestKill`, `--clear`
 *   removes it (`clearKill`).
 * - The signal and the dashboard go through `KillSwitch`, which writes or removes the same file
 *   and applies the change at once, as the next poll would.
 * Clearing (the file gone, or `clear()`) resumes the gate: every operator halt and reduction
 * and a drawdown stop end; a daily loss limit still applies.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import type { KillSignal } from './config.ts';

/** Longest reason read from a kill file; the rest is ignored. */
const MAXIMUM_REASON_LENGTH = 500;
const REDUCE_ONLY_PREFIX = /^reduce-only\b:?\s*/i;

export type KillMode = 'halt' | 'reduce-only';

/** What a present kill file asks for. */
export interface KillRequest {
  readonly mode: KillMode;
  readonly reason: string;
}

/** What the kill switch moves: a `RiskGate` is one. */
export interface KillSwitchTarget {
  halt(reason: string, source: 'kill_switch'): void;
  reduce(reason: string, source: 'kill_switch'): void;
  resume(): void;
}

export interface KillSwitchOptions {
  /** The kill file (absolute), or null when the config disables it. */
  readonly file: string | null;
  readonly clock: Clock;
  readonly target: KillSwitchTarget;
  /** Poll period in milliseconds of `clock`; default 1000. */
  readonly pollMs?: number | undefined;
  readonly logger?: Logger | undefined;
}

export class KillSwitch {
  readonly file: string | null;
  private readonly clock: Clock;
  private readonly target: KillSwitchTarget;
  private readonly pollMs: number;
  private readonly logger: Logger | undefined;
  /** The file was present at the last look: its disappearance then clears. */
  private present = false;
  private timer: TimerHandle | undefined;

  constructor(options: KillSwitchOptions) {
    this.file = options.file;
    this.clock = options.clock;
    this.target = options.target;
    this.pollMs = options.pollMs ?? 1000;
    this.logger = options.logger;
  }

  /** Looks at the file once at once (a file left there halts before trading starts), then polls. */
  start(): void {
    if (this.file === null || this.timer !== undefined) return;
    this.poll();
    this.timer = this.clock.setInterval(() => this.poll(), this.pollMs);
  }

  stop(): void {
    this.clock.clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Moves the switch to halted (writing the kill file when there is one); `origin` says who. */
  halt(origin: string): void {
    this.set({ mode: 'halt', reason: origin });
  }

  /** Moves the switch to reduce-only (writing the kill file when there is one). */
  reduceOnly(origin: string): void {
    this.set({ mode: 'reduce-only', reason: origin });
  }

  /** Clears the switch: removes the kill file and resumes at once. Returns whether a file was removed. */
  clear(origin: string): boolean {
    const existed = this.file === null ? false : clearKill(this.file);
    this.present = false;
    this.logger?.warn(`kill switch cleared by ${origin}`, { event: 'kill_switch.clear', origin });
    this.target.resume();
    return existed;
  }

  /** Applies what the kill file says now. */
  poll(): void {
    if (this.file === null) return;
    const request = readKillRequest(this.file);
    if (request === null) {
      if (!this.present) return;
      this.present = false;
      this.logger?.warn(`kill file ${this.file} removed: kill switch cleared`, {
        event: 'kill_switch.clear',
        origin: 'kill file removed',
        file: this.file,
      });
      this.target.resume();
      return;
    }
    this.present = true;
    this.apply(request, `kill file ${this.file}: ${request.reason}`);
  }

  private set(request: KillRequest): void {
    if (this.file === null) {
      this.apply(request, request.reason);
      return;
    }
    requestKill(this.file, request.reason, request.mode);
    this.poll();
  }

  private apply(request: KillRequest, reason: string): void {
    if (request.mode === 'halt') this.target.halt(reason, 'kill_switch');
    else this.target.reduce(reason, 'kill_switch');
  }
}

/** What the kill file at `path` asks for, or null when there is none. */
export function readKillRequest(path: string): KillRequest | null {
  const line = readKillFile(path);
  if (line === null) return null;
  if (!REDUCE_ONLY_PREFIX.test(line)) return { mode: 'halt', reason: line };
  const reason = line.replace(REDUCE_ONLY_PREFIX, '');
  return { mode: 'reduce-only', reason: reason.length > 0 ? reason : 'no reason given' };
}

/** The first line of the kill file, `'no reason given'` when empty, or null when absent. */
export function readKillFile(path: string): string | null {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return null;
  let text = '';
  try {
    text = readFileSync(path, 'utf8').slice(0, MAXIMUM_REASON_LENGTH).trim();
  } catch {
    // Present but unreadable (a directory, no permission): its existence is what counts.
    return 'present but unreadable';
  }
  return text.length > 0 ? (text.split('\n')[0] ?? text) : 'no reason given';
}

/**
 * Moves every bot watching `path` to `mode`: writes the file atomically (a temporary file, then
 * a rename), creating its folder if needed. This is what `paperbot kill` runs.
 */
export function requestKill(path: string, reason: string, mode: KillMode = 'halt'): void {
  mkdirSync(dirname(path), { recursive: true });
  const text = reason.replace(/\s+/g, ' ').trim();
  const line = (mode === 'reduce-only' ? `reduce-only: ${text}` : text).slice(
    0,
    MAXIMUM_REASON_LENGTH,
  );
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${line}\n`, { mode: 0o600 });
  renameSync(temporary, path);
}

/** Removes the kill file; returns whether there was one. */
export function clearKill(path: string): boolean {
  const existed = statSync(path, { throwIfNoEntry: false }) !== undefined;
  rmSync(path, { force: true });
  return existed;
}

/** The part of `process` a kill signal needs; an EventEmitter stands in for it in tests. */
export interface SignalSource {
  on(event: KillSignal, listener: () => void): unknown;
  off(event: KillSignal, listener: () => void): unknown;
}

/**
 * Halts through `killSwitch` (so the kill file is written, as `paperbot kill` would) when
 * `source` (normally `process`) receives `signal`. Returns a function that removes the
 * listener. Listening also stops the signal's default action (ending the process).
 */
export function installKillSignal(
  source: SignalSource,
  killSwitch: Pick<KillSwitch, 'halt'>,
  signal: KillSignal = 'SIGUSR2',
): () => void {
  const listener = () => killSwitch.halt(`signal ${signal}`);
  source.on(signal, listener);
  return () => {
    source.off(signal, listener);
  };
}
