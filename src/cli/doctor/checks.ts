/**
 * The checks of `paperbot doctor`, in the order a connection is built: the URLs, something
 * answering there, TLS, the clock, the public endpoints, a signed request, the scopes the bot
 * needs, the WebSocket, route readiness, a simulated order per market, the rate-limit headers.
 * A failure that makes the later checks meaningless (nothing answers, TLS fails, the signature
 * is refused) marks them `skip`, naming the check to fix first. Nothing is ever placed.
 */
import { RestClient } from '../../client/index.ts';
import type { Clock } from '../../core/clock.ts';
import { checkAccount } from './account-check.ts';
import { type Context, skip } from './check-kit.ts';
import { checkClock, checkConnection, checkPublic, checkUrls } from './connection-checks.ts';
import { type DoctorReport, reportOf } from './report.ts';
import type { DoctorTargetSettings } from './target.ts';
import {
  checkRateLimits,
  checkRoutes,
  checkScopes,
  checkSimulation,
  checkStream,
} from './trading-checks.ts';

export { MAX_SIMULATED_MARKETS, minimalOrderOf } from './trading-checks.ts';

export interface DoctorRunOptions {
  readonly clock: Clock;
  /** Each network step. Default: the configuration's request timeout. */
  readonly timeoutMs?: number;
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
    // The WebSocket auth of the stream check is signed with the same profile (StreamClient
    // takes it from this client).
    wireProfile: context.settings.wireProfile,
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
