/**
 * The HTTP side of the emulator: one table-driven dispatch for every endpoint of the protocol's
 * endpoint table. In order: route (404, 405), read the body (413 beyond the limit), for signed
 * endpoints authenticate, count the request against the key's quota (429) and check the scope,
 * then check the content type (415) and validate path parameters, query and body with the
 * table's schemas (422 INVALID_REQUEST listing every issue; 422 UNSUPPORTED_ORDER for the
 * Practice refusals; the body checks are the service core's), apply test faults, hand the
 * command to the service core (src/emulator/service: idempotency, envelope, limits, endpoint
 * map) and answer what it decided. Every answer carries SVC-REQUEST-ID; every error is the
 * envelope; an unexpected exception is logged and answered 503 EXECUTION_UNAVAILABLE, never 500.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import {
  allowedMethods,
  type BodyOf,
  EmptyQuery,
  type EndpointDefinition,
  type EndpointMatch,
  type EndpointName,
  errorStatus,
  matchEndpoint,
  type PathParamsOf,
  queryRecord,
  type ServiceIssue,
  validateWire,
  type WireValidation,
} from '../../protocol/index.ts';
import { finishBody, parseBody } from '../service/check.ts';
import type { ServiceCore } from '../service/core.ts';
import {
  type CodedFailure,
  envelopeOf,
  invalidRequestError,
  ServerError,
} from '../service/errors.ts';
import { answeredFailure } from './failure.ts';
import { type Authenticator, requireScope } from './auth.ts';
import type { FaultController, RequestFault } from './faults.ts';
import type { RegisteredKey } from './keys.ts';
import type { RateLimiter } from './rate-limit.ts';

export const DEFAULT_MAX_BODY_BYTES = 64 * 1024;
/** Bodies are drained up to this many times the limit before the connection is cut instead. */
const DRAIN_FACTOR = 16;

export const HEADER_REQUEST_ID = 'SVC-REQUEST-ID';
export const HEADER_IDEMPOTENT_REPLAY = 'SVC-IDEMPOTENT-REPLAY';

/** Counters the tests read to prove the common paths never reach the last-resort handler. */
export interface ServerStats {
  internalErrors: number;
  responseMismatches: number;
}

/** Handles /admin/...; throws a ServerError to refuse. */
export type AdminHandler = (
  request: IncomingMessage,
  body: Buffer,
  pathname: string,
) => { readonly status: number; readonly body: unknown };

export interface HttpDispatcherOptions {
  readonly clock: Clock;
  readonly authenticator: Authenticator;
  readonly rateLimiter: RateLimiter;
  /** Where every checked command goes: the one service core the replay venue also uses. */
  readonly core: ServiceCore;
  readonly faults: FaultController;
  readonly admin: AdminHandler;
  readonly logger: Logger;
  readonly nextRequestId: () => string;
  readonly maxBodyBytes: number;
  readonly stats: ServerStats;
}

/**
 * The core's response check for `checkResponses` (tests turn it on): every success body is
 * validated against the table's response schema; a mismatch is counted, logged and thrown.
 */
export function responseChecker(logger: Logger, stats: ServerStats) {
  return (endpoint: EndpointDefinition, body: unknown, requestId: string): void => {
    const result = endpoint.response.safeParse(body);
    if (result.success) return;
    stats.responseMismatches += 1;
    logger.error('a response does not match the protocol schema', {
      request_id: requestId,
      path: endpoint.path,
      issues: result.error.issues,
    });
    throw new Error(`response of ${endpoint.path} does not match its schema`);
  };
}

interface Outcome {
  readonly status: number;
  readonly body: unknown;
  readonly replayed: boolean;
}

/**
 * The headers of one answer, gathered while the request is handled and written with the status
 * in one `writeHead` call: a header list handed over whole is cheaper for node:http than
 * `setHeader` calls, which every answer would otherwise make four of.
 */
interface Reply {
  readonly requestId: string;
  /** Name, value, name, value, ...; at most one entry per name (see `setReplyHeader`). */
  readonly headers: string[];
}

function setReplyHeader(reply: Reply, name: string, value: string): void {
  const lowerName = name.toLowerCase();
  for (let index = 0; index < reply.headers.length; index += 2) {
    if (reply.headers[index]?.toLowerCase() === lowerName) {
      reply.headers[index + 1] = value;
      return;
    }
  }
  reply.headers.push(name, value);
}

type BodyRead = { readonly bytes: Buffer } | { readonly tooLarge: true; readonly cut: boolean };

