/**
 * The signed GET /v1/account, sent by the doctor itself under the configured wire profile so
 * that it knows exactly what it signed: on INVALID_SIGNATURE the report shows that signing
 * input (no secret) and the wire settings to compare, with their values. Bounded in time and
 * size like every read.
 */
import { request } from 'undici';
import { createRestDispatcher, type RestClient } from '../../client/index.ts';
import { boundedReadFailure, deadlineOf, readAtMost } from '../../core/bounded-read.ts';
import { adviceFor, type Context, errorText, fail, ok } from './check-kit.ts';
import type { CheckResult } from './report.ts';
import { describeSentRequest, signProbe } from './signing-input.ts';

const PROBE_MAX_BYTES = 1024 * 1024;

export async function checkAccount(context: Context, rest: RestClient): Promise<CheckResult> {
  const { credential } = context;
  const { wireProfile, wireSource } = context.settings;
  const base = new URL(credential.apiBaseUrl);
  const target = `${base.pathname.replace(/\/+$/, '')}/v1/account`;
  const offset = rest.clockOffset()?.offsetMs ?? 0;
  const { headers, sent } = signProbe(credential, wireProfile, {
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
    const description = describeSentRequest(wireProfile, wireSource, sent);
    return fail(
      'account',
      `the service refused the signature of GET /v1/account (${said}; ${where})`,
      `compare these wire settings (venue.wire, or the --wire file) with the service's signing rules: ${description.settingsToCheck.join('; ')}`,
      {
        lines: ['signing input sent (no secret):', ...description.lines],
        details: {
          code,
          status,
          request_id: requestId,
          settings_to_check: description.settingsToCheck,
        },
      },
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
