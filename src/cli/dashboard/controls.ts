/**
 * The dashboard's buttons, each moving the bot's one kill switch as an operator's command
 * would (`paperbot kill`, `--reduce-only`, `--clear`: the same kill file, the same effect):
 * - halt: writes the kill file (so a restart stays halted) and halts the gate at once;
 * - reduce-only: writes the kill file in reduce-only mode and reduces at once;
 * - clear: removes the kill file and resumes at once;
 * - cancel-all: the kernel's operator cancel-all, journaled and sent in the executor's lane.
 * Every action is logged with where it came from.
 */
import type { Logger } from '../../core/logger.ts';
import type { KillSwitch } from '../../runtime/risk/index.ts';

export type ControlAction = 'halt' | 'reduce' | 'clear' | 'cancel-all';
export const CONTROL_ACTIONS: readonly ControlAction[] = ['halt', 'reduce', 'clear', 'cancel-all'];

/** What of the bot the controls use. */
export interface ControlTarget {
  readonly killSwitch: Pick<KillSwitch, 'file' | 'halt' | 'reduceOnly' | 'clear'>;
  cancelAllOrders(): Promise<{ readonly ok: boolean; readonly message: string }>;
}

export interface ControlResult {
  readonly ok: boolean;
  readonly message: string;
}

export interface DashboardControlsOptions {
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
  const { logger } = options;
  const { killSwitch } = target;
  const origin = 'dashboard';
  const where = killSwitch.file === null ? '' : `; kill file ${killSwitch.file}`;
  logger.warn(`dashboard: ${action}`, { event: 'dashboard.control', action });
  switch (action) {
    case 'halt':
      killSwitch.halt(origin);
      return { ok: true, message: `halted${where === '' ? '' : `${where} written`}` };
    case 'reduce':
      killSwitch.reduceOnly(origin);
      return { ok: true, message: `reduce-only${where === '' ? '' : `${where} written`}` };
    case 'clear': {
      const existed = killSwitch.clear(origin);
      return { ok: true, message: existed ? `cleared${where} removed` : 'cleared' };
    }
    case 'cancel-all':
      return target.cancelAllOrders();
  }
}