const EMPTY = Buffer.alloc(0);

function readBody(request: IncomingMessage, limit: number): Promise<BodyRead> | BodyRead {
  const length = request.headers['content-length'];
  if (
    (length === undefined || length === '0') &&
    request.headers['transfer-encoding'] === undefined
  ) {
    request.resume();
    return { bytes: EMPTY };
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        tooLarge = true;
        chunks.length = 0;
        if (size > limit * DRAIN_FACTOR) {
          request.off('data', onData);
          resolve({ tooLarge: true, cut: true });
        }
        return;
      }
      chunks.push(chunk);
    };
    request.on('data', onData);
    request.once('end', () => {
      resolve(tooLarge ? { tooLarge: true, cut: false } : { bytes: Buffer.concat(chunks, size) });
    });
    request.once('error', () => resolve({ tooLarge: true, cut: true }));
  });
}

function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  if (value === 'application/json') return true;
  const [type = '', ...parameters] = value.split(';');
  if (type.trim().toLowerCase() !== 'application/json') return false;
  return parameters.every((parameter) => {
    const [name = '', parameterValue = ''] = parameter.split('=');
    if (name.trim().toLowerCase() !== 'charset') return true;
    return parameterValue.trim().replace(/"/g, '').toLowerCase() === 'utf-8';
  });
}

function bodyRequestId(body: unknown): string | undefined {
  const value = (body as { request_id?: unknown } | null)?.request_id;
  return typeof value === 'string' ? value : undefined;
}

function hasMembers(value: object): boolean {
  for (const _ in value) return true;
  return false;
}

// Most requests have no path parameter or no query, and the verdict on an empty object depends
// on the schema only, so it is kept per schema rather than validated again for every request.
const emptyVerdicts = new Map<z.ZodType, WireValidation<unknown>>();

function validateEmpty(schema: z.ZodType, location: 'path' | 'query'): WireValidation<unknown> {
  let verdict = emptyVerdicts.get(schema);
  if (verdict === undefined) {
    const fresh = validateWire(schema, {}, location);
    verdict = fresh.success ? { success: true, data: Object.freeze(fresh.data) } : fresh;
    emptyVerdicts.set(schema, verdict);
  }
  return verdict;
}

