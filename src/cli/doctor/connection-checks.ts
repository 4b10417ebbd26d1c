/**
 * The checks below the signed API: the URLs, something answering there, its TLS certificate,
 * the clock against GET /v1/time, and the public endpoints.
 */
import {
  checkBaseUrl,
  checkWebSocketUrl,
  type RestClient,
  tlsFailureOf,
} from '../../client/index.ts';
import type { Credential } from '../../signing/index.ts';
import { adviceFor, type Context, errorText, fail, ok, skip, warn } from './check-kit.ts';
import { probeConnection } from './connection.ts';
import type { CheckResult } from './report.ts';

/** A clock offset the bot tolerates without a word; beyond half the window it refuses to sign. */
const SKEW_WARN_MS = 1_000;
const SKEW_FAIL_MS = 5_000;

export function checkUrls(credential: Credential): CheckResult {
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

export async function checkConnection(context: Context): Promise<[CheckResult, CheckResult]> {
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

export async function checkClock(context: Context, rest: RestClient): Promise<CheckResult> {
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

export async function checkPublic(context: Context, rest: RestClient): Promise<CheckResult> {
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
