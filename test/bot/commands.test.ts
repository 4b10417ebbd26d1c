/** `paperbot run`, `status` and `kill`: their options, exit codes and output. */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import type { Bot, BotStopReport } from '../../src/cli/bot/bot.ts';
import { type LoadedBotConfig, resolveBotConfig } from '../../src/cli/bot/config.ts';
import { startBotHttpServer } from '../../src/cli/bot/http.ts';
import { createBotMetrics } from '../../src/cli/bot/metrics.ts';
import { registerKillCommand } from '../../src/cli/commands/kill.ts';
import { RUN_EXIT, registerRunCommand } from '../../src/cli/commands/run.ts';
import { registerStatusCommand, statusBaseUrl } from '../../src/cli/commands/status.ts';
import { VirtualClock } from '../../src/core/clock.ts';
import { buildProgram, COMMANDS } from '../../src/cli/main.ts';

const directory = mkdtempSync(join(tmpdir(), 'paperbot-commands-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(directory, name);
  writeFileSync(path, text);
  return path;
}

function program(): Command {
  return new Command('paperbot').exitOverride();
}

async function exitCodeOf(work: Promise<unknown>): Promise<number> {
  try {
    await work;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    throw error;
  }
  return 0;
}

describe('paperbot run', () => {
  it('is registered on the CLI with its siblings', async () => {
    const names = (await buildProgram()).commands.map((command) => command.name());
    expect(names).toEqual(expect.arrayContaining(['run', 'status', 'kill']));
  });

  it("lists each command by the summary that is the command's own description", async () => {
    const full = await buildProgram();
    expect(COMMANDS.map((entry) => entry.name)).toEqual(full.commands.map((c) => c.name()));
    for (const entry of COMMANDS) {
      const command = full.commands.find((candidate) => candidate.name() === entry.name);
      expect(command?.description(), entry.name).toBe(entry.summary);
    }
    // Only the command that runs is loaded; the others are listed by their summary alone.
    const forRun = await buildProgram(['node', 'paperbot', 'run', '--config', 'x.yaml']);
    expect(forRun.commands.find((c) => c.name() === 'run')?.options.length).toBeGreaterThan(0);
    expect(forRun.commands.find((c) => c.name() === 'backtest')?.options).toEqual([]);
    const forHelp = await buildProgram(['node', 'paperbot', 'help', 'backtest']);
    expect(forHelp.commands.find((c) => c.name() === 'backtest')?.options.length).toBeGreaterThan(
      0,
    );
  });

  it('lists every config problem and exits 2 before starting anything', async () => {
    const errors: string[] = [];
    let started = false;
    const path = file(
      'broken.yaml',
      'strategies:\n  - { id: a, name: market-maker, params: { halfSpreadTicks: 0 } }\nrisk:\n  max_orders_per_second: fast\nmetrics: { port: 99999, extra: 1 }\n',
    );
    const run = program();
    registerRunCommand(run, {
      printError: (text) => errors.push(text),
      start: async () => {
        started = true;
        throw new Error('must not start');
      },
    });
    const code = await exitCodeOf(run.parseAsync(['node', 'paperbot', 'run', '--config', path]));
    expect(code).toBe(RUN_EXIT.invalidConfig);
    expect(started).toBe(false);
    const text = errors.join('');
    expect(text).toContain(`invalid config ${path} (4 problems)`);
    expect(text).toContain('  - risk.max_orders_per_second: must be a number\n');
    expect(text).toContain('  - metrics.port: must be at most 65535\n');
    expect(text).toContain('  - metrics.extra: unknown key');
    expect(text).toContain('  - strategies[0].params.halfSpreadTicks: ');
  });

  it('refuses a key file others can read with exit code 2, before any connection', async () => {
    const keyPath = file('open.key.json', '{}');
    chmodSync(keyPath, 0o644);
    const path = file(
      'with-key.yaml',
      `venue: { key_file: ${JSON.stringify(keyPath)} }\nstrategies: [{ id: a, name: market-maker }]\njournal: { path: ${JSON.stringify(join(directory, 'unused.sqlite'))} }\nmetrics: { enabled: false }\n`,
    );
    const errors: string[] = [];
    const run = program();
    registerRunCommand(run, { printError: (text) => errors.push(text) });
    const code = await exitCodeOf(run.parseAsync(['node', 'paperbot', 'run', '--config', path]));
    expect(code).toBe(RUN_EXIT.invalidConfig);
    expect(errors.join('')).toMatch(/could not start: KEY_FILE_INSECURE: .*chmod 600/);
    // The check came first: no journal was created.
    expect(existsSync(join(directory, 'unused.sqlite'))).toBe(false);
  });

  it('stops the bot on a signal, ignores a repeated delivery, and forces on a second signal', async () => {
    const loaded = await resolveBotConfig({ strategies: [{ id: 'a', name: 'market-maker' }] });
    const handlers: ((signal: NodeJS.Signals) => void)[] = [];
    const stopReasons: string[] = [];
    const exits: number[] = [];
    const forced: number[] = [];
    let now = 10_000;
    let finishStop!: () => void;
    const fakeBot = {
      stop: (reason: string) => {
        stopReasons.push(reason);
        return new Promise<BotStopReport>((resolve) => {
          finishStop = () => resolve({ confirmed: true, remainingOrderIds: [] });
        });
      },
      logger: { warn: () => {} },
    } as unknown as Bot;
    let startedWith: LoadedBotConfig | null = null;
    const run = program();
    registerRunCommand(run, {
      load: async () => loaded,
      start: async (options) => {
        startedWith = options.loaded;
        return fakeBot;
      },
      onSignal: (handler) => {
        handlers.push(handler);
        return () => handlers.splice(handlers.indexOf(handler), 1);
      },
      exit: (code) => exits.push(code),
      forceExit: (code) => forced.push(code),
      now: () => now,
      printError: () => {},
    });
    const running = run.parseAsync(['node', 'paperbot', 'run']);
    while (startedWith === null) await new Promise((resolve) => setImmediate(resolve));
    expect(handlers).toHaveLength(1);
    handlers[0]?.('SIGINT');
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopReasons).toEqual(['SIGINT']);
    now += 200;
    handlers[0]?.('SIGINT');
    expect(forced).toEqual([]);
    now += 2_000;
    handlers[0]?.('SIGINT');
    expect(forced).toEqual([RUN_EXIT.forced]);
    finishStop();
    await running;
    expect(exits).toEqual([RUN_EXIT.ok]);
    expect(handlers).toHaveLength(0);
  });

  it('exits 3 naming the orders when the shutdown cannot confirm every order closed', async () => {
    const loaded = await resolveBotConfig({ strategies: [{ id: 'a', name: 'market-maker' }] });
    const handlers: ((signal: NodeJS.Signals) => void)[] = [];
    const exits: number[] = [];
    const printed: string[] = [];
    const fakeBot = {
      stop: async (): Promise<BotStopReport> => ({
        confirmed: false,
        remainingOrderIds: ['o-1', 'o-2'],
      }),
      logger: { warn: () => {} },
    } as unknown as Bot;
    const run = program();
    registerRunCommand(run, {
      load: async () => loaded,
      start: async () => fakeBot,
      onSignal: (handler) => {
        handlers.push(handler);
        return () => handlers.splice(handlers.indexOf(handler), 1);
      },
      exit: (code) => exits.push(code),
      forceExit: () => {},
      now: () => 0,
      printError: (text) => printed.push(text),
    });
    const running = run.parseAsync(['node', 'paperbot', 'run']);
    while (handlers.length === 0) await new Promise((resolve) => setImmediate(resolve));
    handlers[0]?.('SIGTERM');
    await expect(running).rejects.toMatchObject({ exitCode: RUN_EXIT.ordersMayRemain });
    expect(exits).toEqual([RUN_EXIT.ordersMayRemain]);
    expect(RUN_EXIT.ordersMayRemain).toBe(3);
    expect(printed.join('')).toMatch(/may remain open: o-1, o-2/);
  });

  it('aborts a start still under way on the first signal and exits 0', async () => {
    const loaded = await resolveBotConfig({ strategies: [{ id: 'a', name: 'market-maker' }] });
    const handlers: ((signal: NodeJS.Signals) => void)[] = [];
    const exits: number[] = [];
    let startSignal: AbortSignal | undefined;
    const run = program();
    registerRunCommand(run, {
      load: async () => loaded,
      start: (options) => {
        startSignal = options.signal;
        return new Promise<Bot>((_resolve, reject) => {
          options.signal?.addEventListener('abort', () =>
            reject(Object.assign(new Error('stopped'), { code: 'BOT_START_ABORTED' })),
          );
        });
      },
      onSignal: (handler) => {
        handlers.push(handler);
        return () => handlers.splice(handlers.indexOf(handler), 1);
      },
      exit: (code) => exits.push(code),
      printError: () => {},
    });
    const running = run.parseAsync(['node', 'paperbot', 'run']);
    while (startSignal === undefined) await new Promise((resolve) => setImmediate(resolve));
    expect(startSignal.aborted).toBe(false);
    handlers[0]?.('SIGTERM');
    expect(startSignal.aborted).toBe(true);
    await running;
    expect(exits).toEqual([RUN_EXIT.ok]);
  });

  it('exits 1 when the bot cannot start for a reason other than its config', async () => {
    const loaded = await resolveBotConfig({ strategies: [{ id: 'a', name: 'market-maker' }] });
    const errors: string[] = [];
    const run = program();
    registerRunCommand(run, {
      load: async () => loaded,
      start: async () => {
        throw Object.assign(new Error('port taken'), { code: 'METRICS_LISTEN_FAILED' });
      },
      onSignal: () => () => {},
      printError: (text) => errors.push(text),
    });
    const code = await exitCodeOf(run.parseAsync(['node', 'paperbot', 'run']));
    expect(code).toBe(RUN_EXIT.failed);
    expect(errors.join('')).toContain('could not start: METRICS_LISTEN_FAILED: port taken');
  });
});

