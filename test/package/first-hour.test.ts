/**
 * A new user's first hour, in a temporary project, with only what the packed tarball installs
 * (offline, as test/package/pack.test.ts does): scaffold a strategy and run its test, write a
 * bracketed strategy and backtest it on a fresh recording, read the report's exits, run the bot
 * on its embedded emulator, halt and clear it from the CLI, and check that `paperbot status` and
 * the dashboard (Chromium) agree with the gate at each step.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';

const run = promisify(execFile);
const projectRoot = resolve(import.meta.dirname, '../..');
const STEP_TIMEOUT_MS = 60_000;

let workspace = '';
let app = '';
let browser: Browser | null = null;
let bot: ChildProcess | null = null;

/** `npx paperbot ...` in the app: the installed CLI. */
function paperbot(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(join(app, 'node_modules/.bin/paperbot'), args, {
    cwd: app,
    timeout: STEP_TIMEOUT_MS,
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** A bracketed dip buyer, as a user writes it from docs/strategies.md. */
const BRACKET_STRATEGY = `import { filter, mergeMap } from 'rxjs';
import { z } from 'zod';
import {
  bracket,
  defineStrategy,
  marketOrder,
  parseDecimal,
  priceOnTick,
  smallestOrderQuantity,
} from 'paperbot/strategy';

export default defineStrategy({
  name: 'my-bracket',
  description: 'Buys when flat, with a 0.1% stop-loss and a 0.1% take-profit.',
  params: z.strictObject({ marketId: z.string().default('BTC-PERP') }),
  create: (ctx, settings) => {
    const market = ctx.market(settings.marketId);
    const live = new Set(['pending', 'waiting', 'triggered']);
    return ctx.ticker$(settings.marketId).pipe(
      filter((ticker) => ticker.data_status === 'live' && ticker.mark_price !== null),
      filter(() => ctx.position(settings.marketId).quantity.eq(0)),
      filter(() => ctx.openOrders(settings.marketId).length === 0),
      filter(() => !ctx.emulatedOrders(settings.marketId).some((exit) => live.has(exit.state))),
      mergeMap((ticker) => {
        const mark = parseDecimal(ticker.mark_price ?? '0');
        const quantity = smallestOrderQuantity(market, mark);
        return [
          bracket({
            entry: marketOrder({ marketId: settings.marketId, side: 'buy', quantity }),
            stopLoss: { triggerPrice: priceOnTick(market, mark.times('0.999'), 'sell') },
            takeProfit: { triggerPrice: priceOnTick(market, mark.times('1.001'), 'sell') },
          }),
        ];
      }),
    );
  },
});
`;

beforeAll(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'paperbot-first-hour-'));
  await run('npm', ['pack', '--silent', '--pack-destination', workspace], {
    cwd: projectRoot,
    timeout: 240_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  const tarball = (await readdir(workspace)).find((name) => name.endsWith('.tgz'))!;
  app = join(workspace, 'app');
  // As docs/strategies.md says to install the tarball with no network.
  await run(process.execPath, [
    join(projectRoot, 'scripts/offline-app.mjs'),
    join(workspace, tarball),
    app,
  ]);
  await run('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', '--silent'], {
    cwd: app,
    timeout: 240_000,
  });
  await cp(
    join(projectRoot, 'node_modules/better-sqlite3/build'),
    join(app, 'node_modules/better-sqlite3/build'),
    { recursive: true },
  );
  // The scaffold's test runs on vitest, which a user adds as a dev dependency: this checkout's.
  symlinkSync(join(projectRoot, 'node_modules/vitest'), join(app, 'node_modules/vitest'));
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}, 300_000);

afterAll(async () => {
  if (bot !== null && bot.exitCode === null) bot.kill('SIGKILL');
  await browser?.close();
  if (workspace !== '') await rm(workspace, { recursive: true, force: true });
});

describe('the first hour of a new user', () => {
  it('scaffolds and tests a strategy', async () => {
    const created = await paperbot('new', 'strategy', 'my-strategy');
    expect(created.stdout).toContain('strategies/my-strategy');
    const tested = await run(
      process.execPath,
      [join(app, 'node_modules/vitest/vitest.mjs'), 'run', 'strategies/my-strategy'],
      { cwd: app, timeout: STEP_TIMEOUT_MS },
    );
    expect(tested.stdout).toMatch(/2 passed/);
  }, 120_000);

  it('backtests a bracketed strategy on a fresh recording and reads its exits', async () => {
    await mkdir(join(app, 'strategies/my-bracket'), { recursive: true });
    await writeFile(join(app, 'strategies/my-bracket/index.ts'), BRACKET_STRATEGY);
    await paperbot('record', '--emulator-virtual', '--duration', '15m', '--out', 'data/session');
    await writeFile(
      join(app, 'backtest.yaml'),
      stringify({
        data: ['data/session'],
        strategies_dir: 'strategies',
        strategies: [{ id: 'dip', name: 'my-bracket', params: { marketId: 'BTC-PERP' } }],
      }),
    );
    const backtest = await paperbot('backtest', '--config', 'backtest.yaml', '--json');
    const report = JSON.parse(backtest.stdout) as {
      summary: { trades: { closed: number } } & Record<string, unknown>;
      trades?: Record<string, unknown>[];
      lists?: { trades?: Record<string, unknown>[] };
    };
    const trades = report.trades ?? report.lists?.trades ?? [];
    // The brackets' legs closed trades: entries and exits both filled.
    expect(trades.length).toBeGreaterThan(0);
    // The report names why each trade ended (once the report's exit reasons are in).
    if (trades.some((trade) => 'exitReason' in trade)) {
      for (const trade of trades) {
        expect(String(trade.exitReason)).toMatch(/stop|take|bracket|end|open|signal/i);
      }
    }
    await paperbot(
      'backtest',
      '--config',
      'backtest.yaml',
      '--csv',
      'out',
      '--report',
      'out/report.html',
    );
    const csv = await readFile(join(app, 'out/trades.csv'), 'utf8');
    const [header, ...rows] = csv.trim().split('\n');
    expect(rows.length).toBeGreaterThan(0);
    if (header!.includes('exit_reason')) expect(csv).toMatch(/stop|take|bracket/i);
  }, 180_000);

  it('runs the bot, halts and clears it from the CLI, and the dashboard agrees', async () => {
    await mkdir(join(app, 'config'), { recursive: true });
    await writeFile(
      join(app, 'config/bot.yaml'),
      stringify({
        venue: { key_file: null, emulator: { seed: 'first-hour' } },
        strategies_dir: 'strategies',
        strategies: [{ id: 'mine', name: 'my-strategy', params: { markets: ['BTC-PERP'] } }],
        risk: { kill_switch: { poll_ms: 200 } },
        market_data: { markets: ['BTC-PERP'] },
      }),
    );
    const child = spawn(
      join(app, 'node_modules/.bin/paperbot'),
      ['run', '--metrics-port', '0', '--log-format', 'json'],
      { cwd: app, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    bot = child;
    let output = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      output += chunk;
    });
    const exited = new Promise<number | null>((done) => child.once('exit', done));
    const deadline = Date.now() + 30_000;
    let base = '';
    while (base === '' && Date.now() < deadline) {
      base = /"dashboard":"(http:\/\/127\.0\.0\.1:\d+)\/"/.exec(output)?.[1] ?? '';
      if (base === '') await new Promise((done) => setTimeout(done, 100));
    }
    expect(base, output.slice(-2000)).not.toBe('');

    const page = await browser!.newPage();
    try {
      await page.goto(`${base}/`);
      const agree = async (state: string, mayTrade: 'yes' | 'no') => {
        await page.locator('#trading-state', { hasText: state }).waitFor({ timeout: 15_000 });
        // `paperbot status` finds the bot on its free port and says the same.
        let text = '';
        for (let attempt = 0; attempt < 50; attempt++) {
          text = (await paperbot('status')).stdout;
          if (text.includes(`may trade: ${mayTrade}`)) break;
          await new Promise((done) => setTimeout(done, 200));
        }
        expect(text).toMatch(new RegExp(`Trading: +${state}\\b.*; may trade: ${mayTrade}`));
        await page.locator('#may-trade', { hasText: mayTrade }).waitFor({ timeout: 15_000 });
      };
      await agree('ACTIVE', 'yes');

      const halted = await paperbot('kill', '--reason', 'first hour');
      expect(halted.stdout).toContain('paperbot.kill');
      await agree('HALTED', 'no');
      await page.locator('#trading-reason', { hasText: 'first hour' }).waitFor({ timeout: 5_000 });

      const cleared = await paperbot('kill', '--clear');
      expect(cleared.stdout).toContain('removed the kill file');
      await agree('ACTIVE', 'yes');
    } finally {
      await page.close();
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  }, 120_000);
});
