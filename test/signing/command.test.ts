/**
 * The one command module (src/signing/command.ts): the client's `prepare` / `fromStoredPath`
 * and every execution venue (`prepareCommand` / `restoreCommand`) serialize with the same
 * code, so the bytes and the hash a runtime journals are the ones the client sends, either way
 * round; a command's bytes are made and hashed once; a refusal names its issues the same way
 * in the runtime (INVALID_COMMAND) and the client (INVALID_REQUEST).
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { RestClient, type VenueError } from '../../src/client/index.ts';
import { PaperbotError } from '../../src/core/errors.ts';
import type { OrderRequestInput } from '../../src/protocol/index.ts';
import { bodySha256Hex, prepareCommand, restoreCommand } from '../../src/signing/index.ts';
import * as fixtures from '../protocol/fixtures.ts';

function thrown(action: () => unknown): PaperbotError {
  try {
    action();
  } catch (error) {
    if (error instanceof PaperbotError) return error;
    throw error;
  }
  throw new Error('expected an error');
}

const decimal = fc
  .tuple(fc.integer({ min: 1, max: 99_999 }), fc.integer({ min: 0, max: 9_999 }))
  .map(([whole, fraction]) => (fraction === 0 ? whole : Number(`${whole}.${fraction}`)));

describe('the command module', () => {
  // Nothing is sent: `prepare` and `fromStoredPath` only check and serialize.
  const client = new RestClient({ baseUrl: 'http://127.0.0.1:9' });
  afterAll(() => client.close());

  it("gives the client's prepare and a venue's prepare and restore the same bytes and hash", () => {
    fc.assert(
      fc.property(
        decimal,
        decimal,
        fc.boolean(),
        fc.stringMatching(/^[A-Za-z0-9:_-]{8,40}$/),
        (quantity, price, asText, requestId) => {
          const body = {
            ...fixtures.limitOrder(),
            request_id: requestId,
            quantity: asText ? String(quantity) : quantity,
            price: asText ? String(price) : price,
          } as OrderRequestInput;
          const byClient = client.prepare('placeOrder', { body });
          const byVenue = prepareCommand({ endpoint: 'placeOrder', body });
          expect(byClient.bodyBytes).toEqual(byVenue.bodyBytes);
          expect(byClient.bodySha256).toBe(byVenue.bodySha256);
          expect(byClient.body).toEqual(byVenue.body);
          expect(byClient.path).toBe(byVenue.path);
          // Journaled by the runtime, restored by the client after a restart, and back.
          const restoredByClient = client.fromStoredPath(
            'placeOrder',
            byVenue.path,
            byVenue.bodyBytes,
          );
          const restoredByVenue = restoreCommand('placeOrder', byClient.path, byClient.bodyBytes);
          for (const restored of [restoredByClient, restoredByVenue]) {
            expect(restored.bodyBytes).toEqual(byVenue.bodyBytes);
            expect(restored.bodySha256).toBe(byVenue.bodySha256);
            expect(restored.requestId).toBe(requestId);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('makes and hashes the bytes once, and keeps restored bytes as its own copy', () => {
    const prepared = prepareCommand({
      endpoint: 'cancelOrder',
      params: { order_id: 'ord-1' },
      body: { request_id: 'req-cancel-1' },
    });
    const bytes = prepared.bodyBytes;
    expect(prepared.bodyBytes).toBe(bytes);
    expect(prepared.bodySha256).toBe(bodySha256Hex(bytes));
    expect(prepared.path).toBe('/v1/orders/ord-1/cancel');
    const stored = Uint8Array.from(bytes);
    const restored = restoreCommand('cancelOrder', prepared.path, stored);
    stored[0] = 0x20;
    expect(restored.bodyBytes).toEqual(bytes);
    expect(restored.bodySha256).toBe(prepared.bodySha256);
    expect(Object.isFrozen(restored)).toBe(true);
  });

  it('serializes a batch too, through the client and the module alike', () => {
    const body = {
      request_id: 'req-batch-01',
      orders: [fixtures.limitOrder(), fixtures.marketOrder()],
    } as never;
    const byClient = client.prepare('placeBatch', { body });
    const byModule = prepareCommand({ endpoint: 'placeBatch', body });
    expect(byClient.bodySha256).toBe(byModule.bodySha256);
    const wire = JSON.parse(new TextDecoder().decode(byModule.bodyBytes));
    expect(wire.orders[0].quantity).toBe('1');
  });

  it('refuses a bad body with the same message in the runtime and in the client', () => {
    const body = { ...fixtures.marketOrder(), quantity: '-1' } as OrderRequestInput;
    const refusal = thrown(() => prepareCommand({ endpoint: 'placeOrder', body }));
    expect(refusal.code).toBe('INVALID_COMMAND');
    expect(refusal.message).toBe(
      'placeOrder: the body does not match the endpoint contract (body.quantity: Input should be greater than 0)',
    );
    expect(refusal.details.issues).toEqual([
      { type: 'greater_than', loc: ['body', 'quantity'], msg: 'Input should be greater than 0' },
    ]);
    const local = thrown(() => client.prepare('placeOrder', { body })) as VenueError;
    expect(local.code).toBe('INVALID_REQUEST');
    expect(local.source).toBe('local');
    expect(local.message).toBe(refusal.message);
    expect(local.details.issues).toEqual(refusal.details.issues);
  });

  it('refuses journaled bytes that no longer make a body, or a path of another endpoint', () => {
    const prepared = prepareCommand({
      endpoint: 'cancelAllOrders',
      body: { request_id: 'req-cancel-all-1' },
    });
    expect(() => restoreCommand('placeOrder', prepared.path, prepared.bodyBytes)).toThrow(
      /does not address this endpoint/,
    );
    const damaged = thrown(() =>
      restoreCommand('cancelAllOrders', prepared.path, new Uint8Array([0x7b, 0xff])),
    );
    expect(damaged.code).toBe('INVALID_COMMAND');
    expect(damaged.details.issues).toEqual([
      { type: 'json_invalid', loc: ['body'], msg: 'JSON decode error' },
    ]);
  });
});
