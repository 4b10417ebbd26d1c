/**
 * The cross-cutting concerns of a venue's `send` (the kernel's placement timing,
 * `kernel/placement-timing.ts`; the live venue's error translation, `venue-error.ts`) as
 * small interceptors of one function, composed as undici composes its dispatchers
 * (`dispatcher.compose(dispatch => dispatch)`), instead of classes that forward every member of
 * the venue to decorate one. An interceptor gets the next `send` and returns one that wraps it;
 * it must hand every argument on, the placement's `timeoutMs` included.
 */
import type { ExecutionVenue } from './venue.ts';

/** A venue's `send`: the prepared command, the caller's signal, the transport's time limit. */
export type VenueSend = ExecutionVenue['send'];

/** One concern of `send`: wraps the next `send` into one that does its part around it. */
export type SendInterceptor = (next: VenueSend) => VenueSend;

/**
 * One interceptor of several, in undici's order: each wraps the `send` the ones before it made,
 * so the first is innermost (nearest the venue) and the last outermost (it sees a call first
 * and its answer last).
 */
export function composeSend(...interceptors: readonly SendInterceptor[]): SendInterceptor {
  return (send) => {
    let composed = send;
    for (const interceptor of interceptors) composed = interceptor(composed);
    return composed;
  };
}

/**
 * The venue with `send` replaced and every other member its own: a proxy, so that no member is
 * forwarded by hand (and none forgotten when the port grows). Methods are bound to the venue
 * once, on first use, so a venue keeps its own `this` (and its private fields).
 */
export function withSend(venue: ExecutionVenue, send: VenueSend): ExecutionVenue {
  const bound = new Map<PropertyKey, { readonly own: unknown; readonly bound: unknown }>();
  return new Proxy(venue, {
    get(target, name) {
      if (name === 'send') return send;
      const value: unknown = Reflect.get(target, name, target);
      if (typeof value !== 'function') return value;
      const known = bound.get(name);
      if (known !== undefined && known.own === value) return known.bound;
      const method: unknown = value.bind(target);
      bound.set(name, { own: value, bound: method });
      return method;
    },
  });
}

/** The venue's `send` as a function of its own, bound to the venue. */
export function sendOf(venue: ExecutionVenue): VenueSend {
  return venue.send.bind(venue) as VenueSend;
}
