import { describe, expect, it } from 'vitest';
import {
  AmendOrderRequest,
  BatchOrderRequest,
  CancelAllAfterRequest,
  CancelAllRequest,
  CancelOrderRequest,
  ClosePositionRequest,
  normalizeAmendOrderRequest,
  normalizeBatchOrderRequest,
  normalizeClosePositionRequest,
  normalizeOrderRequest,
  OrderRequest,
  practiceUnsupportedError,
  practiceUnsupportedField,
} from '../../src/protocol/index.ts';
import { limitOrder, marketOrder, repeat, shapesOf } from './fixtures.ts';

function withField(
  base: Record<string, unknown>,
  field: string,
  value: unknown,
): Record<string, unknown> {
  return { ...base, [field]: value };
}

function without(base: Record<string, unknown>, field: string): Record<string, unknown> {
  const copy = { ...base };
  delete copy[field];
  return copy;
}

describe('OrderRequest', () => {
  it('accepts a market and a limit order and applies the stated defaults', () => {
    expect(OrderRequest.parse(marketOrder())).toEqual({
      ...marketOrder(),
      time_in_force: 'GTC',
      post_only: false,
      reduce_only: false,
      margin_mode: 'isolated',
    });
    const limit = OrderRequest.parse(limitOrder());
    expect(limit.time_in_force).toBe('GTC');
    expect(limit.quantity).toBe(1);
    expect('expires_at' in limit).toBe(false);
  });

  it('reports every missing required field at once, in table order', () => {
    expect(shapesOf(OrderRequest, {})).toEqual([
      ['missing', 'body.request_id'],
      ['missing', 'body.client_order_id'],
      ['missing', 'body.market_id'],
      ['missing', 'body.side'],
      ['missing', 'body.type'],
      ['missing', 'body.quantity'],
      ['missing', 'body.leverage'],
    ]);
  });

  it('refuses a body that is not an object', () => {
    expect(shapesOf(OrderRequest, [])).toEqual([['model_type', 'body']]);
    expect(shapesOf(OrderRequest, 'order')).toEqual([['model_type', 'body']]);
  });

  it('refuses unknown fields, one issue per field', () => {
    expect(shapesOf(OrderRequest, { ...marketOrder(), note: 'x', stop_loss: '1' })).toEqual([
      ['extra_forbidden', 'body.note'],
      ['extra_forbidden', 'body.stop_loss'],
    ]);
  });

  it('request_id and client_order_id limits', () => {
    const base = marketOrder();
    expect(shapesOf(OrderRequest, withField(base, 'request_id', repeat(7)))).toEqual([
      ['string_too_short', 'body.request_id'],
    ]);
    expect(shapesOf(OrderRequest, withField(base, 'request_id', repeat(8)))).toEqual([]);
    expect(shapesOf(OrderRequest, withField(base, 'request_id', repeat(80)))).toEqual([]);
    expect(shapesOf(OrderRequest, withField(base, 'request_id', repeat(81)))).toEqual([
      ['string_too_long', 'body.request_id'],
    ]);
    expect(shapesOf(OrderRequest, withField(base, 'request_id', 'abc def gh'))).toEqual([
      ['string_pattern_mismatch', 'body.request_id'],
    ]);
    expect(shapesOf(OrderRequest, withField(base, 'client_order_id', ''))).toEqual([
      ['string_too_short', 'body.client_order_id'],
    ]);
    expect(shapesOf(OrderRequest, withField(base, 'client_order_id', 'x'))).toEqual([]);
    expect(shapesOf(OrderRequest, withField(base, 'client_order_id', repeat(100)))).toEqual([]);
    expect(shapesOf(OrderRequest, withField(base, 'client_order_id', repeat(101)))).toEqual([
      ['string_too_long', 'body.client_order_id'],
    ]);
    expect(shapesOf(OrderRequest, withField(base, 'client_order_id', 'a/b'))).toEqual([
      ['string_pattern_mismatch', 'body.client_order_id'],
    ]);
  });

  it('market_id and position_id limits', () => {
    const base = marketOrder();
    expect(shapesOf(OrderRequest, withField(base, 'market_id', 'BT'))).toEqual([
      ['string_too_short', 'body.market_id'],
    ]);
    expect(shapesOf(OrderRequest, withField(base, 'market_id', 'BTC'))).toEqual([]);
    expect(shapesOf(OrderRequest, withField(base, 'market_id', repeat(40)))).toEqual([]);
    expect(shapesOf(OrderRequest, withField(base, 'market_id', repeat(41)))).toEqual([
      ['string_too_long', 'body.market_id'],
    ]);
    expect(shapesOf(OrderRequest, withField(base, 'position_id', repeat(7)))).toEqual([
      ['string_too_short', 'body.position_id'],
    ]);
    expect(shapesOf(OrderRequest, withField(base, 'position_id', repeat(8)))).toEqual([]);
    expect(shapesOf(OrderRequest, withField(base, 'position_id', repeat(200)))).toEqual([]);
    expect(shapesOf(OrderRequest, withField(base, 'position_id', repeat(201)))).toEqual([
      ['string_too_long', 'body.position_id'],
    ]);
    expect(shapesOf(OrderRequest, withField(base, 'position_id', null))).toEqual([]);
  });

  it('quantity limits: 0, tiny positive, 1000000000, just over', () => {
    const base = marketOrder();
    expect(shapesOf(OrderRequest, withField(base, 'quantity', 0))).toEqual([
      ['greater_than', 'body.quantity'],
    ]);
    expect(shapesOf(OrderRequest, withField(base, 'quantity', '0.00000001'))).toEqual([]);
    expect(shapesOf(OrderRequest, withField(base, 'quantity', 1e-8))).toEqual([]);
    expect(shapesOf(OrderRequest, withField(base, 'quantity', 1_000_000_000))).toEqual([]);
    expect(shapesOf(OrderRequest, withField(base, 'quantity', '1000000000'))).toEqual([]);
    expect(shapesOf(OrderRequest, withField(base, 'quantity', 1_000_000_001))).toEqual([
      ['less_than_equal', 'body.quantity'],
    ]);
    expect(shapesOf(OrderRequest, withField(base, 'quantity', '1000000000.00000001'))).toEqual([
      ['less_than_equal', 'body.quantity'],
    ]);
    expect(shapesOf(OrderRequest, withField(base, 'quantity', null))).toEqual([
      ['decimal_type', 'body.quantity'],
    ]);
  });

  it('leverage limits: 0, 1, 200, 201 and non-integers', () => {
    const base = marketOrder();
    expect(shapesOf(OrderRequest, withField(base, 'leverage', 0))).toEqual([
      ['greater_than_equal', 'body.leverage'],
    ]);
    expect(shapesOf(OrderRequest, withField(base, 'leverage', 1))).toEqual([]);
    expect(shapesOf(OrderRequest, withField(base, 'leverage', 200))).toEqual([]);
    expect(shapesOf(OrderRequest, withField(base, 'leverage', 201))).toEqual([
      ['less_than_equal', 'body.leverage'],
    ]);
    expect(shapesOf(OrderRequest, withField(base, 'leverage', 1.5))).toEqual([
      ['int_from_float', 'body.leverage'],
    ]);
    expect(shapesOf(OrderRequest, withField(base, 'leverage', '5'))).toEqual([
      ['float_type', 'body.leverage'],
    ]);
  });

  it('max_slippage_percent limits: 0, 2, 2.0001', () => {
    const base = marketOrder();
    expect(shapesOf(OrderRequest, withField(base, 'max_slippage_percent', 0))).toEqual([
      ['greater_than', 'body.max_slippage_percent'],
    ]);
    expect(shapesOf(OrderRequest, withField(base, 'max_slippage_percent', 2))).toEqual([]);
    expect(shapesOf(OrderRequest, withField(base, 'max_slippage_percent', '2'))).toEqual([]);
    expect(shapesOf(OrderRequest, withField(base, 'max_slippage_percent', 2.0001))).toEqual([
      ['less_than_equal', 'body.max_slippage_percent'],
    ]);
    expect(shapesOf(OrderRequest, withField(base, 'max_slippage_percent', '2.0001'))).toEqual([
      ['less_than_equal', 'body.max_slippage_percent'],
    ]);
  });

  it('enumerations are exact', () => {
    const base = marketOrder();
    expect(shapesOf(OrderRequest, withField(base, 'side', 'BUY'))).toEqual([['enum', 'body.side']]);
    expect(shapesOf(OrderRequest, withField(base, 'type', 'stop'))).toEqual([
      ['enum', 'body.type'],
    ]);
    expect(shapesOf(OrderRequest, withField(base, 'time_in_force', 'gtc'))).toEqual([
      ['enum', 'body.time_in_force'],
    ]);
    expect(shapesOf(OrderRequest, withField(base, 'margin_mode', 'portfolio'))).toEqual([
      ['enum', 'body.margin_mode'],
    ]);
    expect(shapesOf(OrderRequest, withField(base, 'post_only', 'false'))).toEqual([
      ['bool_type', 'body.post_only'],
    ]);
  });

  it('decimal-string rule 1 applies to every number-or-decimal field', () => {
    for (const field of ['quantity', 'max_slippage_percent', 'trigger_price']) {
      for (const bad of ['-', '.', '+.', '1.2.3', '1e5']) {
        expect(shapesOf(OrderRequest, withField(marketOrder(), field, bad))).toEqual([
          ['decimal_parsing', `body.${field}`],
        ]);
      }
    }
    expect(shapesOf(OrderRequest, withField(limitOrder(), 'price', '1.2.3'))).toEqual([
      ['decimal_parsing', 'body.price'],
    ]);
  });

  it('expires_at must be an RFC 3339 UTC date-time or null', () => {
    expect(shapesOf(OrderRequest, withField(marketOrder(), 'expires_at', null))).toEqual([]);
    expect(
      shapesOf(OrderRequest, withField(marketOrder(), 'expires_at', '2025-03-01T12:00:00Z')),
    ).toEqual([]);
    expect(
      shapesOf(OrderRequest, withField(marketOrder(), 'expires_at', '2025-03-01T12:00:00+01:00')),
    ).toEqual([['datetime_parsing', 'body.expires_at']]);
  });

  describe('cross-field rules', () => {
    it('price is required for limit and stop_limit orders', () => {
      expect(shapesOf(OrderRequest, without(limitOrder(), 'price'))).toEqual([
        ['missing', 'body.price'],
      ]);
      expect(shapesOf(OrderRequest, withField(limitOrder(), 'price', null))).toEqual([
        ['missing', 'body.price'],
      ]);
      expect(shapesOf(OrderRequest, withField(limitOrder(), 'type', 'stop_limit'))).toEqual([]);
      expect(
        shapesOf(OrderRequest, { ...without(limitOrder(), 'price'), type: 'stop_limit' }),
      ).toEqual([['missing', 'body.price']]);
    });

    it('price must be absent or null for market orders', () => {
      expect(shapesOf(OrderRequest, withField(marketOrder(), 'price', '65000'))).toEqual([
        ['value_error', 'body.price'],
      ]);
      expect(shapesOf(OrderRequest, withField(marketOrder(), 'price', null))).toEqual([]);
    });

    it('max_slippage_percent is required for market orders and refused on limit orders', () => {
      expect(shapesOf(OrderRequest, without(marketOrder(), 'max_slippage_percent'))).toEqual([
        ['missing', 'body.max_slippage_percent'],
      ]);
      expect(
        shapesOf(OrderRequest, withField(marketOrder(), 'max_slippage_percent', null)),
      ).toEqual([['missing', 'body.max_slippage_percent']]);
      expect(shapesOf(OrderRequest, withField(limitOrder(), 'max_slippage_percent', '1'))).toEqual([
        ['value_error', 'body.max_slippage_percent'],
      ]);
      expect(shapesOf(OrderRequest, withField(limitOrder(), 'max_slippage_percent', null))).toEqual(
        [],
      );
      const stopMarket = { ...without(marketOrder(), 'max_slippage_percent'), type: 'stop_market' };
      expect(shapesOf(OrderRequest, stopMarket)).toEqual([]);
    });

    it('post_only is valid only for GTC limit orders', () => {
      expect(shapesOf(OrderRequest, withField(limitOrder(), 'post_only', true))).toEqual([]);
      expect(
        shapesOf(OrderRequest, { ...limitOrder(), post_only: true, time_in_force: 'IOC' }),
      ).toEqual([['value_error', 'body.post_only']]);
      expect(shapesOf(OrderRequest, withField(marketOrder(), 'post_only', true))).toEqual([
        ['value_error', 'body.post_only'],
      ]);
      expect(shapesOf(OrderRequest, withField(marketOrder(), 'post_only', false))).toEqual([]);
    });

    it('run once the fields are valid, alongside unknown-field issues', () => {
      expect(shapesOf(OrderRequest, { ...without(limitOrder(), 'price'), quantity: 0 })).toEqual([
        ['greater_than', 'body.quantity'],
      ]);
      expect(shapesOf(OrderRequest, { ...without(limitOrder(), 'price'), extra: 1 })).toEqual([
        ['extra_forbidden', 'body.extra'],
        ['missing', 'body.price'],
      ]);
    });
  });

  it('Practice-only features are not schema errors', () => {
    const stop = { ...limitOrder(), type: 'stop_limit', trigger_price: '64000' };
    expect(shapesOf(OrderRequest, stop)).toEqual([]);
    expect(shapesOf(OrderRequest, withField(limitOrder(), 'time_in_force', 'FOK'))).toEqual([]);
    expect(shapesOf(OrderRequest, withField(limitOrder(), 'expires_at', null))).toEqual([]);
  });
});

