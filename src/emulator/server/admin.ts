/**
 * The admin API under /admin/v1/: key registration and revocation (what `paperbot keys create`
 * and `keys revoke` call) and the test controls. JSON bodies, `Authorization: Bearer <token>`.
 * Without the token every admin path answers 401 ADMIN_UNAUTHORIZED, unknown ones included, so
 * the surface cannot be probed. The token is compared in constant time and never logged.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import {
  type EndpointName,
  endpointNames,
  invalidJsonIssue,
  RouteHealth,
  validateWire,
} from '../../protocol/index.ts';
import type { Exchange } from '../engine/exchange.ts';
import type { EmulatorControls } from './controls.ts';
import { invalidRequestError, ServerError } from '../service/errors.ts';
import { FAILURE_CODES } from './faults.ts';
import { type KeyRegistry, KeySettings, type RegisteredKey } from './keys.ts';

export const ADMIN_PREFIX = '/admin/v1';
/** The file in the data dir that holds the admin token (mode 0600). */
export const ADMIN_TOKEN_FILE = 'admin-token';

export const CreateKeyRequest = z.strictObject({
  ...KeySettings.shape,
  /** Bind the key to this existing account; a new account when null. */
  account_id: z.string().min(1).max(128).nullable().default(null),
  /** Retire `account_id` (its keys stop working) and bind the key to a fresh account. */
  reset_account: z.boolean().default(false),
});
export type CreateKeyRequest = z.output<typeof CreateKeyRequest>;
export type CreateKeyRequestInput = z.input<typeof CreateKeyRequest>;

export interface CreatedKey {
  readonly key_id: string;
  readonly account_id: string;
  /** The retired account when the key came with a reset, else null. */
  readonly replaced_account_id: string | null;
  readonly scopes: string[];
  readonly created_at: string;
  readonly expires_at: string | null;
  readonly allow_ip: string[];
  readonly max_order_notional: string | null;
  readonly max_open_orders: number | null;
  readonly api_base_url: string;
  readonly ws_url: string;
}

export interface KeyService {
  create(request: CreateKeyRequest): CreatedKey;
  revoke(keyId: string): RegisteredKey;
}

export function createKeyService(parts: {
  readonly exchange: Exchange;
  readonly registry: KeyRegistry;
  readonly now: () => number;
  readonly urls: () => { readonly baseUrl: string; readonly wsUrl: string };
}): KeyService {
  const { exchange, registry, now } = parts;
  return {
    create(request) {
      let accountId: string;
      let replaced: string | null = null;
      if (request.account_id !== null && !exchange.hasAccount(request.account_id)) {
        throw new ServerError('ACCOUNT_NOT_FOUND', `no active account ${request.account_id}`, {
          details: { account_id: request.account_id },
        });
      }
      if (request.reset_account) {
        if (request.account_id === null) {
          throw invalidRequestError([
            {
              type: 'missing',
              loc: ['body', 'account_id'],
              msg: 'Field required when reset_account is true',
            },
          ]);
        }
        replaced = request.account_id;
        accountId = exchange.resetAccount(request.account_id);
        registry.revokeAccountKeys(replaced, 'account_reset', now());
      } else {
        accountId = request.account_id ?? exchange.createAccount();
      }
      const key = registry.register(accountId, request, now());
      const urls = parts.urls();
      return {
        key_id: key.keyId,
        account_id: key.accountId,
        replaced_account_id: replaced,
        scopes: [...key.record.scopes],
        created_at: key.record.created_at,
        expires_at: key.record.expires_at,
        allow_ip: [...key.record.allow_ip],
        max_order_notional: key.record.max_order_notional,
        max_open_orders: key.record.max_open_orders,
        api_base_url: urls.baseUrl,
        ws_url: urls.wsUrl,
      };
    },
    revoke(keyId) {
      const key = registry.revoke(keyId, 'revoked', now());
      if (key === undefined) {
        throw new ServerError('KEY_NOT_FOUND', `no key ${keyId}`, {
          details: { key_id: keyId },
        });
      }
      return key;
    },
  };
}

