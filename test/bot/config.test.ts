import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isPaperbotError, type PaperbotError } from '../../src/core/errors.ts';
import {
  BotConfig,
  type ConfigIssue,
  deadmanSettings,
  loadBotConfig,
  readMetricsSection,
  readRiskSection,
  resolveBotConfig,
} from '../../src/cli/bot/config.ts';
import { executorSettings, shutdownSettings } from '../../src/runtime/config.ts';
import { resolveDeadmanConfig } from '../../src/runtime/deadman/index.ts';

const directory = mkdtempSync(join(tmpdir(), 'paperbot-config-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(directory, name);
  writeFileSync(path, text);
  return path;
}

async function issuesOf(work: () => Promise<unknown>): Promise<ConfigIssue[]> {
  try {
    await work();
  } catch (error) {
    expect(isPaperbotError(error)).toBe(true);
    expect((error as PaperbotError).code).toBe('INVALID_CONFIG');
    return (error as PaperbotError).details.issues as ConfigIssue[];
  }
  throw new Error('expected INVALID_CONFIG');
}

const minimal = {
  strategies: [{ id: 'mm', name: 'market-maker', params: {} }],
};

describe('bot config', () => {
  it('loads the shipped config/bot.yaml with its strategies resolved', async () => {
    const loaded = await loadBotConfig('config/bot.yaml');
    expect(loaded.config.venue.key_file).toBeNull();
    expect(loaded.strategies.map((strategy) => [strategy.id, strategy.name])).toEqual([
      ['mm-btc', 'market-maker'],
      ['mm-eth', 'market-maker'],
    ]);
    // Params come back parsed by the plugin's schema (the demo sets every one it uses).
    expect(loaded.strategies[0]?.params).toMatchObject({
      markets: ['BTC-PERP'],
      anchor: 'index',
      skewTicksPerQuote: 10,
    });
    expect(loaded.emulatorConfig?.markets.map((market) => market.market_id)).toContain('BTC-PERP');
    expect(loaded.config.risk.max_order_notional?.toString()).toBe('500');
  });

  it('fills every default from a minimal document', async () => {
    const loaded = await resolveBotConfig(minimal);
    const config = loaded.config;
    expect(config.metrics).toEqual({
      enabled: true,
      host: '127.0.0.1',
      port: 9464,
      allowed_hosts: [],
    });
    expect(config.deadman.timeout_seconds).toBe(60);
    expect(config.journal.durability).toBe('full');
    expect(config.market_data).toEqual({ markets: null, book_poll_ms: 1000, trades_poll_ms: 1000 });
    expect(config.risk.max_orders_per_second).toBe(5);
    expect(deadmanSettings(config.deadman)).toMatchObject({ timeoutSeconds: 60 });
    expect(executorSettings(config.execution)).toMatchObject({
      defaultMarginMode: 'isolated',
      simulate: { place: true, amend: true, closePosition: true },
    });
  });

  it('lists every problem at once, with its path, including unknown keys and plugin params', async () => {
    const issues = await issuesOf(() =>
      resolveBotConfig({
        venue: { key_file: 7, emulator: { port: 70000 } },
        strategies: [
          { id: 'mm', name: 'market-maker', params: { halfSpreadTicks: 'wide', spread_ticks: 3 } },
          { id: 'mm', name: 'market-maker' },
          { id: 'x', name: 'no-such-plugin' },
        ],
        risk: { max_orders_per_second: 'fast', surprise: true },
        metrics: { port: -1 },
        deadman: { timeout_seconds: 8, refresh_interval_ms: 5000 },
        logging: { level: 'loud' },
        unexpected: 1,
      }),
    );
    const byPath = new Map(issues.map((issue) => [issue.path, issue.message]));
    expect(byPath.get('venue.key_file')).toBe("must be a string such as '7'; quote it in YAML");
    expect(byPath.get('venue.emulator.port')).toBe('must be at most 65535');
    expect(byPath.get('risk.max_orders_per_second')).toBe('must be a number');
    expect(byPath.get('risk.surprise')).toBe('unknown key');
    expect(byPath.get('metrics.port')).toBeDefined();
    expect(byPath.get('deadman.refresh_interval_ms')).toMatch(/quarter/);
    expect(byPath.get('logging.level')).toBeDefined();
    expect(byPath.get('unexpected')).toBe('unknown key');
    expect(byPath.get('strategies[0].params.halfSpreadTicks')).toBe('must be a number');
    expect(byPath.get('strategies[0].params.spread_ticks')).toBe(
      'unknown key; did you mean `halfSpreadTicks`?',
    );
    expect(byPath.get('strategies[1].id')).toMatch(/duplicate id "mm"/);
    expect(byPath.get('strategies[2].name')).toMatch(/no strategy named no-such-plugin/);
    expect(issues.length).toBeGreaterThanOrEqual(12);
  });

  it('requires at least one strategy and a sound strategy entry', async () => {
    const issues = await issuesOf(() => resolveBotConfig({ strategies: [] }));
    expect(issues).toEqual([{ path: 'strategies', message: 'list at least one strategy' }]);
    const second = await issuesOf(() =>
      resolveBotConfig({ strategies: [{ id: 'has space', name: 'market-maker', extra: 1 }] }),
    );
    expect(second.map((issue) => issue.path).sort()).toEqual([
      'strategies[0].extra',
      'strategies[0].id',
    ]);
  });

  it('checks an inline emulator config with paths under venue.emulator.config', async () => {
    const issues = await issuesOf(() =>
      resolveBotConfig({
        ...minimal,
        venue: { emulator: { config: { starting_balance: 'lots' } } },
      }),
    );
    expect(issues.some((issue) => issue.path.startsWith('venue.emulator.config'))).toBe(true);
  });

  it('does not check the emulator config when a key file is used', async () => {
    const loaded = await resolveBotConfig({
      ...minimal,
      venue: { key_file: 'some.key.json', emulator: { config: { starting_balance: 'lots' } } },
    });
    expect(loaded.emulatorConfig).toBeNull();
  });

  it('reports YAML errors with their line, and a missing file', async () => {
    const broken = file('broken.yaml', 'strategies:\n  - id: a\n    id: b\n  name: [\n');
    const issues = await issuesOf(() => loadBotConfig(broken));
    expect(issues[0]).toEqual({
      path: '(yaml line 3, column 5)',
      message: 'Map keys must be unique',
    });
    const missing = await issuesOf(() => loadBotConfig(join(directory, 'nope.yaml')));
    expect(missing).toEqual([{ path: '(file)', message: 'the file does not exist' }]);
    const list = await issuesOf(() => loadBotConfig(file('list.yaml', '- a\n- b\n')));
    expect(list).toEqual([{ path: '(root)', message: 'the config must be a mapping of keys' }]);
  });

  it('formats the error message as one line per problem', async () => {
    const path = file('two.yaml', 'strategies: []\nmetrics: { port: "x" }\n');
    await expect(loadBotConfig(path)).rejects.toThrow(
      new RegExp(
        `invalid config ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(2 problems\\):\\n  - strategies: .*\\n  - metrics.port: `,
      ),
    );
  });

  it('reads single sections for status and kill without loading strategies', () => {
    const path = file(
      'sections.yaml',
      'strategies: [{ id: a, name: not-loaded }]\nmetrics: { port: 1234 }\nrisk: { kill_switch: { file: k.kill } }\n',
    );
    expect(readMetricsSection(path).port).toBe(1234);
    expect(readRiskSection(path).kill_switch.file).toBe('k.kill');
    const bad = file('bad-risk.yaml', 'risk: { kill_switch: { poll_ms: 1 } }\n');
    expect(() => readRiskSection(bad)).toThrow(/risk\.kill_switch\.poll_ms/);
  });

  it('is strict at every level of the schema', () => {
    const result = BotConfig.safeParse({
      ...minimal,
      journal: { path: 'j.sqlite', mode: 'fast' },
      execution: { simulate: { place: true, twice: true } },
    });
    expect(result.success).toBe(false);
  });

  it('refuses a dead-man timeout that cannot survive the latency margin, and says why', async () => {
    // A 5 s timeout refreshed every 1.25 s cannot ride out 3 s round trips: the refresh may be
    // confirmed 4.25 s after the last one and trading stops 3 s before the deadline.
    const issues = await issuesOf(() =>
      resolveBotConfig({ ...minimal, deadman: { timeout_seconds: 5, latency_margin_ms: 3_000 } }),
    );
    expect(issues).toHaveLength(1);
    expect(issues[0]?.path).toBe('deadman.timeout_seconds');
    expect(issues[0]?.message).toMatch(/cannot survive latency_margin_ms 3000/);
    expect(issues[0]?.message).toMatch(/longer than 1250 \+ 2 x 3000 = 7250 ms/);
    // A request timeout shorter than the margin would abandon answers the margin allows.
    const second = await issuesOf(() =>
      resolveBotConfig({
        ...minimal,
        deadman: { timeout_seconds: 30, latency_margin_ms: 3_000, request_timeout_ms: 2_000 },
      }),
    );
    expect(second.map((issue) => issue.path)).toEqual(['deadman.request_timeout_ms']);
    expect(second[0]?.message).toMatch(/longer than latency_margin_ms/);
    // Too few refreshes in flight for the margin's round trips.
    const third = await issuesOf(() =>
      resolveBotConfig({
        ...minimal,
        deadman: {
          timeout_seconds: 60,
          refresh_interval_ms: 1_000,
          latency_margin_ms: 3_000,
          max_refreshes_in_flight: 2,
        },
      }),
    );
    expect(third.map((issue) => issue.path)).toEqual(['deadman.max_refreshes_in_flight']);
    // A disabled switch is not checked.
    await expect(
      resolveBotConfig({
        ...minimal,
        deadman: { enabled: false, timeout_seconds: 5, latency_margin_ms: 3_000 },
      }),
    ).resolves.toBeDefined();
  });

  it('accepts a dead-man timeout sound for its margin, and the switch takes the same settings', async () => {
    const loaded = await resolveBotConfig({
      ...minimal,
      deadman: { timeout_seconds: 10, latency_margin_ms: 3_000 },
    });
    const settings = deadmanSettings(loaded.config.deadman);
    expect(settings).toMatchObject({
      timeoutSeconds: 10,
      latencyMarginMs: 3_000,
      maxRefreshesInFlight: 3,
    });
    if (settings === false) return;
    expect(resolveDeadmanConfig(settings)).toMatchObject({
      refreshIntervalMs: 2_500,
      requestTimeoutMs: 7_000,
    });
    // The switch refuses what the file refuses.
    expect(() => resolveDeadmanConfig({ timeoutSeconds: 5, latencyMarginMs: 3_000 })).toThrow(
      /cannot survive/,
    );
  });

  it('has a shutdown section with a deadline, strict like the rest', async () => {
    const loaded = await resolveBotConfig(minimal);
    expect(loaded.config.shutdown).toEqual({
      deadline_ms: 30_000,
      request_timeout_ms: 10_000,
      max_attempts: 8,
      retry_base_delay_ms: 500,
      retry_max_delay_ms: 5_000,
    });
    expect(shutdownSettings(loaded.config.shutdown)).toMatchObject({ deadlineMs: 30_000 });
    const issues = await issuesOf(() =>
      resolveBotConfig({ ...minimal, shutdown: { deadline_ms: 0, linger: true } }),
    );
    expect(issues.map((issue) => issue.path).sort()).toEqual([
      'shutdown.deadline_ms',
      'shutdown.linger',
    ]);
  });
});
