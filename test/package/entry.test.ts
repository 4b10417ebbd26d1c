/**
 * The package entry point: what an SDK user imports. Imported by the package's own name, so the
 * `exports` map in package.json is exercised too.
 */
import { describe, expect, it } from 'vitest';
import * as paperbot from 'paperbot';

describe('the package entry point', () => {
  it('exports the client, the emulator, the strategy API and the grouped layers', () => {
    for (const name of [
      'RestClient',
      'StreamClient',
      'VenueError',
      'startEmulator',
      'defineStrategy',
      'limitOrder',
      'targetPosition',
      'Credential',
      'loadKeyFile',
      'VirtualClock',
      'PaperbotError',
    ] as const) {
      expect(paperbot[name], name).toBeTypeOf('function');
    }
    expect(paperbot.protocol.Order.safeParse({}).success).toBe(false);
    expect(paperbot.testing.createStrategyHarness).toBeTypeOf('function');
    expect(paperbot.risk.parseRiskConfig).toBeTypeOf('function');
  });

  it('is enough to start an emulator and read a market with the client', async () => {
    const emulator = await paperbot.startEmulator({
      clock: new paperbot.VirtualClock(Date.UTC(2026, 0, 5)),
    });
    const client = new paperbot.RestClient({ baseUrl: emulator.baseUrl, clock: emulator.clock });
    try {
      const markets = await client.listMarkets();
      expect(markets.map((market) => market.market_id)).toContain('BTC-PERP');
      const book = await client.getBook({ market_id: 'BTC-PERP' }, { depth: 5 });
      expect(book.bids.length).toBeGreaterThan(0);
      expect(paperbot.protocol.Book.safeParse(book).success).toBe(true);
    } finally {
      await client.close();
      await emulator.close();
    }
  });
});