const EndpointNameSchema = z.custom<EndpointName>(
  (value) => typeof value === 'string' && (endpointNames as string[]).includes(value),
  {
    error: 'Input should be an endpoint name of the protocol table',
    params: { type: 'enum' },
  },
);

const matchFields = {
  endpoint: EndpointNameSchema.optional(),
  request_id: z.string().min(1).optional(),
  count: z.int().min(1).optional(),
};

export const FaultRequest = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('fail'),
    code: z.enum(FAILURE_CODES as [string, ...string[]]),
    commit: z.boolean().optional(),
    retry_after_seconds: z.int().min(0).optional(),
    ...matchFields,
  }),
  z.strictObject({ kind: z.literal('drop_response'), ...matchFields }),
  z.strictObject({
    kind: z.literal('delay_response'),
    delay_ms: z.int().min(0),
    ...matchFields,
  }),
  z.strictObject({
    kind: z.enum(['drop_frames', 'duplicate_frames']),
    count: z.int().min(1).optional(),
    probability: z.number().min(0).max(1).optional(),
  }),
]);
export type FaultRequest = z.input<typeof FaultRequest>;

const FeedRequest = z.strictObject({
  paused: z.boolean(),
  market_id: z.string().min(1).nullable().default(null),
});
const RouteRequest = z.strictObject({ health: RouteHealth });
const DisconnectRequest = z.strictObject({
  abrupt: z.boolean().default(false),
});
const FireRequest = z.strictObject({
  account_id: z.string().min(1).nullable().default(null),
});
const RateLimitRequest = z.strictObject({
  quota: z.int().min(1),
  window_ms: z.int().min(1),
});

export interface AdminApiOptions {
  readonly token: string;
  readonly keys: KeyService;
  readonly registry: KeyRegistry;
  readonly controls: EmulatorControls;
}

