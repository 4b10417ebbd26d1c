/**
 * A status line for long commands that otherwise print nothing until they end (`paperbot
 * record`): every few seconds on the clock it writes what the command has done so far. On a
 * terminal the line rewrites itself in place; piped or redirected, each update is a plain line,
 * so a log file shows the progress too.
 */
import type { Clock, TimerHandle } from '../core/clock.ts';

export const DEFAULT_PROGRESS_INTERVAL_MS = 5_000;

export interface ProgressLineOptions {
  readonly clock: Clock;
  /** Writes text as given (stderr by default in commands). */
  readonly write: (text: string) => void;
  /** Whether the destination is a terminal: the line is then redrawn in place. */
  readonly terminal: boolean;
  /** The text of the line now (called on each update, so it may read counters). */
  readonly render: () => string | Promise<string>;
  readonly intervalMs?: number;
}

export interface ProgressLine {
  /** Writes the line once more (the final state) and stops. */
  stop(): Promise<void>;
}

/** `0:05`, `12:30`, `1:02:03`. */
export function formatElapsed(milliseconds: number): string {
  const seconds = Math.max(0, Math.floor(milliseconds / 1000));
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const rest = String(seconds % 60).padStart(2, '0');
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${rest}` : `${minutes}:${rest}`;
}

/** `812 B`, `14.2 KB`, `3.1 MB`, `1.4 GB` (powers of 1024). */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}

export function startProgressLine(options: ProgressLineOptions): ProgressLine {
  const { clock, write, terminal } = options;
  let stopped = false;
  // Updates are written in order even when rendering awaits (a file size, say).
  let writing: Promise<void> = Promise.resolve();
  const update = () => {
    writing = writing.then(async () => {
      const text = await options.render();
      write(terminal ? `\r\u001b[2K${text}` : `${text}\n`);
    });
    return writing;
  };
  const timer: TimerHandle = clock.setInterval(() => {
    if (!stopped) void update().catch(() => undefined);
  }, options.intervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS);
  return {
    stop: async () => {
      if (stopped) return;
      stopped = true;
      clock.clearInterval(timer);
      await update().catch(() => undefined);
      if (terminal) write('\n');
    },
  };
}
