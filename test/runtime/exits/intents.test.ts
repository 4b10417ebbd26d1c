/**
 * The exit intents as a strategy builds them: the builders write wire text, and the intent
 * schema takes well-formed exits and brackets and refuses malformed ones with a clear path.
 */
import { describe, expect, it } from 'vitest';
import { epochFreeKey } from '../../../src/replay/backtest/divergence-run.ts';
import {
  bracket,
  checkIntent,
  decimal,
  limitOrder,
  marketOrder,
  stopLimit,
  stopMarket,
  takeProfit,
  trailingStop,
} from '../../../src/runtime/strategy/index.ts';

function problems(value: unknown): readonly string[] {
  const result = checkIntent(value);
  return result.ok ? [] : result.problems;
}

describe('exit builders', () => {
  it('build stop, take-profit and trailing exits the schema takes', () => {
    const stop = stopMarket({
      marketId: 'BTC-USD',
      side: 'sell',
      quantity: decimal('0.50'),
      triggerPrice: '95.0',
    });
    expect(stop).toEqual({
      kind: 'exit',
      marketId: 'BTC-USD',
      side: 'sell',
      quantity: '0.5',
      trigger: { kind: 'stop', price: '95' },
    });
    const limit = stopLimit({
      marketId: 'BTC-USD',
      side: 'buy',
      quantity: '1',
      triggerPrice: '105',
      limitPrice: '106',
      triggerSource: 'bid_ask',
    });
    expect(limit.limitPrice).toBe('106');
    expect(limit.triggerSource).toBe('bid_ask');
    const profit = takeProfit({
      marketId: 'BTC-USD',
      side: 'sell',
      quantity: '1',
      triggerPrice: '120',
    });
    expect(profit.trigger).toEqual({ kind: 'take_profit', price: '120' });
    const trailing = trailingStop({
      marketId: 'BTC-USD',
      side: 'sell',
      quantity: '1',
      offsetPercent: '2.5',
      activationPrice: '110',
      triggerSource: 'last',
    });
    expect(trailing.trigger).toEqual({
      kind: 'trailing',
      offsetPercent: '2.5',
      activationPrice: '110',
    });
    for (const intent of [stop, limit, profit, trailing]) {
      const checked = checkIntent(intent);
      expect(checked.ok).toBe(true);
      if (checked.ok) expect(checked.intent).toEqual(intent);
    }
  });

  it('build a bracket around an entry', () => {
    const intent = bracket({
      entry: limitOrder({ marketId: 'BTC-USD', side: 'buy', quantity: '1', price: '100' }),
      stopLoss: { triggerPrice: '95' },
      takeProfit: { triggerPrice: '110', limitPrice: '110' },
    });
    expect(intent).toEqual({
      kind: 'bracket',
      entry: {
        kind: 'place',
        marketId: 'BTC-USD',
        side: 'buy',
        type: 'limit',
        quantity: '1',
        price: '100',
      },
      stopLoss: { triggerPrice: '95' },
      takeProfit: { triggerPrice: '110', limitPrice: '110' },
    });
    expect(checkIntent(intent).ok).toBe(true);
  });
});

describe('exit schema', () => {
  const base = { kind: 'exit', marketId: 'BTC-USD', side: 'sell', quantity: '1' };

  it('refuses a trailing stop with both or neither offsets', () => {
    expect(problems({ ...base, trigger: { kind: 'trailing' } })).toEqual([
      'trigger: a trailing stop takes exactly one of offset and offsetPercent',
    ]);
    expect(
      problems({ ...base, trigger: { kind: 'trailing', offset: '1', offsetPercent: '1' } }),
    ).toHaveLength(1);
    expect(problems({ ...base, trigger: { kind: 'trailing', offsetPercent: '100' } })).toEqual([
      'trigger.offsetPercent: must be below 100',
    ]);
  });

  it('refuses slippage on a limit exit, unknown sources and bad prices', () => {
    expect(
      problems({
        ...base,
        trigger: { kind: 'stop', price: '1' },
        limitPrice: '1',
        maxSlippagePercent: '1',
      }),
    ).toEqual(['maxSlippagePercent: slippage bounds market exits only']);
    expect(
      problems({ ...base, trigger: { kind: 'stop', price: '1' }, triggerSource: 'index' }),
    ).toHaveLength(1);
    expect(problems({ ...base, trigger: { kind: 'stop', price: '-1' } })[0]).toMatch(
      /^trigger.price: /,
    );
  });

  it('refuses a bracket without legs, with a reduce-only entry, or with legs the wrong way round', () => {
    const entry = marketOrder({ marketId: 'BTC-USD', side: 'buy', quantity: '1' });
    expect(problems({ kind: 'bracket', entry })).toEqual([
      'stopLoss: a bracket needs a stop-loss, a take-profit or both',
    ]);
    expect(
      problems({
        kind: 'bracket',
        entry: { ...entry, reduceOnly: true },
        stopLoss: { triggerPrice: '1' },
      }),
    ).toEqual(['entry.reduceOnly: a bracket entry opens a position; it cannot be reduce-only']);
    expect(
      problems({
        kind: 'bracket',
        entry,
        stopLoss: { triggerPrice: '110' },
        takeProfit: { triggerPrice: '100' },
      }),
    ).toEqual(["stopLoss.triggerPrice: a long's stop-loss must be below its take-profit"]);
  });
});

describe('divergence keys of released exits', () => {
  it('drop the epoch from release and bracket-leg ids, as from intent ids', () => {
    expect(epochFreeKey('mm:live01:7')).toBe('mm:7');
    expect(epochFreeKey('mm:backtest:7:x')).toBe('mm:7:x');
    expect(epochFreeKey('mm:live01:7:x')).toBe('mm:7:x');
    expect(epochFreeKey('mm:live01:9:sl:x')).toBe('mm:9:sl:x');
    expect(epochFreeKey('plain')).toBe('plain');
    expect(epochFreeKey(null)).toBeNull();
  });
});
