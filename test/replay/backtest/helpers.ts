/**
 * Shared fixtures of the backtest tests: short emulator sessions recorded on virtual time into
 * temporary folders, and backtest config documents for them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { parseRiskConfig } from '../../../src/runtime/risk/index.ts';
import {
  type EmulatorSessionOptions,
  type EmulatorSessionResult,
  recordEmulatorSession,
} from '../../../src/replay/recorder/emulator-session.ts';
import { loadStrategyDefinition } from '../../../src/runtime/strategy/index.ts';

export const SESSION_START = Date.UTC(2025, 0, 1);

export async function temporaryFolder(prefix: string): Promise<{
  readonly path: string;
  remove(): Promise<void>;
}> {
  const path = await mkdtemp(join(tmpdir(), `paperbot-${prefix}-`));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

export function recordSession(
  directory: string,
  options: Partial<EmulatorSessionOptions> = {},
): Promise<EmulatorSessionResult> {
  return recordEmulatorSession({
    directory,
    seed: 42,
    startMs: SESSION_START,
    durationMs: 3 * 60_000,
    marketIds: ['BTC-PERP', 'ETH-PERP'],
    bookDepth: 10,
    bookIntervalMs: 1_000,
    tradesIntervalMs: 1_000,
    ...options,
  });
}

export const MARKET_MAKER_PARAMS = {
  markets: ['BTC-PERP'],
  halfSpreadTicks: 6,
  refreshTicks: 4,
  leverage: 5,
  marginMode: 'isolated',
} as const;

export const RISK = {
  max_orders_per_second: 20,
  max_orders_per_minute: 1200,
  kill_switch: { file: null, signal: null },
} as const;

/** A backtest config document: the market maker on BTC-PERP over `data`. */
export function marketMakerDocument(
  data: readonly string[],
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    data: [...data],
    seed: 1,
    strategies: [{ id: 'mm-btc', name: 'market-maker', params: { ...MARKET_MAKER_PARAMS } }],
    risk: RISK,
    logging: { level: 'silent' },
    ...extra,
  };
}

/** The kernel strategies of a live emulator session trading like `marketMakerDocument`. */
export async function marketMakerTrading() {
  const { definition } = await loadStrategyDefinition('market-maker', {
    strategiesDirectory: 'strategies',
  });
  return {
    strategies: [{ id: 'mm-btc', definition, params: { ...MARKET_MAKER_PARAMS } }],
    risk: parseRiskConfig(RISK),
  };
}

/** Runs `paperbot <args>` on a program with one command registered; collects output. */
export async function runCommand(
  register: (
    program: Command,
    print: (text: string) => void,
    printError: (text: string) => void,
  ) => void,
  args: readonly string[],
): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const program = new Command('paperbot').exitOverride();
  register(
    program,
    (text) => {
      out += text;
    },
    (text) => {
      err += text;
    },
  );
  try {
    await program.parseAsync(['node', 'paperbot', ...args]);
    return { code: 0, out, err };
  } catch (error) {
    return { code: (error as { exitCode?: number }).exitCode ?? 1, out, err };
  }
}
