/**
 * The checks of `paperbot doctor`, in the order a connection is built: the URLs, something
 * answering there, TLS, the clock, the public endpoints, a signed request, the scopes the bot
 * needs, the WebSocket, route readiness, a simulated order per market, the rate-limit headers.
 * A failure that makes the later checks meaningless (nothing answers, TLS fails, the signature
 * is refused) marks them `skip`, naming the check to fix first. Nothing is ever placed.
 */
import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import {
  checkBaseUrl,
  checkWebSocketUrl,
  createRestDispatcher,
  isVenueError,
  RestClient,
  StreamClient,
  tlsFailureOf,
  type TransportOptions,
  type VenueError,
} from '../../client/index.ts';
import { boundedReadFailure, deadlineOf, readAtMost } from '../../core/bounded-read.ts';
import type { Clock } from '../../core/clock.ts';
import { decimal, parseDecimal, toWire } from '../../core/decimal.ts';
import type { Market, OrderRequestInput } from '../../protocol/index.ts';
import { readRouteReadiness } from '../../protocol/index.ts';
import { marketInfoOf, priceOnTick, smallestOrderQuantity } from '../../runtime/strategy/index.ts';
import type { Credential } from '../../signing/index.ts';
import { probeConnection } from './connection.ts';
import { type CheckResult, type DoctorReport, reportOf } from './report.ts';
import { describeSigningInput, signProbe } from './signing-input.ts';
import type { DoctorTargetSettings } from './target.ts';

/** Markets simulated on when the configuration names none (every listed one, up to this). */
export const MAX_SIMULATED_MARKETS = 10;
const PROBE_MAX_BYTES = 1024 * 1024;
/** A clock offset the bot tolerates without a word; beyond half the window it refuses to sign. */
const SKEW_WARN_MS = 1_000;
const SKEW_FAIL_MS = 5_000;

export interface DoctorRunOptions {
  readonly clock: Clock;
  /** Each network step. Default: the configuration's request timeout. */
  readonly timeoutMs?: number;
}

function ok(id: string, summary: string, extra: Partial<CheckResult> = {}): CheckResult {
  return { id, verdict: 'ok', summary, advice: null, ...extra };
}

function fail(id: string, summary: string, advice: string, extra: Partial<CheckResult> = {}) {
  return { id, verdict: 'fail', summary, advice, ...extra } satisfies CheckResult;
}

function warn(id: string, summary: string, advice: string, extra: Partial<CheckResult> = {}) {
  return { id, verdict: 'warn', summary, advice, ...extra } satisfies CheckResult;
}

function skip(id: string, because: string): CheckResult {
  return { id, verdict: 'skip', summary: 'not checked', advice: `fix "${because}" first` };
}

function errorText(error: unknown): string {
  if (isVenueError(error)) {
    return `${error.code}: ${error.message}${error.httpStatus === null ? '' : ` (HTTP ${error.httpStatus})`}`;
  }
  return error instanceof Error ? error.message : String(error);
}

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

interface Context {
  readonly settings: DoctorTargetSettings;
  readonly credential: Credential;
  readonly transport: TransportOptions;
  readonly clock: Clock;
  readonly timeoutMs: number;
  readonly results: CheckResult[];
  rest: RestClient | null;
  markets: Market[];
}

export async function runDoctor(
  settings: DoctorTargetSettings,
  options: DoctorRunOptions,
): Promise<DoctorReport> {
  const credential = settings.credential;
  const context: Context = {
    settings,
    credential,
    transport: settings.transport,
    clock: options.clock,
    timeoutMs: options.timeoutMs ?? settings.requestTimeoutMs,
    results: [],
    rest: null,
    markets: [],
  };
  const target = {
    restUrl: credential.apiBaseUrl,
    wsUrl: credential.wsUrl,
    keyId: credential.keyId,
    accountId: credential.accountId,
  };
  try {
    await runChecks(context);
  } finally {
    await context.rest?.close();
  }
  return reportOf(target, context.results);
}

