/**
 * What an exit that fired hands on: an ordinary place intent (market, or limit at the exit's
 * limit price; reduce-only where the exit is), stamped for its strategy under the fixed
 * request id `<exit id>:x` and the sequence `-(4 × exit sequence + leg)` (leg 0 for a lone
 * exit, 1 stop-loss, 2 take-profit), so it never takes a sequence the strategy will use.
 */
import type { PlaceIntent, StampedIntent } from '../intents.ts';
import { type EmulatedExit, releaseIdOf } from './types.ts';

const LEG_OFFSETS = { exit: 0, stopLoss: 1, takeProfit: 2 } as const;

function legOf(id: string): keyof typeof LEG_OFFSETS {
  if (id.endsWith(':sl')) return 'stopLoss';
  if (id.endsWith(':tp')) return 'takeProfit';
  return 'exit';
}

/** The place intent an exit releases, stamped for its strategy under a fixed request id. */
export function releaseOf(exit: EmulatedExit, emittedAt: number): StampedIntent {
  const releaseId = exit.releaseId ?? releaseIdOf(exit.id);
  const base = {
    kind: 'place' as const,
    marketId: exit.marketId,
    side: exit.side,
    quantity: exit.quantity,
    ...(exit.reduceOnly ? { reduceOnly: true } : {}),
    ...(exit.tag === undefined ? {} : { tag: exit.tag }),
  };
  const intent: PlaceIntent =
    exit.order.type === 'limit'
      ? { ...base, type: 'limit', price: exit.order.price }
      : {
          ...base,
          type: 'market',
          ...(exit.order.maxSlippagePercent === undefined
            ? {}
            : { maxSlippagePercent: exit.order.maxSlippagePercent }),
        };
  return Object.freeze({
    strategyId: exit.strategyId,
    sequence: -(exit.sequence * 4 + LEG_OFFSETS[legOf(exit.id)]),
    requestId: releaseId,
    clientOrderId: releaseId,
    intent: Object.freeze(intent),
    emittedAt,
  });
}