describe('practiceUnsupportedField (contract section 6)', () => {
  it('is null for what Practice supports', () => {
    expect(practiceUnsupportedField(marketOrder())).toBeNull();
    expect(practiceUnsupportedField({ ...limitOrder(), time_in_force: 'IOC' })).toBeNull();
    expect(practiceUnsupportedField(OrderRequest.parse(limitOrder()))).toBeNull();
    expect(practiceUnsupportedField({ request_id: 'req-00000001', quantity: '1' })).toBeNull();
  });

  it('names stop types, FOK, and any presence of trigger_price or expires_at, null too', () => {
    expect(practiceUnsupportedField({ ...marketOrder(), type: 'stop_market' })).toBe('type');
    expect(practiceUnsupportedField({ ...limitOrder(), type: 'stop_limit' })).toBe('type');
    expect(practiceUnsupportedField({ ...limitOrder(), time_in_force: 'FOK' })).toBe(
      'time_in_force',
    );
    expect(practiceUnsupportedField({ ...limitOrder(), trigger_price: '1' })).toBe('trigger_price');
    expect(practiceUnsupportedField({ ...limitOrder(), trigger_price: null })).toBe(
      'trigger_price',
    );
    expect(practiceUnsupportedField({ ...limitOrder(), expires_at: null })).toBe('expires_at');
    expect(practiceUnsupportedField({ ...limitOrder(), expires_at: 'garbage' })).toBe('expires_at');
    expect(practiceUnsupportedField({ request_id: 'req-00000001', expires_at: null })).toBe(
      'expires_at',
    );
  });

  it('counts a property holding undefined as absent, since it never reaches the wire', () => {
    expect(practiceUnsupportedField({ ...limitOrder(), expires_at: undefined })).toBeNull();
    expect(practiceUnsupportedField({ ...limitOrder(), trigger_price: undefined })).toBeNull();
  });

  it('reports the first field in the order of the interface table', () => {
    const everything = {
      ...limitOrder(),
      type: 'stop_limit',
      trigger_price: '1',
      time_in_force: 'FOK',
      expires_at: null,
    };
    expect(practiceUnsupportedField(everything)).toBe('type');
    expect(practiceUnsupportedField({ ...everything, type: 'limit' })).toBe('trigger_price');
    expect(
      practiceUnsupportedField({ ...limitOrder(), time_in_force: 'FOK', expires_at: null }),
    ).toBe('time_in_force');
  });

  it('ignores values that are not objects', () => {
    expect(practiceUnsupportedField(null)).toBeNull();
    expect(practiceUnsupportedField('stop_market')).toBeNull();
  });

  it('builds the UNSUPPORTED_ORDER error with details.field', () => {
    expect(practiceUnsupportedError('expires_at')).toEqual({
      code: 'UNSUPPORTED_ORDER',
      message: 'Practice does not support expires_at',
      retryable: false,
      details: { field: 'expires_at' },
    });
  });
});