/** The checks of `runDoctor`, in their order. */
export const ORDER_OF_CHECKS = [
  'urls',
  'reachable',
  'tls',
  'clock',
  'public',
  'account',
  'scopes',
  'stream',
  'routes',
  'simulation',
  'rate_limits',
] as const;

function skipRest(context: Context, from: (typeof ORDER_OF_CHECKS)[number], because: string): void {
  for (const id of ORDER_OF_CHECKS.slice(ORDER_OF_CHECKS.indexOf(from)))
    context.results.push(skip(id, because));
}

async function runChecks(context: Context): Promise<void> {
  const { results, credential } = context;

  // 1. The URLs parse and are safe to use (TLS except on loopback).
  const urls = checkUrls(credential);
  results.push(urls);
  if (urls.verdict === 'fail') return skipRest(context, 'reachable', 'urls');

  // 2 and 3. Something answers; its TLS certificate verifies.
  const [reachable, tls] = await checkConnection(context);
  results.push(reachable);
  if (reachable.verdict === 'fail') return skipRest(context, 'tls', 'reachable');
  results.push(tls);
  if (tls.verdict === 'fail') return skipRest(context, 'clock', 'tls');

  const rest = new RestClient({
    credential,
    clock: context.clock,
    requestTimeoutMs: context.timeoutMs,
    retry: { maxAttempts: 1 },
    clockSync: 'manual',
    transport: context.transport,
  });
  context.rest = rest;

  // 4. The clock against GET /v1/time.
  const clock = await checkClock(context, rest);
  results.push(clock);
  if (clock.verdict === 'fail' && clock.details?.reached === false) {
    return skipRest(context, 'public', 'clock');
  }

  // 5. The public endpoints.
  const publicCheck = await checkPublic(context, rest);
  results.push(publicCheck);

  // 6. A signed GET /v1/account.
  const account = await checkAccount(context, rest);
  results.push(account);
  if (account.verdict === 'fail') return skipRest(context, 'scopes', 'account');

  // 7 to 11.
  results.push(await checkScopes(context, rest));
  results.push(await checkStream(context, rest));
  results.push(await checkRoutes(rest));
  results.push(await checkSimulation(context, rest));
  results.push(checkRateLimits(context, rest));
}

function checkUrls(credential: Credential): CheckResult {
  const problems: string[] = [];
  for (const [name, url, check] of [
    ['api_base_url', credential.apiBaseUrl, checkBaseUrl],
    ['ws_url', credential.wsUrl, checkWebSocketUrl],
  ] as const) {
    try {
      check(url);
    } catch (error) {
      problems.push(`${name}: ${errorText(error)}`);
    }
  }
  if (problems.length > 0) {
    return fail(
      'urls',
      problems.join('; '),
      'correct the URLs in the key file (the website shows them)',
    );
  }
  return ok('urls', `REST ${credential.apiBaseUrl}, WebSocket ${credential.wsUrl}`);
}

async function checkConnection(context: Context): Promise<[CheckResult, CheckResult]> {
  const { credential } = context;
  const targets = [new URL(credential.apiBaseUrl)];
  const ws = new URL(credential.wsUrl);
  if (ws.host !== targets[0]?.host) targets.push(ws);
  const reached: string[] = [];
  const certificates: string[] = [];
  let plain = false;
  for (const url of targets) {
    const shown = `${url.protocol}//${url.host}`;
    const probe = await probeConnection(url, context.transport, context.clock, context.timeoutMs);
    if (!probe.ok && probe.stage === 'connect') {
      return [
        fail(
          'reachable',
          `nothing answers at ${shown} (${probe.code ?? probe.message}${probe.via === 'direct' ? '' : `, through ${probe.via}`})`,
          `is the service running at ${shown}? Check the URL, the network${probe.via === 'direct' ? '' : ' and the proxy (HTTPS_PROXY, HTTP_PROXY, NO_PROXY)'}`,
          { details: { url: shown, code: probe.code, via: probe.via } },
        ),
        skip('tls', 'reachable'),
      ];
    }
    reached.push(`${shown} (${probe.via})`);
    if (!probe.ok) {
      const tls = tlsFailureOf(probe.code ?? undefined);
      return [
        ok('reachable', `answers at ${reached.join(', ')}`),
        fail(
          'tls',
          `TLS with ${shown} failed: ${probe.code ?? ''} ${probe.message}`.replace(/\s+/g, ' '),
          tls?.advice ??
            'check the URL scheme and port, and the CA (venue.ca_file, NODE_EXTRA_CA_CERTS)',
          { details: { url: shown, code: probe.code, kind: tls?.kind ?? null } },
        ),
      ];
    }
    if (probe.certificate === null) plain = true;
    else {
      certificates.push(
        `${shown}: certificate for ${probe.certificate.subject} (${probe.certificate.altNames}), issued by ${probe.certificate.issuer}, valid until ${probe.certificate.validTo}`,
      );
    }
  }
  const reachable = ok('reachable', `answers at ${reached.join(', ')}`);
  if (plain && certificates.length === 0) {
    return [reachable, ok('tls', 'plain HTTP on loopback: no TLS to check')];
  }
  return [
    reachable,
    ok('tls', 'the certificate verifies (trusted CA, this host name, in its validity)', {
      lines: certificates,
    }),
  ];
}

