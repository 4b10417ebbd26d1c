/** The client's types follow the endpoint table: wrong arguments do not compile. */
import { describe, expect, expectTypeOf, it } from 'vitest';
import type {
  CallArguments,
  PreparedMutation,
  PrepareArguments,
  RestClient,
} from '../../src/client/index.ts';
import type { Book, CancelAllAfterResponse, Order } from '../../src/protocol/index.ts';
import type { PreparedCommand } from '../../src/signing/index.ts';

describe('client types', () => {
  it('derives arguments and results from the endpoint table', () => {
    expectTypeOf<ReturnType<RestClient['getBook']>>().resolves.toEqualTypeOf<Book>();
    expectTypeOf<ReturnType<RestClient['placeOrder']>>().resolves.toEqualTypeOf<Order>();
    expectTypeOf<
      ReturnType<RestClient['setCancelAllAfter']>
    >().resolves.toEqualTypeOf<CancelAllAfterResponse>();
    expectTypeOf<{ params: { market_id: string }; query: { depth: number } }>().toExtend<
      CallArguments<'getBook'>
    >();
    // getBook needs its market id; getTime takes no body.
    expectTypeOf<{ query: { depth: number } }>().not.toExtend<CallArguments<'getBook'>>();
    expectTypeOf<{ body: { request_id: string } }>().not.toExtend<CallArguments<'getTime'>>();
    expectTypeOf<{ body: { request_id: string } }>().toExtend<
      PrepareArguments<'cancelAllOrders'>
    >();
    expectTypeOf<{ body: { request_id: string } }>().not.toExtend<
      PrepareArguments<'cancelOrder'>
    >();
    // One prepared-command type from the journal to the wire: the client's is the shared one.
    expectTypeOf<PreparedMutation<'cancelOrder'>>().toEqualTypeOf<PreparedCommand<'cancelOrder'>>();
    expect(true).toBe(true);
  });
});