describe('AmendOrderRequest', () => {
  it('needs only request_id; the rest is optional and nullable', () => {
    expect(shapesOf(AmendOrderRequest, { request_id: 'req-00000003' })).toEqual([]);
    expect(
      shapesOf(AmendOrderRequest, {
        request_id: 'req-00000003',
        quantity: '2',
        price: 64000,
        trigger_price: null,
        expires_at: null,
      }),
    ).toEqual([]);
    expect(shapesOf(AmendOrderRequest, { quantity: '2' })).toEqual([
      ['missing', 'body.request_id'],
    ]);
  });

  it('refuses unknown fields and bad values', () => {
    expect(
      shapesOf(AmendOrderRequest, { request_id: 'req-00000003', side: 'buy', price: '0' }),
    ).toEqual([
      ['greater_than', 'body.price'],
      ['extra_forbidden', 'body.side'],
    ]);
  });
});

describe('CancelOrderRequest and CancelAllRequest', () => {
  it('cancel takes exactly {request_id}', () => {
    expect(shapesOf(CancelOrderRequest, { request_id: 'req-00000004' })).toEqual([]);
    expect(shapesOf(CancelOrderRequest, { request_id: 'req-0004' })).toEqual([]);
    expect(shapesOf(CancelOrderRequest, { request_id: 'req-004' })).toEqual([
      ['string_too_short', 'body.request_id'],
    ]);
    expect(shapesOf(CancelOrderRequest, { request_id: 'req-00000004', order_id: 'x' })).toEqual([
      ['extra_forbidden', 'body.order_id'],
    ]);
  });

  it('cancel-all: market_id optional, nullable, 3..40', () => {
    expect(shapesOf(CancelAllRequest, { request_id: 'req-00000005' })).toEqual([]);
    expect(shapesOf(CancelAllRequest, { request_id: 'req-00000005', market_id: null })).toEqual([]);
    expect(shapesOf(CancelAllRequest, { request_id: 'req-00000005', market_id: 'BT' })).toEqual([
      ['string_too_short', 'body.market_id'],
    ]);
    expect(
      shapesOf(CancelAllRequest, { request_id: 'req-00000005', market_id: repeat(41) }),
    ).toEqual([['string_too_long', 'body.market_id']]);
  });
});

