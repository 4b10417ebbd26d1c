/**
 * A progress bar for long replays and sweeps (cli-progress), shown only when stdout is a
 * terminal: piped or redirected output (`--json > file`) stays clean. The bar itself goes to
 * stderr, so it never mixes with what a command prints on stdout.
 */
import { Presets, SingleBar } from 'cli-progress';

export interface Progress {
  /** Whether a bar is being drawn (false off a terminal: every call is then a no-op). */
  readonly visible: boolean;
  update(done: number): void;
  increment(by?: number): void;
  stop(): void;
}

export interface ProgressOptions {
  readonly total: number;
  /** Shown before the bar, e.g. 'replay' or 'sweep'. */
  readonly label: string;
  /** Unit after the counts, e.g. 'events' or 'runs'. */
  readonly unit?: string;
  /** Where the bar is drawn (default: stderr). */
  readonly output?: NodeJS.WriteStream;
  /** Whether stdout is a terminal (default: `process.stdout.isTTY`). */
  readonly stdoutIsTerminal?: boolean;
}

const hidden: Progress = {
  visible: false,
  update: () => undefined,
  increment: () => undefined,
  stop: () => undefined,
};

export function createProgress(options: ProgressOptions): Progress {
  const output = options.output ?? process.stderr;
  const stdoutIsTerminal = options.stdoutIsTerminal ?? process.stdout.isTTY === true;
  if (!stdoutIsTerminal || output.isTTY !== true) return hidden;
  const bar = new SingleBar(
    {
      stream: output,
      format: `${options.label} [{bar}] {percentage}% | {value}/{total} ${options.unit ?? ''} | eta {eta_formatted}`,
      hideCursor: true,
      clearOnComplete: false,
      etaBuffer: 50,
    },
    Presets.shades_classic,
  );
  bar.start(Math.max(0, options.total), 0);
  let stopped = false;
  return {
    visible: true,
    update: (done) => {
      if (!stopped) bar.update(done);
    },
    increment: (by = 1) => {
      if (!stopped) bar.increment(by);
    },
    stop: () => {
      if (stopped) return;
      stopped = true;
      bar.stop();
    },
  };
}
