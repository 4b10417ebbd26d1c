/**
 * The bot assembled in this process against its embedded emulator: start, trade, the HTTP
 * endpoint, the kill switch, a clean stop, and a restart that resumes the account and journal.
 */
import { EventEmitter } from 'node:events';
import { createServer, type Socket } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { Bot, EMBEDDED_ACCOUNT_FILE } from '../../src/cli/bot/bot.ts';
import { resolveBotConfig } from '../../src/cli/bot/config.ts';
import { createBotLogger } from '../../src/cli/bot/logging.ts';
import { StatusDocument } from '../../src/cli/bot/status-view.ts';
import { systemClock } from '../../src/core/clock.ts';
import { Journal } from '../../src/runtime/journal/index.ts';
import { requestKill } from '../../src/runtime/risk/index.ts';
import { Credential, generateKeyPair, writeKeyFile } from '../../src/signing/index.ts';
import { allOrders, delay, FIXTURE_STRATEGIES, LineCollector } from './helpers.ts';

const directory = mkdtempSync(join(tmpdir(), 'paperbot-bot-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const ACTIVE = new Set(['PENDING', 'SUBMITTED', 'OPEN', 'PARTIALLY_FILLED']);

async function getJson(url: string): Promise<{ status: number; body: unknown }> {
  const response = await request(url);
  return { status: response.statusCode, body: await response.body.json() };
}

async function until(what: string, test: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = systemClock.now() + timeoutMs;
  while (!test()) {
    if (systemClock.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(10);
  }
}

function botDocument() {
  return {
    venue: {
      key_file: null,
      emulator: { seed: 'in-process', data_dir: join(directory, 'emulator') },
      // The emulator is read strictly, so that it cannot drift (contract section 7).
      reading: 'strict',
    },
    strategies_dir: FIXTURE_STRATEGIES,
    strategies: [
      {
        id: 'rest',
        name: 'steady-submitter',
        params: { marketId: 'BTC-PERP', intervalMs: 30, maxOpen: 2, churn: false },
      },
    ],
    risk: {
      kill_switch: { file: join(directory, 'paperbot.kill'), poll_ms: 20, signal: 'SIGUSR2' },
    },
    journal: { path: join(directory, 'journal.sqlite'), durability: 'normal' },
    metrics: { host: '127.0.0.1', port: 0 },
    market_data: { markets: ['BTC-PERP'] },
  };
}

async function startBot(lines: LineCollector, signals: EventEmitter): Promise<Bot> {
  const loaded = await resolveBotConfig(botDocument(), 'test');
  return Bot.start({
    loaded,
    logger: createBotLogger({ level: 'info', clock: systemClock, destination: lines }),
    signalSource: signals,
    processMetrics: false,
  });
}

describe('the bot in-process, on its embedded emulator', () => {
  it('trades, serves its endpoint, halts on the kill switch, stops cleanly and resumes', async () => {
    const lines = new LineCollector();
    const signals = new EventEmitter();
    const bot = await startBot(lines, signals);
    onTestFinished(async () => {
      await bot.stop('test cleanup');
    });
    const emulator = bot.emulator;
    const url = bot.httpUrl;
    expect(emulator).not.toBeNull();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    if (emulator === null || url === null) return;
    const accountId = bot.venue?.accountId ?? '';
    const active = () => allOrders(emulator, accountId).filter((order) => ACTIVE.has(order.status));

    // The start line names the venue, the journal and the endpoint, never a key.
    const started = lines.records().find((record) => record.event === 'bot.started');
    expect(started).toMatchObject({
      venue: emulator.baseUrl,
      embedded_emulator: true,
      markets: ['BTC-PERP'],
      journal: join(directory, 'journal.sqlite'),
      metrics: `${url}/metrics`,
    });
    expect(lines.text).not.toMatch(/"private_key":"(?!\[redacted\])/);

    await until('two resting orders', () => active().length === 2);
    await until('the bot to see them', () => (bot.status()?.openOrders.length ?? 0) === 2);

    const health = await getJson(`${url}/health`);
    expect(health).toEqual({
      status: 200,
      body: { status: 'ok', trading_state: 'ACTIVE', may_trade: true },
    });
    const status = await getJson(`${url}/status`);
    expect(status.status).toBe(200);
    const document = StatusDocument.parse(status.body);
    expect(document.bot.venue).toEqual({
      baseUrl: emulator.baseUrl,
      embedded: true,
      accountId,
    });
    expect(document.openOrders.map((order) => order.client_order_id).sort()).toEqual(
      active()
        .map((order) => order.client_order_id)
        .sort(),
    );
    expect(document.strategies).toEqual([{ id: 'rest', status: 'running', nextSequence: 3 }]);
    expect(document.pnl.startEquity).toBe(document.account?.total_equity);
    expect(document.deadman?.phase).toBe('armed');
    const metrics = await request(`${url}/metrics`);
    const text = await metrics.body.text();
    expect(text).toMatch(
      /^paperbot_intent_outcomes_total\{strategy="rest",outcome="accepted"\} 2$/m,
    );
    expect(text).toMatch(/^paperbot_stream_state\{state="live"\} 1$/m);

    // The kill signal halts; the gate then refuses new exposure.
    signals.emit('SIGUSR2');
    expect(bot.status()?.tradingState).toBe('HALTED');
    expect((await getJson(`${url}/health`)).body).toMatchObject({ trading_state: 'HALTED' });
    bot.kernel?.resume();
    expect(bot.status()?.tradingState).toBe('ACTIVE');
    // The kill file too, at its next poll.
    requestKill(join(directory, 'paperbot.kill'), 'operator says stop');
    await until('the kill file to halt', () => bot.status()?.tradingState === 'HALTED');
    expect(bot.status()?.tradingReason).toContain('operator says stop');
    rmSync(join(directory, 'paperbot.kill'));

    await bot.stop('test over');
    expect(bot.phase).toBe('stopped');
    expect(active()).toEqual([]);
    expect(lines.records().find((record) => record.event === 'bot.shutdown')).toMatchObject({
      cancelled: true,
      disarmed: true,
      error: null,
    });
    await expect(request(`${url}/health`)).rejects.toThrow();
    // The emulator's account is remembered (no secret in the file).
    const remembered = readFileSync(join(directory, 'emulator', EMBEDDED_ACCOUNT_FILE), 'utf8');
    expect(JSON.parse(remembered)).toMatchObject({ account_id: accountId });
    expect(remembered).not.toContain('private');

    const journal = Journal.open(join(directory, 'journal.sqlite'), {
      now: () => systemClock.now(),
    });
    const epoch = journal.epoch;
    expect(journal.openIntents()).toEqual([]);
    journal.close();

    // A restart resumes the same account and journal: ids continue, nothing is reused.
    const again = new LineCollector();
    const restarted = await startBot(again, new EventEmitter());
    try {
      expect(restarted.venue?.accountId).toBe(accountId);
      const restartedEmulator = restarted.emulator;
      if (restartedEmulator === null) throw new Error('no embedded emulator');
      await until(
        'two resting orders again',
        () =>
          allOrders(restartedEmulator, accountId).filter((order) => ACTIVE.has(order.status))
            .length === 2,
      );
      const orders = allOrders(restartedEmulator, accountId);
      expect(orders.length).toBe(4);
      expect(new Set(orders.map((order) => order.client_order_id)).size).toBe(4);
      expect(orders.every((order) => order.client_order_id?.includes(epoch))).toBe(true);
      expect(restarted.status()?.strategies[0]?.nextSequence).toBe(5);
    } finally {
      await restarted.stop('test over');
    }
    expect(existsSync(join(directory, 'paperbot.kill'))).toBe(false);
  }, 40_000);

  it('refuses a second bot on the same journal with JOURNAL_LOCKED', async () => {
    const first = await startBot(new LineCollector(), new EventEmitter());
    try {
      const loaded = await resolveBotConfig(
        { ...botDocument(), metrics: { enabled: false } },
        'test',
      );
      await expect(
        Bot.start({
          loaded: {
            ...loaded,
            config: {
              ...loaded.config,
              venue: {
                ...loaded.config.venue,
                emulator: { ...loaded.config.venue.emulator, data_dir: null },
              },
            },
          },
          logger: createBotLogger({ level: 'silent', clock: systemClock }),
          signalSource: null,
          processMetrics: false,
        }),
      ).rejects.toMatchObject({ code: 'JOURNAL_LOCKED' });
    } finally {
      await first.stop('test over');
    }
  });

  it('gives up a start that hangs on an unresponsive venue when aborted, closing what it opened', async () => {
    // A venue that accepts connections and never answers.
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const keyPath = join(directory, 'silent.key.json');
    await writeKeyFile(
      keyPath,
      Credential.create({
        keyId: 'key_silent_1',
        accountId: 'acct_silent',
        apiBaseUrl: `http://127.0.0.1:${port}`,
        wsUrl: `ws://127.0.0.1:${port}/v1/ws`,
        scopes: ['account:read', 'orders:read', 'fills:read', 'orders:write'],
        createdAt: '2030-01-01T00:00:00Z',
        expiresAt: null,
        privateKey: generateKeyPair().privateKey,
      }),
      { overwrite: true },
    );
    const journalPath = join(directory, 'silent.sqlite');
    const loaded = await resolveBotConfig({
      venue: { key_file: keyPath, request_timeout_ms: 1_000, reading: 'strict' },
      strategies_dir: FIXTURE_STRATEGIES,
      strategies: [{ id: 'rest', name: 'steady-submitter', params: { marketId: 'BTC-PERP' } }],
      risk: { kill_switch: { file: null, signal: null } },
      journal: { path: journalPath },
      metrics: { port: 0 },
    });
    const lines = new LineCollector();
    const aborter = new AbortController();
    const starting = Bot.start({
      loaded,
      logger: createBotLogger({ level: 'info', clock: systemClock, destination: lines }),
      signalSource: null,
      processMetrics: false,
      signal: aborter.signal,
    });
    try {
      await until('a connection to the silent venue', () => sockets.size > 0);
      const abortedAt = systemClock.now();
      aborter.abort();
      await expect(starting).rejects.toMatchObject({ code: 'BOT_START_ABORTED' });
      // Bounded by the request timeout: the request under way is waited for, not abandoned.
      expect(systemClock.now() - abortedAt).toBeLessThan(5_000);
      expect(lines.records().some((record) => record.event === 'bot.started')).toBe(false);
      // The journal was closed: another bot may open it.
      const journal = Journal.open(journalPath, { now: () => systemClock.now() });
      journal.close();
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