async function checkClock(context: Context, rest: RestClient): Promise<CheckResult> {
  try {
    const estimate = await rest.syncClock();
    const offset = Math.round(estimate.offsetMs);
    const summary = `offset ${offset} ms to the service's clock (round trip ${Math.round(estimate.roundTripMs)} ms)`;
    const details = { reached: true, offset_ms: offset, round_trip_ms: estimate.roundTripMs };
    if (Math.abs(offset) > SKEW_FAIL_MS) {
      return fail(
        'clock',
        summary,
        'this clock is too far off: the bot refuses to sign; synchronize it (NTP)',
        { details },
      );
    }
    if (Math.abs(offset) > SKEW_WARN_MS) {
      return warn(
        'clock',
        summary,
        'synchronize this clock (NTP); the bot corrects it, within 5 s',
        {
          details,
        },
      );
    }
    return ok('clock', summary, { details });
  } catch (error) {
    return fail('clock', `GET /v1/time failed: ${errorText(error)}`, adviceFor(error), {
      details: { reached: false },
    });
  }
}

function adviceFor(error: unknown): string {
  if (isVenueError(error)) {
    const tls = tlsFailureOf(String(error.details.transportCode ?? ''));
    if (tls !== null) return tls.advice;
    if (error.code === 'REQUEST_TIMEOUT') return 'the service is slow or a proxy holds the request';
    if (error.code === 'MALFORMED_RESPONSE') {
      return 'the answer does not read as the interface says: is this the Practice service?';
    }
  }
  return 'check that the URL is the Practice service and that it is up';
}

async function checkPublic(context: Context, rest: RestClient): Promise<CheckResult> {
  const failures: string[] = [];
  const lines: string[] = [];
  const call = async <T>(name: string, run: () => Promise<T>): Promise<T | null> => {
    try {
      return await run();
    } catch (error) {
      failures.push(`${name}: ${errorText(error)}`);
      return null;
    }
  };
  await call('GET /v1/health', () => rest.health());
  const status = await call('GET /v1/status', () => rest.getStatus());
  if (status !== null) lines.push(`status: ${JSON.stringify(status).slice(0, 160)}`);
  const markets = await call('GET /v1/markets', () => rest.listMarkets());
  context.markets = markets === null ? [] : [...markets];
  if (failures.length > 0) {
    return fail(
      'public',
      failures.join('; '),
      'the public endpoints must answer before the bot can start',
      {
        lines,
      },
    );
  }
  return ok('public', `health, status and ${context.markets.length} markets read`, { lines });
}

