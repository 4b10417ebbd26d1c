/**
 * A funding payment through the real server: the emulator on a loopback port with one-minute
 * funding, a position held past a funding time, the event read by the client's stream as a
 * known event (not as an account snapshot) and by GET /v1/events.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_EMULATOR_CONFIG_INPUT } from '../../src/emulator/index.ts';
import type { KnownPrivateEventReading } from '../../src/protocol/index.ts';
import { caughtUp, Environment, requestId } from './environment.ts';

let environment: Environment | undefined;

afterEach(async () => {
  await environment?.close();
  environment = undefined;
});

describe('funding through the server', () => {
  it('sends a funding_payment event on the account channel at the funding time', async () => {
    environment = await Environment.start({
      emulator: {
        config: {
          ...DEFAULT_EMULATOR_CONFIG_INPUT,
          simulation: { enabled: true, step_ms: 1000, funding_interval_ms: 60_000 },
        },
      },
    });
    const { rest } = environment;
    const stream = environment.stream();
    const events: KnownPrivateEventReading[] = [];
    const accountTypes: string[] = [];
    stream.events$.subscribe((event) => events.push(event));
    stream.account$.subscribe((event) => accountTypes.push(event.type));
    await stream.connect();
    const id = requestId('fund');
    await rest.placeOrder({
      request_id: id,
      client_order_id: `c-${id}`,
      market_id: 'BTC-PERP',
      side: 'buy',
      type: 'market',
      quantity: '0.01',
      leverage: 5,
      max_slippage_percent: '1',
    });
    // Past the next funding time (a multiple of one minute after the start).
    await environment.advance(61_000, 1_000);
    await caughtUp(environment, stream);
    const payments = events.filter((event) => event.type === 'funding_payment');
    expect(payments).toHaveLength(1);
    expect(payments[0]).toMatchObject({
      channel: 'account',
      data: { market_id: 'BTC-PERP', side: 'long', quantity: '0.01' },
    });
    expect(new Set(accountTypes)).toEqual(new Set(['account']));
    const logged = environment.log().filter((event) => event.type === 'funding_payment');
    expect(logged).toEqual(payments);
    const market = await rest.getMarket({ market_id: 'BTC-PERP' });
    expect(Date.parse(market.next_funding_time ?? '')).toBeGreaterThan(environment.clock.now());
  });
});
