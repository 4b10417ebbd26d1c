/**
 * Interceptors of a venue's send: `composeSend` applies them in undici's order (the first
 * innermost), and `withSend` gives the venue with its send replaced and every other member the
 * venue's own, its methods called on the venue itself.
 */
import { EMPTY } from 'rxjs';
import { describe, expect, it } from 'vitest';
import {
  composeSend,
  type SendInterceptor,
  sendOf,
  withSend,
} from '../../src/runtime/venue-send.ts';
import { VenueError } from '../../src/client/index.ts';
import { translateFailures } from '../../src/runtime/venue-error.ts';
import type { ExecutionVenue, PreparedCommand } from '../../src/runtime/venue.ts';

const placement = { endpoint: 'placeOrder', requestId: 'req-1' } as unknown as PreparedCommand;

/** An interceptor that writes its name into `trace` before and after the call it wraps. */
function tracing(name: string, trace: string[]): SendInterceptor {
  return (next) => async (prepared, signal, timeoutMs) => {
    trace.push(`${name}:in`);
    try {
      return await next(prepared, signal, timeoutMs);
    } finally {
      trace.push(`${name}:out`);
    }
  };
}

/** A venue class with state of its own (a private field), as the real ones are. */
class CountingVenue {
  readonly abortable = true;
  readonly riskEvents$ = EMPTY;
  readonly resync$ = EMPTY;
  readonly sent: (number | undefined)[] = [];
  #reads = 0;

  send(_prepared: PreparedCommand, _signal?: AbortSignal, timeoutMs?: number): Promise<unknown> {
    this.sent.push(timeoutMs);
    return Promise.resolve({ order_id: 'o-1' });
  }

  getAccount(): Promise<number> {
    this.#reads += 1;
    return Promise.resolve(this.#reads);
  }
}

describe('venue send interceptors', () => {
  it('composes in order: the first interceptor is nearest the venue', async () => {
    const trace: string[] = [];
    const venue = new CountingVenue() as unknown as ExecutionVenue;
    const send = composeSend(tracing('a', trace), tracing('b', trace))(sendOf(venue));
    await expect(send(placement, undefined, 1_000)).resolves.toEqual({ order_id: 'o-1' });
    expect(trace).toEqual(['b:in', 'a:in', 'a:out', 'b:out']);
    expect((venue as unknown as CountingVenue).sent).toEqual([1_000]);
  });

  it('composes nothing into the venue send itself', async () => {
    const venue = new CountingVenue();
    const send = composeSend()(sendOf(venue as unknown as ExecutionVenue));
    await send(placement, undefined, 5);
    expect(venue.sent).toEqual([5]);
  });

  it('replaces send only: other members are the venue own, methods bound to it', async () => {
    const inner = new CountingVenue();
    const calls: string[] = [];
    const replaced = withSend(inner as unknown as ExecutionVenue, (prepared) => {
      calls.push(prepared.requestId);
      return Promise.resolve({}) as never;
    });
    await replaced.send(placement);
    expect(calls).toEqual(['req-1']);
    expect(inner.sent).toEqual([]);
    expect(replaced.abortable).toBe(true);
    expect(replaced.riskEvents$).toBe(inner.riskEvents$);
    // A method that reads a private field runs on the venue, however it is called.
    const { getAccount } = replaced;
    await expect(getAccount()).resolves.toBe(1);
    await expect(replaced.getAccount()).resolves.toBe(2);
    expect(replaced.getAccount).toBe(getAccount);
  });

  it('translates a failure of the send it wraps, and passes its arguments on', async () => {
    const seen: (number | undefined)[] = [];
    const refused = new VenueError('INSUFFICIENT_MARGIN', 'no margin', {
      source: 'service',
      httpStatus: 422,
      serverRequestId: 'srv-1',
    });
    const send = composeSend(translateFailures)((_prepared, _signal, timeoutMs) => {
      seen.push(timeoutMs);
      return Promise.reject(refused);
    });
    const failure = await send(placement, undefined, 900).then(
      () => null,
      (error: unknown) => error as VenueError,
    );
    expect(seen).toEqual([900]);
    expect(failure?.code).toBe('INSUFFICIENT_MARGIN');
    expect(failure?.details).toMatchObject({ httpStatus: 422, serverRequestId: 'srv-1' });
    expect(failure?.cause).toBe(refused);
  });
});