async function checkAccount(context: Context, rest: RestClient): Promise<CheckResult> {
  const { credential } = context;
  const base = new URL(credential.apiBaseUrl);
  const target = `${base.pathname.replace(/\/+$/, '')}/v1/account`;
  const offset = rest.clockOffset()?.offsetMs ?? 0;
  const { headers, sent } = signProbe(credential, {
    method: 'GET',
    target,
    timestampMs: Math.round(context.clock.now() + offset),
    body: null,
  });
  const dispatcher = createRestDispatcher(base.origin, context.transport, {
    connections: 1,
    keepAliveTimeoutMs: 1_000,
    connectTimeoutMs: context.timeoutMs,
  });
  const deadline = deadlineOf(context.clock, context.timeoutMs);
  let status: number;
  let text: string;
  let requestId: string | null;
  try {
    const answer = await request(`${base.origin}${target}`, {
      dispatcher,
      method: 'GET',
      headers: { ...headers, accept: 'application/json', 'user-agent': 'paperbot-doctor' },
      signal: deadline.signal,
    });
    status = answer.statusCode;
    const id = answer.headers['svc-request-id'];
    requestId = typeof id === 'string' ? id : null;
    text = await readAtMost(answer.body, PROBE_MAX_BYTES);
  } catch (error) {
    const failure = boundedReadFailure(error, deadline, context.timeoutMs);
    return fail('account', `GET /v1/account failed: ${errorText(failure)}`, adviceFor(failure));
  } finally {
    deadline.dispose();
    await dispatcher.close();
  }
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null) body = parsed as Record<string, unknown>;
  } catch {
    body = {};
  }
  const failure = (typeof body.error === 'object' && body.error !== null ? body.error : {}) as {
    code?: unknown;
    message?: unknown;
  };
  const code = typeof failure.code === 'string' ? failure.code : null;
  const where = `HTTP ${status}${requestId === null ? '' : `, request ${requestId}`}`;
  if (status >= 200 && status < 300) {
    const accountId = typeof body.account_id === 'string' ? body.account_id : null;
    return ok('account', `the signed GET /v1/account is accepted (account ${accountId ?? '?'})`, {
      details: { account_id: accountId },
    });
  }
  const said = `${code ?? 'no error code'}${typeof failure.message === 'string' ? `: ${failure.message}` : ''}`;
  if (code === 'INVALID_SIGNATURE') {
    const description = describeSigningInput(sent);
    return fail(
      'account',
      `the service refused the signature of GET /v1/account (${said}; ${where})`,
      `compare with the service's signing rules, in venue.wire: ${description.settingsToCheck.join(', ')}`,
      { lines: description.lines, details: { code, status, request_id: requestId } },
    );
  }
  const advice: Record<string, string> = {
    KEY_REVOKED: 'the key was revoked: download a new one from the website',
    KEY_EXPIRED: 'the key expired: download a new one from the website',
    KEY_NOT_FOUND: 'the service does not know this key id: is the key file for this service?',
    IP_NOT_ALLOWED: "this machine's address is not on the key's allow list",
    CLOCK_SKEW: "the service says this machine's clock is off: synchronize it (NTP)",
    SCOPE_REQUIRED: 'the key needs the scope to read the account (account:read)',
  };
  return fail(
    'account',
    `GET /v1/account was refused (${said}; ${where})`,
    (code === null ? undefined : advice[code]) ?? "read the service's message above",
    { details: { code, status, request_id: requestId } },
  );
}

async function checkScopes(context: Context, rest: RestClient): Promise<CheckResult> {
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

async function checkStream(context: Context, rest: RestClient): Promise<CheckResult> {
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
  const subscription = stream.errors$.subscribe((error) => reportError(error));
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
    return ok('stream', `challenge answered, authenticated and subscribed (${stream.url})`, {
      details: { statistics },
    });
  } catch (error) {
    const text = errorText(error);
    const advice = /INVALID_SIGNATURE/.test(text)
      ? "the WebSocket auth frame is signed differently than the service expects: check venue.wire (the auth frame's fields and signing input)"
      : adviceFor(error);
    return fail('stream', `the WebSocket ${stream.url} failed: ${text}`, advice);
  } finally {
    subscription.unsubscribe();
    deadline.dispose();
    await stream.close();
  }
}

async function checkRoutes(rest: RestClient): Promise<CheckResult> {
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

async function checkSimulation(context: Context, rest: RestClient): Promise<CheckResult> {
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

function checkRateLimits(context: Context, rest: RestClient): CheckResult {
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