describe('ClosePositionRequest', () => {
  const base = { request_id: 'req-00000006', client_order_id: 'close-1' };

  it('defaults quantity_percent to "100" and max_slippage_percent to "0.5"', () => {
    expect(ClosePositionRequest.parse(base)).toEqual({
      ...base,
      quantity_percent: '100',
      max_slippage_percent: '0.5',
    });
  });

  it('quantity_percent: 0, 100, 100.01; max_slippage_percent: 0, 2, 2.0001', () => {
    expect(shapesOf(ClosePositionRequest, { ...base, quantity_percent: 0 })).toEqual([
      ['greater_than', 'body.quantity_percent'],
    ]);
    expect(shapesOf(ClosePositionRequest, { ...base, quantity_percent: 100 })).toEqual([]);
    expect(shapesOf(ClosePositionRequest, { ...base, quantity_percent: '100.01' })).toEqual([
      ['less_than_equal', 'body.quantity_percent'],
    ]);
    expect(shapesOf(ClosePositionRequest, { ...base, max_slippage_percent: '0' })).toEqual([
      ['greater_than', 'body.max_slippage_percent'],
    ]);
    expect(shapesOf(ClosePositionRequest, { ...base, max_slippage_percent: 2 })).toEqual([]);
    expect(shapesOf(ClosePositionRequest, { ...base, max_slippage_percent: 2.0001 })).toEqual([
      ['less_than_equal', 'body.max_slippage_percent'],
    ]);
    expect(shapesOf(ClosePositionRequest, { ...base, quantity_percent: null })).toEqual([
      ['decimal_type', 'body.quantity_percent'],
    ]);
  });

  it('needs client_order_id (1..100) and refuses unknown fields', () => {
    expect(shapesOf(ClosePositionRequest, { request_id: 'req-00000006' })).toEqual([
      ['missing', 'body.client_order_id'],
    ]);
    expect(shapesOf(ClosePositionRequest, { ...base, client_order_id: repeat(101) })).toEqual([
      ['string_too_long', 'body.client_order_id'],
    ]);
    expect(shapesOf(ClosePositionRequest, { ...base, quantity: '1' })).toEqual([
      ['extra_forbidden', 'body.quantity'],
    ]);
  });
});