const sampleStatus = {
  bot: {
    pid: 4242,
    startedAt: '2030-01-01T00:00:00.000Z',
    now: '2030-01-01T00:05:12.000Z',
    phase: 'running',
    venue: { baseUrl: 'http://127.0.0.1:8787', embedded: true, accountId: 'acct_1' },
    journal: '/tmp/journal.sqlite',
    metricsUrl: 'http://127.0.0.1:9464',
  },
  tradingState: 'REDUCING',
  tradingReason: 'daily loss 160 reached reduce_at 150',
  mayTrade: true,
  reconciled: true,
  deadman: { phase: 'armed', deadlineAt: Date.parse('2030-01-01T00:06:00.000Z'), reason: 'armed' },
  unknownIntents: 0,
  unresolvedIntents: 0,
  account: {
    total_equity: '9840.5',
    available: '9500',
    unrealized_pnl: '-3.25',
    settlement_asset: 'pUSDC',
  },
  positions: [
    {
      market_id: 'BTC-PERP',
      side: 'long',
      quantity: '0.004',
      entry_price: '64000',
      mark_price: '63187.5',
      unrealized_pnl: '-3.25',
    },
  ],
  openOrders: [
    {
      market_id: 'BTC-PERP',
      side: 'sell',
      type: 'limit',
      price: '63200',
      quantity: '0.002',
      filled_quantity: '0',
      status: 'OPEN',
      client_order_id: 'mm:abc:7',
    },
  ],
  strategies: [{ id: 'mm', status: 'running', nextSequence: 8 }],
  counters: { intents: 9, denied: 1, rejected: 0, accepted: 8, unknown: 0, fills: 3 },
  pnl: { equity: '9840.5', startEquity: '10000', session: '-159.5', unrealized: '-3.25' },
};

