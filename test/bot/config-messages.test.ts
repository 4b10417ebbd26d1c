import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { resolveBotConfig } from '../../src/cli/bot/config.ts';
import { didYouMean, explainConfigIssues } from '../../src/core/config-messages.ts';
import { isPaperbotError } from '../../src/core/errors.ts';
import type { ConfigIssue } from '../../src/runtime/config-file.ts';

const STRATEGY = { id: 'mm', name: 'market-maker', params: { markets: ['BTC-PERP'] } };

/** The problems of a bot config document, as `paperbot run` would list them. */
async function problemsOf(document: Record<string, unknown>): Promise<ConfigIssue[]> {
  try {
    await resolveBotConfig({ strategies: [STRATEGY], ...document });
  } catch (error) {
    if (isPaperbotError(error) && error.code === 'INVALID_CONFIG') {
      return error.details.issues as ConfigIssue[];
    }
    throw error;
  }
  throw new Error('the config was accepted');
}

function withParams(params: Record<string, unknown>) {
  return { strategies: [{ ...STRATEGY, params: { ...STRATEGY.params, ...params } }] };
}

describe('config messages (issue 14)', () => {
  it('reports a negative quoted decimal once, as a positive decimal string', async () => {
    expect(await problemsOf(withParams({ quantity: '-0.002' }))).toEqual([
      {
        path: 'strategies[0].params.quantity',
        message: "must be a positive decimal string such as '0.002'",
      },
    ]);
  });

  it('says to quote an unquoted decimal in strategy params as the risk section does', async () => {
    expect(
      await problemsOf({ ...withParams({ quantity: 0.002 }), risk: { max_order_notional: 500.5 } }),
    ).toEqual([
      {
        path: 'risk.max_order_notional',
        message: "must be a positive decimal string such as '500.5'; quote decimals in YAML",
      },
      {
        path: 'strategies[0].params.quantity',
        message: "must be a positive decimal string such as '0.002'; quote decimals in YAML",
      },
    ]);
  });

  it('blames only timeout_seconds for deadman.timeout_seconds: 0', async () => {
    expect(await problemsOf({ deadman: { timeout_seconds: 0 } })).toEqual([
      { path: 'deadman.timeout_seconds', message: 'must be at least 1' },
    ]);
  });

  it('writes bounds as plain sentences, not zod text', async () => {
    expect(
      await problemsOf({
        metrics: { port: 70000 },
        venue: { request_timeout_ms: 0, emulator: { host: '' } },
        market_data: { book_poll_ms: 50, markets: 'BTC-PERP' },
        journal: { durability: 'ful' },
        tracker: { coalesce_ms: 2.5 },
        reconciler: { cancel_unknown_orders: 'yes' },
        execution: { default_leverage: '3' },
      }),
    ).toEqual([
      { path: 'venue.emulator.host', message: 'must not be empty' },
      { path: 'venue.request_timeout_ms', message: 'must be greater than 0' },
      { path: 'execution.default_leverage', message: 'must be a number: write 3 without quotes' },
      { path: 'tracker.coalesce_ms', message: 'must be a whole number' },
      { path: 'reconciler.cancel_unknown_orders', message: 'must be true or false' },
      {
        path: 'journal.durability',
        message: "must be one of 'full', 'normal'; did you mean 'full'?",
      },
      { path: 'metrics.port', message: 'must be at most 65535' },
      { path: 'market_data.markets', message: 'must be a list' },
      { path: 'market_data.book_poll_ms', message: 'must be at least 100' },
    ]);
  });

  it('suggests the nearest allowed key for an unknown one', async () => {
    expect(
      await problemsOf({
        strategy_dir: 'strategies',
        risk: { max_order_notionl: '5' },
        ...withParams({ halfSpreadTick: 3, spread_ticks: 2, colour: 'red' }),
      }),
    ).toEqual([
      {
        path: 'risk.max_order_notionl',
        message: 'unknown key; did you mean `max_order_notional`?',
      },
      { path: 'strategy_dir', message: 'unknown key; did you mean `strategies_dir`?' },
      {
        path: 'strategies[0].params.halfSpreadTick',
        message: 'unknown key; did you mean `halfSpreadTicks`?',
      },
      {
        path: 'strategies[0].params.spread_ticks',
        message: 'unknown key; did you mean `halfSpreadTicks`?',
      },
      { path: 'strategies[0].params.colour', message: 'unknown key' },
    ]);
  });

  it('keeps messages the schema author wrote, and lists each problem in the rendered error', async () => {
    let text = '';
    try {
      await resolveBotConfig({ strategies: [], metrics: { port: -1 } }, 'bot.yaml');
    } catch (error) {
      text = (error as Error).message;
    }
    expect(text).toBe(
      [
        'invalid config bot.yaml (2 problems):',
        '  - strategies: list at least one strategy',
        '  - metrics.port: must be at least 0',
      ].join('\n'),
    );
  });
});

