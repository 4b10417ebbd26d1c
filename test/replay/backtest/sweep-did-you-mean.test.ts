/**
 * A mistyped swept or searched name is refused before any backtest runs, in the config's own
 * sentences with the nearest name suggested (not zod's raw `Unrecognized key: "halfSpredTicks"`).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { registerBacktestCommand } from '../../../src/cli/commands/backtest.ts';
import { marketMakerDocument, recordSession, runCommand, temporaryFolder } from './helpers.ts';

let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let config: string;

beforeAll(async () => {
  folder = await temporaryFolder('paperbot-sweep-dym-');
  const session = join(folder.path, 'tiny');
  await recordSession(session, { durationMs: 30_000, marketIds: ['BTC-PERP'] });
  config = join(folder.path, 'config.yaml');
  await writeFile(config, stringify(marketMakerDocument([session])));
}, 60_000);

afterAll(async () => {
  await folder.remove();
});

const backtest = (args: readonly string[]) =>
  runCommand(
    (program, print, printError) =>
      registerBacktestCommand(program, { print, printError, interactive: false }),
    ['backtest', '--config', config, ...args],
  );

describe('mistyped sweep and search names', () => {
  it('suggests the strategy parameter meant by a sweep', async () => {
    const result = await backtest(['--sweep', 'halfSpredTicks=4,8', '--workers', '1']);
    expect(result.code).not.toBe(0);
    const text = result.out + result.err;
    expect(text).toContain('halfSpredTicks: unknown key; did you mean `halfSpreadTicks`?');
    expect(text).not.toContain('Unrecognized key');
  });

  it('suggests the config key meant by a sweep of a section', async () => {
    const result = await backtest(['--sweep', 'venue.slippage_bsp=0,2', '--workers', '1']);
    expect(result.code).not.toBe(0);
    const text = result.out + result.err;
    expect(text).toContain('venue.slippage_bsp: unknown key; did you mean `slippage_bps`?');
    expect(text).not.toContain('Unrecognized key');
  });

  it('suggests the strategy parameter meant by a search', async () => {
    const result = await backtest([
      '--search',
      'refreshTiks=2..6',
      '--budget',
      '2',
      '--workers',
      '1',
    ]);
    expect(result.code).not.toBe(0);
    const text = result.out + result.err;
    expect(text).toContain('refreshTiks: unknown key; did you mean `refreshTicks`?');
    expect(text).not.toContain('Unrecognized key');
  });
});