describe('paperbot status', () => {
  it('prints the trading state, PnL, positions and open orders of a running bot', async () => {
    const server = await startBotHttpServer({
      host: '127.0.0.1',
      port: 0,
      registry: createBotMetrics({ clock: new VirtualClock(0), processMetrics: false }).registry,
      health: () => ({ phase: 'running', tradingState: 'REDUCING', mayTrade: true }),
      status: () => sampleStatus,
    });
    try {
      const printed: string[] = [];
      const status = program();
      registerStatusCommand(status, { print: (text) => printed.push(text) });
      await status.parseAsync(['node', 'paperbot', 'status', '--url', server.url]);
      const text = printed.join('');
      expect(text).toContain(`paperbot status from ${server.url} (pid 4242, up 5m 12s)`);
      expect(text).toContain(
        'Trading:    REDUCING (daily loss 160 reached reduce_at 150); may trade: yes',
      );
      expect(text).toContain(
        'Dead-man:   armed, orders cancelled by the venue at 2030-01-01T00:06:00.000Z (in 48s)',
      );
      expect(text).toContain('PnL:        session -159.5 (since equity 10000), unrealized -3.25');
      expect(text).toMatch(
        /MARKET\s+SIDE\s+QUANTITY\s+ENTRY\s+MARK\s+UNREALIZED PNL\n\s+BTC-PERP\s+long\s+0\.004\s+64000\s+63187\.5\s+-3\.25/,
      );
      expect(text).toMatch(/BTC-PERP\s+sell\s+limit\s+63200\s+0\.002\s+0\s+OPEN\s+mm:abc:7/);

      const json: string[] = [];
      const raw = program();
      registerStatusCommand(raw, { print: (text) => json.push(text) });
      await raw.parseAsync(['node', 'paperbot', 'status', '--url', `${server.url}/`, '--json']);
      expect(JSON.parse(json.join(''))).toEqual(sampleStatus);
    } finally {
      await server.close();
    }
  });

  it('finds the address in the config, and explains when it cannot', () => {
    const path = file('status.yaml', 'metrics: { host: 0.0.0.0, port: 9555 }\n');
    expect(statusBaseUrl({ config: path })).toBe('http://127.0.0.1:9555');
    const any = file('any-port.yaml', 'metrics: { port: 0 }\n');
    expect(() => statusBaseUrl({ config: any })).toThrow(/pass --url/);
    expect(statusBaseUrl({ config: any, url: 'http://127.0.0.1:1/' })).toBe('http://127.0.0.1:1');
  });

  it('says so when no bot answers', async () => {
    const status = program();
    registerStatusCommand(status, {
      print: () => {},
      fetchText: async () => {
        throw new Error('connect ECONNREFUSED');
      },
    });
    await expect(
      status.parseAsync(['node', 'paperbot', 'status', '--url', 'http://127.0.0.1:9']),
    ).rejects.toMatchObject({
      code: 'STATUS_UNAVAILABLE',
      message: expect.stringMatching(/is it running/),
    });
  });
});

