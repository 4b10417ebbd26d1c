/**
 * The checks of what trading needs: the scopes (learned from the venue's SCOPE_REQUIRED
 * answers), the WebSocket challenge and auth, route readiness, a simulated minimal order on
 * each market (nothing placed), and the rate-limit headers.
 */
import { randomBytes } from 'node:crypto';
import {
  isVenueError,
  type RestClient,
  StreamClient,
  type VenueError,
} from '../../client/index.ts';
import { deadlineOf } from '../../core/bounded-read.ts';
import { isPaperbotError } from '../../core/errors.ts';
import { decimal, parseDecimal, toWire } from '../../core/decimal.ts';
import { type Market, type OrderRequestInput, readRouteReadiness } from '../../protocol/index.ts';
import { marketInfoOf, priceOnTick, smallestOrderQuantity } from '../../runtime/strategy/index.ts';
import { adviceFor, type Context, errorText, fail, ok, warn } from './check-kit.ts';
import type { CheckResult } from './report.ts';

/** Markets simulated on when the configuration names none (every listed one, up to this). */
export const MAX_SIMULATED_MARKETS = 10;

/** The scope a SCOPE_REQUIRED answer names (`details.required_scope`, else the message). */
function requiredScopeOf(error: VenueError): string {
  const details = error.details as Record<string, unknown>;
  for (const field of ['required_scope', 'scope', 'missing_scope']) {
    if (typeof details[field] === 'string') return details[field];
  }
  return `(unnamed: ${error.message})`;
}

/** The order the simulation check sends: the smallest limit buy on the grid, at the last price. */
export function minimalOrderOf(market: Market): OrderRequestInput | null {
  const info = marketInfoOf(market);
  const reference = market.last_price ?? market.mark_price ?? market.index_price;
  if (reference === null) return null;
  const price = priceOnTick(info, parseDecimal(reference), 'buy');
  if (price.lte(decimal(0))) return null;
  const quantity = smallestOrderQuantity(info, price);
  const id = randomBytes(8).toString('hex');
  return {
    request_id: `doctor-${id}`,
    client_order_id: `doctor-${id}`,
    market_id: market.market_id,
    side: 'buy',
    type: 'limit',
    quantity: toWire(quantity),
    price: toWire(price),
    leverage: 1,
    time_in_force: 'GTC',
    // Isolated unless the market lists only cross (some support only one).
    margin_mode:
      info.marginModes.includes('cross') && !info.marginModes.includes('isolated')
        ? 'cross'
        : 'isolated',
  };
}

export async function checkScopes(context: Context, rest: RestClient): Promise<CheckResult> {
  const missing = new Map<string, string[]>();
  const other: string[] = [];
  const firstMarket = context.markets[0];
  const order = firstMarket === undefined ? null : minimalOrderOf(firstMarket);
  const probes: Array<[string, () => Promise<unknown>]> = [
    ['GET /v1/positions', () => rest.listPositions({ limit: 1 })],
    ['GET /v1/orders', () => rest.listOrders({ limit: 1 })],
    ['GET /v1/fills', () => rest.listFills({ limit: 1 })],
    ['GET /v1/events', () => rest.listEvents({ limit: 1 })],
    ['GET /v1/routes/readiness', () => rest.getRoutesReadiness()],
  ];
  if (order !== null) {
    probes.push(['POST /v1/orders/simulate', () => rest.simulateOrder(order)]);
  }
  for (const [name, run] of probes) {
    try {
      await run();
    } catch (error) {
      if (isVenueError(error) && error.code === 'SCOPE_REQUIRED') {
        const scope = requiredScopeOf(error);
        missing.set(scope, [...(missing.get(scope) ?? []), name]);
      } else {
        other.push(`${name}: ${errorText(error)}`);
      }
    }
  }
  if (missing.size > 0) {
    const named = [...missing].map(([scope, calls]) => `${scope} (${calls.join(', ')})`);
    return fail(
      'scopes',
      `the key lacks ${named.join('; ')}`,
      `create or download a key with the scope${missing.size === 1 ? '' : 's'} ${[...missing.keys()].join(', ')}`,
      { details: { missing: Object.fromEntries(missing), key_scopes: context.credential.scopes } },
    );
  }
  if (other.length > 0) {
    return fail('scopes', other.join('; '), 'these reads must work for the bot to run');
  }
  return ok(
    'scopes',
    `every read the bot makes${order === null ? '' : ' and a simulation'} is allowed (key scopes: ${context.credential.scopes.join(', ')})`,
  );
}

