/**
 * The zod-free check of plain order bodies (src/emulator/service/plain-order.ts) against the
 * schema it stands in for: whatever it accepts, `OrderRequest` accepts with the same output (the
 * same members in the same order), already normalized, and not refused by the Practice rules.
 * Bodies are drawn from valid and invalid values of every field, fields left out, unknown
 * fields added and member order shuffled. The common bodies must take the plain path, or it
 * saves nothing.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { finishBody, parseBody } from '../../../src/emulator/service/check.ts';
import { plainOrderRequest } from '../../../src/emulator/service/plain-order.ts';
import {
  endpoints,
  normalizeOrderRequest,
  OrderRequest,
  practiceUnsupportedField,
  type ServiceIssue,
} from '../../../src/protocol/index.ts';

const amounts = [
  '1',
  '0.001',
  '0.010',
  '30000',
  '30000.5',
  '1000000000',
  '1000000000.5',
  '999999999.99',
  '2',
  '2.5',
  '1.99',
  '0',
  '0.0',
  '-1',
  '+1',
  '.5',
  '5.',
  '01',
  '1e3',
  '12345678901234567890',
  '',
  ' 1',
  1,
  0.5,
  Number.MAX_VALUE,
  null,
  true,
  {},
];

const candidates: Readonly<Record<string, readonly unknown[]>> = {
  request_id: ['req-00000001', 'short', 'a'.repeat(80), 'a'.repeat(81), 'bad id!!', 7, null],
  client_order_id: ['c', 'c-1:2_3', '', 'x'.repeat(100), 'x'.repeat(101), 'é', 3],
  market_id: ['BTC-PERP', 'ETH', 'ab', 'm'.repeat(40), 'm'.repeat(41), 'ÉTÉ-PERP', 5, null],
  side: ['buy', 'sell', 'BUY', 'hold', null],
  type: ['limit', 'market', 'stop_limit', 'stop_market', 'LIMIT', null],
  quantity: amounts,
  leverage: [1, 5, 200, 0, 201, 2.5, '5', -1, Number.NaN, null],
  price: amounts,
  trigger_price: ['100', null, 'x'],
  time_in_force: ['GTC', 'IOC', 'FOK', 'gtc', null],
  post_only: [true, false, 'true', null],
  reduce_only: [true, false, 0, null],
  position_id: ['pos-00000001', 'short', 'p'.repeat(200), 'p'.repeat(201), null, 9],
  margin_mode: ['cross', 'isolated', 'CROSS', null],
  max_slippage_percent: amounts,
  expires_at: ['2026-01-01T00:00:00Z', null, 'tomorrow'],
  unknown_field: [1, 'x'],
  __proto__: [{}],
};

/** Valid orders of both types, the optional fields in or out. */
const validBodyArbitrary = fc
  .record(
    {
      type: fc.constantFrom('limit', 'market'),
      time_in_force: fc.constantFrom('GTC', 'IOC'),
      post_only: fc.boolean(),
      reduce_only: fc.boolean(),
      position_id: fc.constantFrom('pos-00000001', null),
      margin_mode: fc.constantFrom('cross', 'isolated'),
      nullPrice: fc.boolean(),
    },
    { requiredKeys: ['type', 'nullPrice'] },
  )
  .map(({ type, nullPrice, ...optional }) => {
    const body: Record<string, unknown> = {
      request_id: 'req-00000001',
      client_order_id: 'c-1',
      market_id: 'BTC-PERP',
      side: 'buy',
      type,
      quantity: '0.5',
      leverage: 5,
      ...optional,
    };
    if (type === 'limit') {
      body.price = '30000';
      if (nullPrice) body.max_slippage_percent = null;
      if (body.post_only === true) body.time_in_force = 'GTC';
    } else {
      body.max_slippage_percent = '1';
      if (nullPrice) body.price = null;
      delete body.post_only;
    }
    return body;
  });