describe('explainConfigIssues', () => {
  it('tells a plain string param given a number to quote it', () => {
    const schema = z.strictObject({ label: z.string(), size: z.string() });
    const parsed = schema.safeParse({ label: 7, size: 0.002 }, { reportInput: true });
    expect(explainConfigIssues(parsed.error!.issues, schema)).toEqual([
      { path: ['label'], message: "must be a string such as '7'; quote it in YAML" },
      { path: ['size'], message: "must be a string such as '0.002'; quote decimals in YAML" },
    ]);
  });

  it('reports one problem per path: the follow-up checks on a refused value are dropped', () => {
    const schema = z.strictObject({
      quantity: z
        .string()
        .regex(/^\d+(\.\d+)?$/, 'must be a decimal string')
        .refine((text) => Number(text) > 0, 'must be greater than 0'),
    });
    const parsed = schema.safeParse({ quantity: '-1' }, { reportInput: true });
    expect(explainConfigIssues(parsed.error!.issues, schema)).toEqual([
      { path: ['quantity'], message: 'must be a decimal string' },
    ]);
  });

  it('drops a cross-field check of an object when one of its fields failed, not otherwise', () => {
    const schema = z
      .strictObject({ low: z.int().min(0).default(5), high: z.int().min(1).default(10) })
      .superRefine((value, context) => {
        if (value.low >= value.high) {
          context.addIssue({ code: 'custom', path: ['low'], message: 'must be below high' });
        }
      });
    const failed = schema.safeParse({ high: 0 }, { reportInput: true });
    expect(explainConfigIssues(failed.error!.issues, schema)).toEqual([
      { path: ['high'], message: 'must be at least 1' },
    ]);
    const crossed = schema.safeParse({ low: 20 }, { reportInput: true });
    expect(explainConfigIssues(crossed.error!.issues, schema)).toEqual([
      { path: ['low'], message: 'must be below high' },
    ]);
  });

  it('names the types a union takes', () => {
    const schema = z.strictObject({ seed: z.union([z.string().min(1), z.int()]) });
    const wrong = schema.safeParse({ seed: true }, { reportInput: true });
    expect(explainConfigIssues(wrong.error!.issues, schema)).toEqual([
      { path: ['seed'], message: 'must be a string or a number' },
    ]);
    const empty = schema.safeParse({ seed: '' }, { reportInput: true });
    expect(explainConfigIssues(empty.error!.issues, schema)).toEqual([
      { path: ['seed'], message: 'must not be empty' },
    ]);
  });

  it('suggests only names that are close', () => {
    expect(didYouMean('strategy_dir', ['strategies_dir', 'strategies'])).toBe('strategies_dir');
    expect(didYouMean('strategiesDir', ['strategies_dir'])).toBe('strategies_dir');
    expect(didYouMean('colour', ['markets', 'quantity'])).toBeNull();
  });
});