describe('paperbot kill', () => {
  it('writes the configured kill file with the reason, and --clear removes it', async () => {
    const killFile = join(directory, 'state', 'bot.kill');
    const path = file(
      'kill.yaml',
      `strategies: [{ id: a, name: not-loaded-here }]\nrisk: { kill_switch: { file: ${JSON.stringify(killFile)}, poll_ms: 250 } }\n`,
    );
    const printed: string[] = [];
    const kill = program();
    registerKillCommand(kill, { print: (text) => printed.push(text) });
    await kill.parseAsync([
      'node',
      'paperbot',
      'kill',
      '--config',
      path,
      '--reason',
      'market looks wrong',
    ]);
    expect(readFileSync(killFile, 'utf8')).toBe('market looks wrong\n');
    expect(printed.join('')).toContain('halts within 250 ms');

    const clear = program();
    registerKillCommand(clear, { print: (text) => printed.push(text) });
    await clear.parseAsync(['node', 'paperbot', 'kill', '--config', path, '--clear']);
    expect(existsSync(killFile)).toBe(false);
    expect(printed.join('')).toContain('removed the kill file');
  });

  it('refuses when the config disables the kill file, naming the signal instead', async () => {
    const path = file('no-file.yaml', 'risk: { kill_switch: { file: null } }\n');
    const kill = program();
    registerKillCommand(kill, { print: () => {} });
    await expect(
      kill.parseAsync(['node', 'paperbot', 'kill', '--config', path]),
    ).rejects.toMatchObject({
      code: 'KILL_SWITCH_DISABLED',
      message: expect.stringMatching(/send SIGUSR2/),
    });
  });
});