describe('BatchOrderRequest', () => {
  function orders(count: number): Record<string, unknown>[] {
    return Array.from({ length: count }, (_, index) => ({
      ...limitOrder(),
      request_id: `req-batch-${index.toString().padStart(3, '0')}`,
      client_order_id: `batch-${index}`,
    }));
  }

  it('batch size: 0 refused, 1 and 20 accepted, 21 refused', () => {
    const base = { request_id: 'req-00000007' };
    expect(shapesOf(BatchOrderRequest, { ...base, orders: orders(0) })).toEqual([
      ['too_short', 'body.orders'],
    ]);
    expect(shapesOf(BatchOrderRequest, { ...base, orders: orders(1) })).toEqual([]);
    expect(shapesOf(BatchOrderRequest, { ...base, orders: orders(20) })).toEqual([]);
    expect(shapesOf(BatchOrderRequest, { ...base, orders: orders(21) })).toEqual([
      ['too_long', 'body.orders'],
    ]);
  });

  it('locates item issues by index', () => {
    const items = orders(3);
    items[1] = { ...items[1], quantity: '0', extra: true };
    items[2] = without(items[2]!, 'price');
    expect(shapesOf(BatchOrderRequest, { request_id: 'req-00000007', orders: items })).toEqual([
      ['greater_than', 'body.orders.1.quantity'],
      ['extra_forbidden', 'body.orders.1.extra'],
      ['missing', 'body.orders.2.price'],
    ]);
  });
});