/** A valid body with up to three fields replaced, removed or added, in a shuffled order. */
const bodyArbitrary = fc
  .tuple(
    validBodyArbitrary,
    fc.array(fc.tuple(fc.constantFrom(...Object.keys(candidates)), fc.nat(), fc.boolean()), {
      maxLength: 3,
    }),
    fc.integer(),
  )
  .map(([valid, changes, seed]) => {
    const fields: Record<string, unknown> = { ...valid };
    for (const [field, pick, remove] of changes) {
      const values = candidates[field]!;
      if (remove) delete fields[field];
      else fields[field] = values[pick % values.length];
    }
    const entries = Object.entries(fields);
    // A shuffle by the seed: the member order of the input must not matter.
    const order = entries.map((entry, index) => ({ entry, rank: (index * 7919 + seed) % 101 }));
    order.sort((left, right) => left.rank - right.rank);
    // Through JSON, as the server reads it: `__proto__` arrives as an own member.
    const members = order.map(
      ({ entry: [key, value] }) => `${JSON.stringify(key)}:${JSON.stringify(value)}`,
    );
    return JSON.parse(`{${members.join(',')}}`) as unknown;
  });

describe('plainOrderRequest', () => {
  it('accepts only what OrderRequest accepts, with its output, already normalized', () => {
    let plain = 0;
    fc.assert(
      fc.property(bodyArbitrary, (body) => {
        const fast = plainOrderRequest(body);
        if (fast === null) return;
        plain += 1;
        const parsed = OrderRequest.safeParse(body);
        expect(parsed.success).toBe(true);
        if (!parsed.success) return;
        expect(JSON.stringify(fast)).toBe(JSON.stringify(parsed.data));
        expect(fast).toStrictEqual(parsed.data);
        expect(JSON.stringify(normalizeOrderRequest(parsed.data))).toBe(JSON.stringify(fast));
        expect(practiceUnsupportedField(parsed.data)).toBeNull();
      }),
      { numRuns: 20_000, seed: 20261124 },
    );
    // The draw must reach the plain path often, or the property says little.
    expect(plain).toBeGreaterThan(3_000);
  });

  it('takes the bodies a bot sends', () => {
    const limit = {
      request_id: 'req-00000001',
      client_order_id: 'c-req-00000001',
      market_id: 'BTC-PERP',
      side: 'buy',
      type: 'limit',
      quantity: '0.001',
      price: '30000',
      leverage: 5,
      post_only: true,
      time_in_force: 'GTC',
    };
    const market = {
      request_id: 'req-00000002',
      client_order_id: 'c-req-00000002',
      market_id: 'ETH-PERP',
      side: 'sell',
      type: 'market',
      quantity: '1.5',
      leverage: 10,
      max_slippage_percent: '0.5',
      reduce_only: true,
      margin_mode: 'cross',
    };
    for (const body of [limit, market]) {
      const fast = plainOrderRequest(body);
      expect(fast).not.toBeNull();
      expect(fast).toStrictEqual(OrderRequest.parse(body));
    }
  });

  it('leaves non-canonical amounts, numbers and refused fields to the schema', () => {
    const base = {
      request_id: 'req-00000003',
      client_order_id: 'c-3',
      market_id: 'BTC-PERP',
      side: 'buy',
      type: 'limit',
      quantity: '0.001',
      price: '30000',
      leverage: 5,
    };
    for (const change of [
      { quantity: '0.0010' },
      { quantity: 0.001 },
      { price: '+30000' },
      { time_in_force: 'FOK' },
      { expires_at: null },
      { trigger_price: null },
      { type: 'stop_limit' },
    ]) {
      expect(plainOrderRequest({ ...base, ...change })).toBeNull();
    }
  });

  it('gives the server the same checked body as before', () => {
    const bytes = Buffer.from(
      JSON.stringify({
        side: 'buy',
        request_id: 'req-00000004',
        client_order_id: 'c-4',
        market_id: 'BTC-PERP',
        type: 'limit',
        quantity: '0.25',
        price: '30000.5',
        leverage: 3,
      }),
    );
    const issues: ServiceIssue[] = [];
    const body = finishBody('placeOrder', parseBody(endpoints.placeOrder, bytes, issues));
    expect(issues).toEqual([]);
    const viaSchema = normalizeOrderRequest(OrderRequest.parse(JSON.parse(bytes.toString())));
    expect(JSON.stringify(body)).toBe(JSON.stringify(viaSchema));
  });
});
