/**
 * The kill switch: three ways to move trading to HALTED from outside the strategy.
 * - A file whose existence means HALT, polled on the runtime's clock (not `fs.watch`, which
 *   neither works on virtual time nor reliably on every file system). `paperbot kill` writes
 *   it with `requestKill`; it halts a bot started later too, until removed (`clearKill`).
 * - A process signal (`SIGUSR2` by default): `kill -USR2 <pid>`.
 * - The command line, through the file.
 * A halt by the kill switch lasts until `resume()`; while the file exists, the next poll halts
 * again, so removing the file is part of resuming.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Clock } from '../../core/clock.ts';
import type { KillSignal } from './config.ts';
import type { HaltTarget } from './gate.ts';

/** Longest reason read from a kill file; the rest is ignored. */
const MAXIMUM_REASON_LENGTH = 500;

export interface WatchKillFileOptions {
  /** Poll period in milliseconds of `clock`; default 1000. */
  readonly pollMs?: number | undefined;
}

/**
 * Halts `target` whenever the file at `path` exists, checking once at once and then every
 * `pollMs` on `clock`. Returns a function that stops watching.
 */
export function watchKillFile(
  path: string,
  clock: Clock,
  target: HaltTarget,
  options: WatchKillFileOptions = {},
): () => void {
  const check = () => {
    const reason = readKillFile(path);
    if (reason !== null) target.halt(`kill file ${path}: ${reason}`, 'kill_switch');
  };
  check();
  const handle = clock.setInterval(check, options.pollMs ?? 1000);
  return () => clock.clearInterval(handle);
}

/** The reason written in the kill file, `'no reason given'` when empty, or null when absent. */
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
 * Asks every bot watching `path` to halt: writes the file atomically (a temporary file, then a
 * rename), creating its folder if needed. This is what `paperbot kill` runs.
 */
export function requestKill(path: string, reason: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const line = reason.replace(/\s+/g, ' ').trim().slice(0, MAXIMUM_REASON_LENGTH);
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
 * Halts `target` when `source` (normally `process`) receives `signal`. Returns a function that
 * removes the listener. Listening also stops the signal's default action (ending the process).
 */
export function installKillSignal(
  source: SignalSource,
  target: HaltTarget,
  signal: KillSignal = 'SIGUSR2',
): () => void {
  const listener = () => target.halt(`signal ${signal}`, 'kill_switch');
  source.on(signal, listener);
  return () => {
    source.off(signal, listener);
  };
}
