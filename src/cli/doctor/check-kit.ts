/**
 * What every check of `paperbot doctor` shares: the context of one run, the verdict helpers and
 * how an error reads in a summary and in advice.
 */
import {
  isVenueError,
  type RestClient,
  tlsFailureOf,
  type TransportOptions,
} from '../../client/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { Market } from '../../protocol/index.ts';
import type { Credential } from '../../signing/index.ts';
import type { CheckResult } from './report.ts';
import type { DoctorTargetSettings } from './target.ts';

export interface Context {
  readonly settings: DoctorTargetSettings;
  readonly credential: Credential;
  readonly transport: TransportOptions;
  readonly clock: Clock;
  readonly timeoutMs: number;
  readonly results: CheckResult[];
  rest: RestClient | null;
  markets: Market[];
}

export function ok(id: string, summary: string, extra: Partial<CheckResult> = {}): CheckResult {
  return { id, verdict: 'ok', summary, advice: null, ...extra };
}

/** A failed or warned check: a verdict that always comes with advice. */
function withAdvice<V extends 'fail' | 'warn'>(verdict: V) {
  return (id: string, summary: string, advice: string, extra: Partial<CheckResult> = {}) =>
    ({ id, verdict, summary, advice, ...extra }) satisfies CheckResult;
}

export const fail = withAdvice('fail');
export const warn = withAdvice('warn');

export function skip(id: string, because: string): CheckResult {
  return { id, verdict: 'skip', summary: 'not checked', advice: `fix "${because}" first` };
}

export function errorText(error: unknown): string {
  if (isVenueError(error)) {
    return `${error.code}: ${error.message}${error.httpStatus === null ? '' : ` (HTTP ${error.httpStatus})`}`;
  }
  return error instanceof Error ? error.message : String(error);
}

export function adviceFor(error: unknown): string {
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