describe('CancelAllAfterRequest', () => {
  it('timeout_seconds: -1, 0, 86400, 86401 and 1.5', () => {
    const at = (timeout: unknown) =>
      shapesOf(CancelAllAfterRequest, { request_id: 'req-00000008', timeout_seconds: timeout });
    expect(at(-1)).toEqual([['greater_than_equal', 'body.timeout_seconds']]);
    expect(at(0)).toEqual([]);
    expect(at(86_400)).toEqual([]);
    expect(at(86_401)).toEqual([['less_than_equal', 'body.timeout_seconds']]);
    expect(at(1.5)).toEqual([['int_from_float', 'body.timeout_seconds']]);
    expect(at('60')).toEqual([['float_type', 'body.timeout_seconds']]);
    expect(at(undefined)).toEqual([['missing', 'body.timeout_seconds']]);
  });
});

describe('normalization to the wire', () => {
  it('writes every number-or-decimal field of an order as a canonical decimal string', () => {
    const parsed = OrderRequest.parse({
      ...limitOrder(),
      quantity: 0.1,
      price: '+065000.50',
      trigger_price: null,
    });
    const wire = normalizeOrderRequest(parsed);
    expect(wire.quantity).toBe('0.1');
    expect(wire.price).toBe('65000.5');
    expect(wire.trigger_price).toBeNull();
    expect('max_slippage_percent' in wire).toBe(false);
    expect(Object.keys(wire)).toEqual(Object.keys(parsed));
    expect(OrderRequest.parse(wire)).toEqual(wire);
  });

  it('normalizes market slippage, amend, close and batch bodies', () => {
    expect(normalizeOrderRequest(OrderRequest.parse(marketOrder())).max_slippage_percent).toBe(
      '0.5',
    );
    expect(
      normalizeAmendOrderRequest(
        AmendOrderRequest.parse({ request_id: 'req-00000003', quantity: 2, price: null }),
      ),
    ).toEqual({ request_id: 'req-00000003', quantity: '2', price: null });
    expect(
      normalizeClosePositionRequest(
        ClosePositionRequest.parse({
          request_id: 'req-00000006',
          client_order_id: 'c',
          quantity_percent: 50,
        }),
      ),
    ).toEqual({
      request_id: 'req-00000006',
      client_order_id: 'c',
      quantity_percent: '50',
      max_slippage_percent: '0.5',
    });
    const batch = normalizeBatchOrderRequest(
      BatchOrderRequest.parse({ request_id: 'req-00000007', orders: [limitOrder()] }),
    );
    expect(batch.orders[0]?.quantity).toBe('1');
  });
});
