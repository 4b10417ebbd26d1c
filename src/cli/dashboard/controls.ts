/**
 * The dashboard's buttons, each going the way an operator's command goes:
 * - halt: writes the kill file as `paperbot kill` does (so a restart stays halted), and halts
 *   the gate at once as the kill-file poll would, source `kill_switch`;
 * - reduce-only: the gate's `reduce`;
 * - clear: removes the kill file as `paperbot kill --clear` does, then `resume()`;
 * - cancel-all: the kernel's operator cancel-all, journaled and sent in the executor's lane.
 * Every action is logged with where it came from.
 */
import type { Logger } from 'pino';
import { clearKill, requestKill } from '../../runtime/risk/index.ts';

export type ControlAction = 'halt' | 'reduce' | 'clear' | 'cancel-all';
export const CONTROL_ACTIONS: readonly ControlAction[] = ['halt', 'reduce', 'clear', 'cancel-all'];

/** What of the kernel the controls use; a `Kernel` has it all. */
export interface ControlTarget {
  readonly gate: {
    halt(reason: string, source?: 'manual' | 'kill_switch'): void;
    reduce(reason: string): void;
    resume(): void;
  };
  cancelAllOrders(): Promise<{ readonly ok: boolean; readonly message: string }>;
}

export interface ControlResult {
  readonly ok: boolean;
  readonly message: string;
}

export interface DashboardControlsOptions {
  /** The kill file of `risk.kill_switch.file` (absolute), or null when disabled. */
  readonly killFile: string | null;
  readonly logger: Logger;
}

export function isControlAction(value: string): value is ControlAction {
  return (CONTROL_ACTIONS as readonly string[]).includes(value);
}

export async function runControl(
  target: ControlTarget,
  action: ControlAction,
  options: DashboardControlsOptions,
): Promise<ControlResult> {
  const { killFile, logger } = options;
  const reason = 'dashboard';
  logger.warn({ event: 'dashboard.control', action }, `dashboard: ${action}`);
  switch (action) {
    case 'halt':
      if (killFile !== null) {
        requestKill(killFile, reason);
        target.gate.halt(`kill file ${killFile}: ${reason}`, 'kill_switch');
        return { ok: true, message: `halted; kill file written at ${killFile}` };
      }
      target.gate.halt(reason, 'kill_switch');
      return { ok: true, message: 'halted' };
    case 'reduce':
      target.gate.reduce(reason);
      return { ok: true, message: 'reduce-only' };
    case 'clear': {
      const existed = killFile === null ? false : clearKill(killFile);
      target.gate.resume();
      return { ok: true, message: existed ? 'cleared; kill file removed' : 'cleared' };
    }
    case 'cancel-all':
      return target.cancelAllOrders();
  }
}
