/**
 * The core hashes a command's fingerprint only when it is read: by a repeated request id, or by
 * a store serializing the record (on save with a data dir, on load in memory). Both memory
 * stores keep the record as it is, read back the same hex string as before and still detect
 * repeats and conflicts.
 */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../src/core/clock.ts';
import {
  defaultEmulatorConfig,
  Exchange,
  fingerprintOf,
  IdempotencyWindow,
  MemoryStore,
  ServiceCore,
  type Store,
} from '../../../src/emulator/index.ts';
import { finishBody, parseBody } from '../../../src/emulator/service/check.ts';
import { LazyFingerprint } from '../../../src/emulator/service/idempotency.ts';
import { endpoints, type ServiceIssue } from '../../../src/protocol/index.ts';

const START_MS = Date.UTC(2025, 0, 1);

const order = (price: string) => ({
  request_id: 'lazy-request-a',
  client_order_id: 'c-lazy-a',
  market_id: 'BTC-PERP',
  side: 'buy',
  type: 'limit',
  quantity: '0.010',
  price,
  leverage: 5,
});

function coreOver(ledgerStore: Store): { core: ServiceCore; accountId: string } {
  const clock = new VirtualClock(START_MS);
  const exchange = Exchange.open({
    clock,
    config: defaultEmulatorConfig(),
    store: new MemoryStore(),
  });
  exchange.start();
  const accountId = exchange.createAccount();
  return { core: new ServiceCore({ exchange, clock, store: ledgerStore }), accountId };
}

function place(core: ServiceCore, accountId: string, price: string) {
  return core.submit({
    endpoint: 'placeOrder',
    account: { accountId },
    params: {},
    bytes: new TextEncoder().encode(JSON.stringify(order(price))),
    traceId: 'test',
  });
}

/** The fingerprint the service has always stored for `order(price)`. */
function expectedFingerprint(price: string): string {
  const issues: ServiceIssue[] = [];
  const bytes = new TextEncoder().encode(JSON.stringify(order(price)));
  const parsed = parseBody(endpoints.placeOrder, bytes, issues);
  expect(issues).toEqual([]);
  return fingerprintOf('placeOrder', {}, finishBody('placeOrder', parsed));
}

describe('the lazy fingerprint', () => {
  it('is the hash of the command, also as JSON', () => {
    const body = { request_id: 'r', price: '1' };
    const lazy = new LazyFingerprint('cancelOrder', { order_id: 'o' }, body);
    const hex = fingerprintOf('cancelOrder', { order_id: 'o' }, body);
    expect(JSON.stringify({ fingerprint: lazy })).toBe(JSON.stringify({ fingerprint: hex }));
    expect(lazy.value).toBe(hex);
  });

  for (const [name, makeStore] of [
    ["the emulator's memory store (MemoryStore)", () => new MemoryStore()],
    ['the replay window (IdempotencyWindow)', () => new IdempotencyWindow()],
  ] as const) {
    it(`stores the same hex string and detects repeats and conflicts over ${name}`, () => {
      const store = makeStore();
      const { core, accountId } = coreOver(store);
      const first = place(core, accountId, '60000');
      expect(first.status).toBe(202);
      const stored = store.loadIdempotency(accountId, 'lazy-request-a') as { fingerprint: unknown };
      expect(stored.fingerprint).toBe(expectedFingerprint('60000'));

      const again = place(core, accountId, '60000');
      expect(again).toMatchObject({ status: 202, replayed: true, body: first.body });
      // Equal in meaning, written differently: the same fingerprint, the first answer.
      const same = place(core, accountId, '60000.0');
      expect(same).toMatchObject({ status: 202, replayed: true });
      const conflict = place(core, accountId, '59000');
      expect(conflict.status).toBe(409);
      expect((conflict.body as { error: { code: string } }).error.code).toBe(
        'IDEMPOTENCY_CONFLICT',
      );
    });
  }
});