export function createHttpDispatcher(options: HttpDispatcherOptions) {
  const { clock, logger, stats } = options;
  const pendingTimers = new Set<TimerHandle>();
  // Matches of endpoints without path parameters, by method and path: as many as the table has
  // such endpoints, since only a match is kept.
  const staticRoutes = new Map<string, EndpointMatch>();

  function send(
    request: IncomingMessage,
    response: ServerResponse,
    reply: Reply,
    status: number,
    body: unknown,
  ): void {
    if (response.headersSent || response.destroyed) return;
    const text = JSON.stringify(body);
    response.writeHead(status, [
      ...reply.headers,
      'content-type',
      'application/json; charset=utf-8',
      'content-length',
      String(Buffer.byteLength(text)),
    ]);
    response.end(request.method === 'HEAD' ? undefined : text);
  }

  function sendFailure(
    request: IncomingMessage,
    response: ServerResponse,
    reply: Reply,
    failure: CodedFailure,
  ): void {
    if (response.headersSent || response.destroyed) return;
    for (const [name, value] of Object.entries(failure.headers)) {
      setReplyHeader(reply, name, value);
    }
    send(request, response, reply, failure.httpStatus, envelopeOf(failure, reply.requestId));
  }

  function sendError(
    request: IncomingMessage,
    response: ServerResponse,
    reply: Reply,
    error: unknown,
  ): void {
    const failure = answeredFailure(
      error,
      stats,
      logger,
      'unexpected failure while handling a request',
      {
        request_id: reply.requestId,
        method: request.method,
        path: pathOf(request),
      },
    );
    sendFailure(request, response, reply, failure);
  }

  function route(method: string, pathname: string): EndpointMatch {
    const lookup = method === 'HEAD' ? 'GET' : method;
    const routeKey = `${lookup} ${pathname}`;
    const known = staticRoutes.get(routeKey);
    if (known !== undefined) return known;
    const match = matchEndpoint(lookup, pathname);
    if (match !== null) {
      if (!hasMembers(match.params)) staticRoutes.set(routeKey, match);
      return match;
    }
    const methods: string[] = allowedMethods(pathname);
    if (pathname === '/v1/ws') methods.push('GET');
    if (methods.length === 0) {
      throw new ServerError('NOT_FOUND', `no endpoint at ${pathname}`);
    }
    if (pathname === '/v1/ws' && lookup === 'GET') {
      throw new ServerError('UPGRADE_REQUIRED', 'GET /v1/ws is a WebSocket endpoint', {
        headers: { upgrade: 'websocket', connection: 'Upgrade' },
      });
    }
    if (methods.includes('GET')) methods.push('HEAD');
    const allow = [...new Set(methods)].sort().join(', ');
    throw new ServerError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${pathname}`, {
      details: { allowed_methods: allow.split(', ') },
      headers: { allow },
    });
  }

  /**
   * The key of a signed request, then its quota and scope. Synchronous unless signatures are
   * checked on worker threads: an in-process emulator (tests, the bench) checks them here, and
   * the promises of an async path were a measurable part of a request's cost.
   */
  function authenticate(
    request: IncomingMessage,
    reply: Reply,
    endpoint: EndpointDefinition,
    body: Buffer,
  ): RegisteredKey | Promise<RegisteredKey> {
    const { authenticator } = options;
    const toVerify = {
      method: request.method ?? '',
      target: request.url ?? '',
      headers: request.headers,
      body: body.length === 0 ? null : body,
    };
    const remoteAddress = request.socket.remoteAddress;
    if (!authenticator.verifiesOnWorkers) {
      return admit(reply, endpoint, authenticator.authenticateRequest(toVerify, remoteAddress));
    }
    return authenticator
      .authenticateRequestAsync(toVerify, remoteAddress)
      .then((key) => admit(reply, endpoint, key));
  }

  /** The key's quota (429) and the endpoint's scope, for an authenticated key. */
  function admit(reply: Reply, endpoint: EndpointDefinition, key: RegisteredKey): RegisteredKey {
    const decision = options.rateLimiter.take(key.keyId, clock.now());
    reply.headers.push(
      'RateLimit-Limit',
      String(decision.limit),
      'RateLimit-Remaining',
      String(decision.remaining),
      'RateLimit-Reset',
      String(decision.resetSeconds),
    );
    if (!decision.allowed) {
      throw new ServerError('RATE_LIMITED', 'this key exceeded its request quota', {
        details: {
          limit: decision.limit,
          reset_seconds: decision.resetSeconds,
        },
        headers: { 'retry-after': String(decision.resetSeconds) },
      });
    }
    requireScope(key, endpoint.scope, options.authenticator.profile);
    return key;
  }

  /** Path parameters, query and body, with every issue of the three at once. */
  function validate(
    request: IncomingMessage,
    match: EndpointMatch,
    queryText: string,
    bytes: Buffer,
  ): { params: unknown; query: unknown; body: unknown } {
    const endpoint: EndpointDefinition = match.endpoint;
    const issues: ServiceIssue[] = [];
    const params = hasMembers(match.params)
      ? validateWire(endpoint.pathParams, match.params, 'path')
      : validateEmpty(endpoint.pathParams, 'path');
    if (!params.success) issues.push(...params.issues);
    const querySchema = endpoint.query ?? EmptyQuery;
    const query =
      queryText === ''
        ? validateEmpty(querySchema, 'query')
        : validateWire(querySchema, queryRecord(new URLSearchParams(queryText)), 'query');
    if (!query.success) issues.push(...query.issues);
    if (
      endpoint.body !== null &&
      bytes.length > 0 &&
      !isJsonContentType(request.headers['content-type'])
    ) {
      throw new ServerError(
        'UNSUPPORTED_MEDIA_TYPE',
        'request bodies must be sent as application/json (UTF-8)',
      );
    }
    const body = parseBody(endpoint, bytes, issues);
    if (issues.length > 0) throw invalidRequestError(issues);
    return {
      params: params.success ? params.data : {},
      query: query.success ? query.data : {},
      body: finishBody(match.name, body),
    };
  }

  function answer(
    request: IncomingMessage,
    response: ServerResponse,
    reply: Reply,
    outcome: Outcome,
  ): void {
    if (outcome.replayed) setReplyHeader(reply, HEADER_IDEMPOTENT_REPLAY, 'true');
    send(request, response, reply, outcome.status, outcome.body);
  }

  function applyFault(
    request: IncomingMessage,
    response: ServerResponse,
    reply: Reply,
    fault: RequestFault,
    outcome: Outcome | null,
  ): void {
    switch (fault.kind) {
      case 'fail': {
        const headers: Record<string, string> = {};
        if (fault.code === 'RATE_LIMITED') {
          headers['retry-after'] = String(fault.retryAfterSeconds);
          setReplyHeader(reply, 'RateLimit-Remaining', '0');
          setReplyHeader(reply, 'RateLimit-Reset', String(fault.retryAfterSeconds));
        }
        sendFailure(request, response, reply, {
          code: fault.code,
          message:
            fault.code === 'ORDER_CONFIRMATION_PENDING'
              ? 'the command is still being confirmed; read it again shortly'
              : fault.code === 'RATE_LIMITED'
                ? 'this key exceeded its request quota'
                : 'a required trading service is temporarily unavailable',
          details: { injected: true },
          retryable: true,
          httpStatus: errorStatus[fault.code],
          headers,
        });
        return;
      }
      case 'drop':
        logger.info('dropping the response as instructed by a test fault', {
          request_id: reply.requestId,
        });
        request.socket.destroy();
        return;
      case 'delay': {
        if (outcome === null) return;
        const handle = clock.setTimeout(() => {
          pendingTimers.delete(handle);
          if (!request.socket.destroyed) answer(request, response, reply, outcome);
        }, fault.delayMs);
        pendingTimers.add(handle);
        return;
      }
    }
  }

  async function dispatch(
    request: IncomingMessage,
    response: ServerResponse,
    reply: Reply,
  ): Promise<void> {
    const target = request.url ?? '';
    const method = request.method ?? '';
    if (!target.startsWith('/')) {
      request.resume();
      throw new ServerError('BAD_REQUEST', 'the request target must be a path');
    }
    const queryStart = target.indexOf('?');
    const pathname = queryStart < 0 ? target : target.slice(0, queryStart);
    const queryText = queryStart < 0 ? '' : target.slice(queryStart + 1);
    const isAdmin = pathname === '/admin' || pathname.startsWith('/admin/');
    const match = isAdmin ? null : route(method, pathname);
    const read = readBody(request, options.maxBodyBytes);
    const body = read instanceof Promise ? await read : read;
    if ('tooLarge' in body) {
      if (body.cut) setReplyHeader(reply, 'connection', 'close');
      throw new ServerError(
        'PAYLOAD_TOO_LARGE',
        `request bodies are limited to ${options.maxBodyBytes} bytes`,
        { details: { limit_bytes: options.maxBodyBytes } },
      );
    }
    if (match === null) {
      const answer = options.admin(request, body.bytes, pathname);
      send(request, response, reply, answer.status, answer.body);
      return;
    }
    const endpoint: EndpointDefinition = match.endpoint;
    let key: RegisteredKey | null = null;
    if (endpoint.auth === 'signed') {
      const authenticated = authenticate(request, reply, endpoint, body.bytes);
      key = authenticated instanceof Promise ? await authenticated : authenticated;
    }
    const valid = validate(request, match, queryText, body.bytes);
    const fault = options.faults.takeRequestFault(
      match.name,
      endpoint.mutation,
      bodyRequestId(valid.body),
    );
    if (fault !== null && fault.kind === 'fail' && !fault.commit) {
      applyFault(request, response, reply, fault, null);
      return;
    }
    const outcome = options.core.execute({
      endpoint: match.name,
      account: key,
      params: valid.params as PathParamsOf<EndpointName>,
      query: valid.query,
      body: valid.body as BodyOf<EndpointName> | null,
      traceId: reply.requestId,
    });
    if (outcome.refused) {
      send(request, response, reply, outcome.status, outcome.body);
      return;
    }
    if (fault !== null) {
      applyFault(request, response, reply, fault, outcome);
      return;
    }
    answer(request, response, reply, outcome);
  }

  return {
    handle(request: IncomingMessage, response: ServerResponse): void {
      const requestId = options.nextRequestId();
      const reply: Reply = { requestId, headers: [HEADER_REQUEST_ID, requestId] };
      try {
        dispatch(request, response, reply).catch((error: unknown) =>
          sendError(request, response, reply, error),
        );
      } catch (error) {
        sendError(request, response, reply, error);
      }
    },
    /** Clears delayed responses (on close). */
    close(): void {
      for (const handle of pendingTimers) clock.clearTimeout(handle);
      pendingTimers.clear();
    },
  };
}

function pathOf(request: IncomingMessage): string {
  const target = request.url ?? '';
  const queryStart = target.indexOf('?');
  return queryStart < 0 ? target : target.slice(0, queryStart);
}