export async function checkStream(context: Context, rest: RestClient): Promise<CheckResult> {
  let stream: StreamClient;
  try {
    stream = new StreamClient({
      rest,
      clock: context.clock,
      connectTimeoutMs: context.timeoutMs,
      replyTimeoutMs: context.timeoutMs,
    });
  } catch (error) {
    return fail('stream', errorText(error), 'the key needs the scopes of the private channels');
  }
  const deadline = deadlineOf(context.clock, context.timeoutMs * 2);
  // The first error of the session fails the check; one after it is settled is not a crash.
  let reportError: (error: unknown) => void = () => undefined;
  const firstError = new Promise<never>((_resolve, reject) => {
    reportError = reject;
  });
  firstError.catch(() => undefined);
  // A channel refused for a lacking scope is learned and the session goes on without it; the
  // scopes check names the scope, so here it is a warning, not the stream's failure.
  const subscription = stream.errors$.subscribe((error) => {
    if (isPaperbotError(error) && error.code === 'SCOPE_REQUIRED') return;
    reportError(error);
  });
  try {
    const timedOut = new Promise<never>((_resolve, reject) => {
      deadline.signal.addEventListener('abort', () => reject(deadline.signal.reason), {
        once: true,
      });
    });
    timedOut.catch(() => undefined);
    const connected = stream.connect();
    connected.catch(() => undefined);
    await Promise.race([connected, firstError, timedOut]);
    const statistics = stream.statistics();
    if (stream.lackingScopes.length > 0) {
      return warn(
        'stream',
        `authenticated and subscribed (${stream.url}), without the channels of ${stream.lackingScopes.join(', ')}`,
        'the key lacks the scopes of these private channels: see the scopes check',
        { details: { statistics, lacking_scopes: stream.lackingScopes } },
      );
    }
    return ok('stream', `challenge answered, authenticated and subscribed (${stream.url})`, {
      details: { statistics },
    });
  } catch (error) {
    const text = errorText(error);
    const advice = /INVALID_SIGNATURE/.test(text)
      ? 'the WebSocket auth frame is signed differently than the service expects: check venue.wire.websocket_auth (its fields and signing input) and venue.wire.scopes, in venue.wire or the --wire file'
      : adviceFor(error);
    return fail('stream', `the WebSocket ${stream.url} failed: ${text}`, advice);
  } finally {
    subscription.unsubscribe();
    deadline.dispose();
    await stream.close();
  }
}

export async function checkRoutes(rest: RestClient): Promise<CheckResult> {
  try {
    const items = await rest.getRoutesReadiness();
    const readings = items.map((item) => readRouteReadiness(item));
    const lines = readings.map((reading) =>
      reading.readable
        ? `${reading.routeId}: ${reading.ready ? 'ready' : `not ready (${reading.reasons.join(', ') || 'no reason given'})`}`
        : `${reading.routeId ?? '?'}: ${reading.problem}`,
    );
    const ready = readings.filter((reading) => reading.readable && reading.ready).length;
    if (readings.length === 0 || ready === 0) {
      return fail(
        'routes',
        `no route is ready (${readings.length} listed)`,
        'the service cannot execute orders now; try later',
        {
          lines,
        },
      );
    }
    if (ready < readings.length) {
      return warn(
        'routes',
        `${ready} of ${readings.length} routes ready`,
        'markets on routes not ready cannot trade now',
        {
          lines,
        },
      );
    }
    return ok('routes', `${ready} of ${readings.length} routes ready`, { lines });
  } catch (error) {
    return fail('routes', `GET /v1/routes/readiness failed: ${errorText(error)}`, adviceFor(error));
  }
}

export async function checkSimulation(context: Context, rest: RestClient): Promise<CheckResult> {
  const configured = context.settings.markets;
  const listed = new Map(context.markets.map((market) => [market.market_id, market]));
  const ids = configured ?? context.markets.slice(0, MAX_SIMULATED_MARKETS).map((m) => m.market_id);
  const lines: string[] = [];
  const failed: string[] = [];
  for (const id of ids) {
    const market = listed.get(id);
    if (market === undefined) {
      failed.push(id);
      lines.push(`${id}: the venue does not list this market`);
      continue;
    }
    const order = minimalOrderOf(market);
    if (order === null) {
      failed.push(id);
      lines.push(`${id}: no price to build an order at (no last, mark or index price)`);
      continue;
    }
    try {
      const result = await rest.simulateOrder(order);
      const decision = String((result as { decision?: unknown }).decision ?? '?');
      const issues = (result as { issues?: unknown }).issues;
      const issueText =
        Array.isArray(issues) && issues.length > 0
          ? `; issues: ${JSON.stringify(issues).slice(0, 200)}`
          : '';
      if (decision !== 'READY') failed.push(id);
      lines.push(
        `${id}: buy ${String(order.quantity)} @ ${String(order.price)} -> ${decision}${issueText}`,
      );
    } catch (error) {
      failed.push(id);
      lines.push(`${id}: ${errorText(error)}`);
    }
  }
  const scope =
    configured === null
      ? `${ids.length} of the ${context.markets.length} listed markets`
      : `${ids.length} configured market${ids.length === 1 ? '' : 's'}`;
  if (ids.length === 0) {
    return fail('simulation', 'no market to simulate an order on', 'the venue lists no market');
  }
  if (failed.length > 0) {
    return fail(
      'simulation',
      `a minimal order is not accepted on ${failed.join(', ')} (${scope} simulated, none placed)`,
      "read each market's answer below; the bot cannot trade where a minimal order is refused",
      { lines },
    );
  }
  return ok(
    'simulation',
    `a minimal order would be accepted on ${scope} (simulated, none placed)`,
    {
      lines,
    },
  );
}

export function checkRateLimits(context: Context, rest: RestClient): CheckResult {
  const state = rest.rateLimit(context.credential.keyId);
  if (state === null || state.limit === null) {
    return warn(
      'rate_limits',
      'no rate-limit headers on the answers',
      'the bot cannot pace itself to the quota; it still backs off on 429',
    );
  }
  const resetIn =
    state.resetAtMs === null
      ? ''
      : `, window resets in ${Math.max(0, Math.round(state.resetAtMs - context.clock.now()))} ms`;
  return ok(
    'rate_limits',
    `quota ${state.limit} per window, ${state.remaining ?? '?'} left${resetIn}`,
    {
      details: { limit: state.limit, remaining: state.remaining },
    },
  );
}