export interface AdminAnswer {
  readonly status: number;
  readonly body: unknown;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

function parseBody<Schema extends z.ZodType>(
  schema: Schema,
  request: IncomingMessage,
  bytes: Buffer,
): z.output<Schema> {
  let json: unknown = {};
  if (bytes.length > 0) {
    const type = request.headers['content-type'] ?? '';
    if (!/^application\/json\s*(;|$)/i.test(type)) {
      throw new ServerError('UNSUPPORTED_MEDIA_TYPE', 'admin bodies must be application/json');
    }
    try {
      json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
    } catch {
      throw invalidRequestError([invalidJsonIssue()]);
    }
  }
  const result = validateWire(schema, json, 'body');
  if (!result.success) throw invalidRequestError(result.issues);
  return result.data;
}

export function createAdminApi(options: AdminApiOptions) {
  const expected = digest(options.token);
  const { controls } = options;

  function authorize(request: IncomingMessage): void {
    const header = request.headers.authorization ?? '';
    const match = /^Bearer (.+)$/.exec(header);
    const given = digest(match?.[1] ?? '');
    if (match === null || !timingSafeEqual(given, expected)) {
      throw new ServerError('ADMIN_UNAUTHORIZED', 'the admin API needs the admin token', {
        headers: { 'www-authenticate': 'Bearer' },
      });
    }
  }

  function route(
    method: string,
    path: string,
    request: IncomingMessage,
    body: Buffer,
  ): AdminAnswer {
    const ok = (value: unknown, status = 200): AdminAnswer => ({
      status,
      body: value,
    });
    const segments = path.slice(ADMIN_PREFIX.length).split('/').slice(1);
    const [first, second, third] = segments;
    const at = (...expected: string[]) =>
      segments.length === expected.length &&
      expected.every((part, index) => part === '*' || part === segments[index]);
    if (at('keys')) {
      if (method === 'GET') return ok({ data: options.registry.list().map((key) => key.record) });
      if (method === 'POST') {
        return ok(options.keys.create(parseBody(CreateKeyRequest, request, body)), 201);
      }
    } else if (at('keys', '*', 'revoke') && first === 'keys' && third === 'revoke') {
      if (method === 'POST') {
        parseBody(z.strictObject({}), request, body);
        const key = options.keys.revoke(decodeURIComponent(second ?? ''));
        return ok({ key_id: key.keyId, revoked_at: key.record.revoked_at });
      }
    } else if (at('controls', 'faults')) {
      if (method === 'GET') return ok(controls.faults());
      if (method === 'DELETE') {
        controls.clearFaults();
        return ok(controls.faults());
      }
      if (method === 'POST') {
        applyFault(controls, parseBody(FaultRequest, request, body));
        return ok(controls.faults());
      }
    } else if (at('controls', 'feed')) {
      if (method === 'POST') {
        const feed = parseBody(FeedRequest, request, body);
        const marketId = feed.market_id ?? undefined;
        if (feed.paused) controls.pauseFeed(marketId);
        else controls.resumeFeed(marketId);
        return ok({ paused: feed.paused, market_id: feed.market_id });
      }
    } else if (at('controls', 'route')) {
      if (method === 'POST') {
        const route = parseBody(RouteRequest, request, body);
        controls.setRouteHealth(route.health);
        return ok({ health: route.health });
      }
    } else if (at('controls', 'websockets', 'disconnect')) {
      if (method === 'POST') {
        const disconnect = parseBody(DisconnectRequest, request, body);
        return ok({
          disconnected: controls.disconnectWebSockets({
            abrupt: disconnect.abrupt,
          }),
        });
      }
    } else if (at('controls', 'cancel-all-after', 'fire')) {
      if (method === 'POST') {
        const fire = parseBody(FireRequest, request, body);
        controls.fireCancelAllAfter(fire.account_id ?? undefined);
        return ok({ fired: true, account_id: fire.account_id });
      }
    } else if (at('controls', 'rate-limit')) {
      if (method === 'PUT') {
        const limit = parseBody(RateLimitRequest, request, body);
        controls.setRateLimit({
          quota: limit.quota,
          windowMs: limit.window_ms,
        });
        return ok({ quota: limit.quota, window_ms: limit.window_ms });
      }
    } else {
      throw new ServerError('NOT_FOUND', `no admin endpoint at ${path}`);
    }
    throw new ServerError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${path}`);
  }

  return (request: IncomingMessage, body: Buffer, path: string): AdminAnswer => {
    authorize(request);
    if (!path.startsWith(`${ADMIN_PREFIX}/`)) {
      throw new ServerError('NOT_FOUND', `no admin endpoint at ${path}`);
    }
    return route(request.method ?? '', path, request, body);
  };
}

function applyFault(controls: EmulatorControls, fault: z.output<typeof FaultRequest>): void {
  const match = (value: {
    endpoint?: EndpointName | undefined;
    request_id?: string | undefined;
    count?: number | undefined;
  }) => ({
    ...(value.endpoint === undefined ? {} : { endpoint: value.endpoint }),
    ...(value.request_id === undefined ? {} : { requestId: value.request_id }),
    ...(value.count === undefined ? {} : { count: value.count }),
  });
  switch (fault.kind) {
    case 'fail':
      controls.failRequests({
        ...match(fault),
        code: fault.code as (typeof FAILURE_CODES)[number],
        ...(fault.commit === undefined ? {} : { commit: fault.commit }),
        ...(fault.retry_after_seconds === undefined
          ? {}
          : { retryAfterSeconds: fault.retry_after_seconds }),
      });
      return;
    case 'drop_response':
      controls.dropResponses(match(fault));
      return;
    case 'delay_response':
      controls.delayResponses({ ...match(fault), delayMs: fault.delay_ms });
      return;
    case 'drop_frames':
    case 'duplicate_frames': {
      const options = {
        ...(fault.count === undefined ? {} : { count: fault.count }),
        ...(fault.probability === undefined ? {} : { probability: fault.probability }),
      };
      if (fault.kind === 'drop_frames') controls.dropFrames(options);
      else controls.duplicateFrames(options);
      return;
    }
  }
}
