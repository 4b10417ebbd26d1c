/**
 * Self-trade prevention through the real server: a market maker whose new bid crosses its own
 * ask, over the client on a loopback port. Default policy: the incoming order is cancelled.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_EMULATOR_CONFIG_INPUT } from '../../src/emulator/index.ts';
import { Environment, requestId } from './environment.ts';

let environment: Environment | undefined;

afterEach(async () => {
  await environment?.close();
  environment = undefined;
});

function quote(side: 'buy' | 'sell', price: string) {
  const id = requestId('mm');
  return {
    request_id: id,
    client_order_id: `c-${id}`,
    market_id: 'BTC-PERP',
    side,
    type: 'limit' as const,
    quantity: '0.01',
    price,
    leverage: 5,
  };
}

async function crossOwnQuotes(policy: 'cancel_incoming' | 'cancel_resting') {
  environment = await Environment.start({
    emulator: {
      config: {
        ...DEFAULT_EMULATOR_CONFIG_INPUT,
        simulation: { enabled: false },
        self_trade_prevention: policy,
      },
    },
  });
  const { rest } = environment;
  const ask = await rest.placeOrder(quote('sell', '64001'));
  await rest.placeOrder(quote('buy', '63999'));
  await environment.advance(100, 50);
  // The maker moves its bid up through its own ask.
  const crossing = await rest.placeOrder(quote('buy', '64001.5'));
  await environment.advance(100, 50);
  return {
    rest,
    ask: await rest.getOrder({ order_id: ask.order_id }),
    crossing: await rest.getOrder({ order_id: crossing.order_id }),
    fills: (await rest.listFills({ market_id: 'BTC-PERP' })).data,
    log: environment.log(),
  };
}

describe('self-trade prevention through the server', () => {
  it('cancels the incoming order by default: no fill, the ask stays', async () => {
    const { ask, crossing, fills, log } = await crossOwnQuotes('cancel_incoming');
    expect(fills).toEqual([]);
    expect(ask.status).toBe('OPEN');
    expect(crossing).toMatchObject({
      status: 'CANCELLED',
      filled_quantity: '0',
      error: { code: 'SELF_TRADE_PREVENTED' },
    });
    expect(
      log.some(
        (event) =>
          event.type === 'authoritative_status' &&
          event.data.entity_id === crossing.order_id &&
          event.data.from_state === 'SUBMITTED' &&
          event.data.to_state === 'CANCELLED',
      ),
    ).toBe(true);
  });

  it('cancel_resting cancels the ask; the new bid rests', async () => {
    const { ask, crossing, fills } = await crossOwnQuotes('cancel_resting');
    expect(fills).toEqual([]);
    expect(ask).toMatchObject({ status: 'CANCELLED', error: { code: 'SELF_TRADE_PREVENTED' } });
    expect(crossing.status).toBe('OPEN');
  });
});
