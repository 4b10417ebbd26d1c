/**
 * The one command module, below the client and the runtime: the command types, the serializer
 * and the prepared command, from the journal to the wire. A command is checked against its
 * endpoint's schema (defaults applied), normalized and written as JSON text; its UTF-8 bytes
 * and their SHA-256 are made once, when first read. The journal holds those bytes, the client
 * signs `bodySha256` as it stands and sends them, an in-process venue takes the checked body,
 * and `restoreCommand` rebuilds the same command from journaled bytes without re-serializing.
 * The client's `prepare` / `fromStored*` and every `ExecutionVenue` call these two functions,
 * so a body journaled by one process is byte-identical to what any venue would send for it.
 */
import { isPaperbotError, PaperbotError } from '../core/errors.ts';
import {
  type AmendOrderRequestInput,
  type BatchOrderRequestInput,
  type BodyOf,
  buildPath,
  type CancelAllAfterRequest,
  type CancelAllRequestInput,
  type CancelOrderRequest,
  type ClosePositionRequestInput,
  type EndpointName,
  type EndpointsWithBody,
  endpoints,
  formatServiceIssues,
  invalidJsonIssue,
  matchEndpoint,
  normalizeAmendOrderRequest,
  normalizeBatchOrderRequest,
  normalizeClosePositionRequest,
  normalizeOrderRequest,
  type OrderRequest,
  type OrderRequestInput,
  type ServiceIssue,
  validateWire,
} from '../protocol/index.ts';
import { bodySha256Hex } from './canonical.ts';
import {
  type BodyTemplate,
  bodyObject,
  cachedTemplate,
  definedFields,
  fillTemplate,
  ownValues,
  rememberCheckedBody,
} from './checked-bodies.ts';

/** The endpoints the runtime's execution side sends bodies to (batch is not used by it). */
export const COMMAND_ENDPOINTS = [
  'placeOrder',
  'simulateOrder',
  'amendOrder',
  'cancelOrder',
  'cancelAllOrders',
  'closePosition',
  'setCancelAllAfter',
] as const satisfies readonly EndpointName[];
export type CommandEndpoint = (typeof COMMAND_ENDPOINTS)[number];

export function isCommandEndpoint(value: string): value is CommandEndpoint {
  return (COMMAND_ENDPOINTS as readonly string[]).includes(value);
}

/** A command before serialization: the endpoint, its path parameters and its body. */
export type VenueCommand =
  | { readonly endpoint: 'placeOrder'; readonly body: OrderRequestInput }
  | { readonly endpoint: 'simulateOrder'; readonly body: OrderRequestInput }
  | {
      readonly endpoint: 'amendOrder';
      readonly params: { readonly order_id: string };
      readonly body: AmendOrderRequestInput;
    }
  | {
      readonly endpoint: 'cancelOrder';
      readonly params: { readonly order_id: string };
      readonly body: CancelOrderRequest;
    }
  | {
      readonly endpoint: 'cancelAllOrders';
      readonly body: CancelAllRequestInput;
    }
  | {
      readonly endpoint: 'closePosition';
      readonly params: { readonly position_id: string };
      readonly body: ClosePositionRequestInput;
    }
  | {
      readonly endpoint: 'setCancelAllAfter';
      readonly body: CancelAllAfterRequest;
    };

export type VenueCommandOf<E extends CommandEndpoint> = Extract<VenueCommand, { endpoint: E }>;

/** Every command the serializer takes: the runtime's, and a batch (the client's alone). */
export type Command =
  VenueCommand | { readonly endpoint: 'placeBatch'; readonly body: BatchOrderRequestInput };
export type CommandOf<E extends EndpointsWithBody> = Extract<Command, { endpoint: E }>;

export interface PreparedCommand<E extends EndpointsWithBody = EndpointsWithBody> {
  readonly endpoint: E;
  /** The request path with its parameters encoded, without a prefix or a query string. */
  readonly path: string;
  /** The body's `request_id`. */
  readonly requestId: string;
  /** The checked body the bytes encode (defaults applied): handed over in process, never re-parsed. */
  readonly body: BodyOf<E>;
  /** The exact UTF-8 JSON body bytes: journaled, signed and sent, and resent unchanged. */
  readonly bodyBytes: Uint8Array;
  /** Lower-case hex SHA-256 of `bodyBytes` (the value the SVC1 signing input carries). */
  readonly bodySha256: string;
}

/**
 * A command refused before anything is sent: `INVALID_COMMAND`, with the endpoint and the
 * service's issue list (`loc` starting with `body`) in `details`; the client turns it into its
 * own `INVALID_REQUEST`.
 */
export function invalidCommand(
  endpoint: EndpointsWithBody,
  message: string,
  issues: readonly ServiceIssue[] = [],
): PaperbotError {
  const listed = issues.length === 0 ? '' : ` (${formatServiceIssues(issues)})`;
  return new PaperbotError('INVALID_COMMAND', `${endpoint}: ${message}${listed}`, {
    details: { endpoint, issues },
  });
}

function checked<E extends EndpointsWithBody>(endpoint: E, body: unknown): BodyOf<E> {
  const result = validateWire(endpoints[endpoint].body, body, 'body');
  if (!result.success) {
    throw invalidCommand(endpoint, 'the body does not match the endpoint contract', result.issues);
  }
  return result.data as BodyOf<E>;
}

/** The paths of endpoints without path parameters, built once. */
const fixedPaths = new Map<EndpointsWithBody, string>();

function commandPath(command: Command): string {
  switch (command.endpoint) {
    case 'amendOrder':
    case 'cancelOrder':
      return buildPath(command.endpoint, { order_id: command.params.order_id });
    case 'closePosition':
      return buildPath(command.endpoint, { position_id: command.params.position_id });
    default: {
      let path = fixedPaths.get(command.endpoint);
      if (path === undefined) {
        path = buildPath(command.endpoint);
        fixedPaths.set(command.endpoint, path);
      }
      return path;
    }
  }
}

/** The body checked against its endpoint's schema, in its wire form (canonical decimals). */
function checkedWireBody(command: Command): { request_id: string } {
  switch (command.endpoint) {
    case 'placeOrder':
    case 'simulateOrder':
      return normalizeOrderRequest(checked(command.endpoint, command.body) as OrderRequest);
    case 'amendOrder':
      return normalizeAmendOrderRequest(checked(command.endpoint, command.body));
    case 'closePosition':
      return normalizeClosePositionRequest(checked(command.endpoint, command.body));
    case 'placeBatch':
      return normalizeBatchOrderRequest(checked(command.endpoint, command.body));
    case 'cancelOrder':
    case 'cancelAllOrders':
    case 'setCancelAllAfter':
      return checked(command.endpoint, command.body);
  }
}

/**
 * The serializer: validates the body against the endpoint's schema (defaults applied),
 * normalizes numbers to canonical decimal strings and encodes JSON as UTF-8, once. Path
 * parameters are encoded as given (the client checks them with `checkPathParams` first).
 * Throws `INVALID_COMMAND` with `details.issues`.
 */
export function prepareCommand<E extends EndpointsWithBody>(
  command: CommandOf<E>,
): PreparedCommand<E> {
  try {
    return preparedOf(command);
  } catch (error) {
    if (isPaperbotError(error)) throw error;
    throw invalidCommand(
      command.endpoint,
      error instanceof Error ? error.message : 'the command cannot be built',
    );
  }
}

/**
 * For a body of a shape checked before, its template and own values to write the text from
 * when it is first needed; else the checked text itself (and its template is remembered).
 */
function preparedOf<E extends EndpointsWithBody>(command: CommandOf<E>): PreparedCommand<E> {
  const endpoint = command.endpoint as E;
  const source = command.body as Readonly<Record<string, unknown>>;
  const template = cachedTemplate(endpoint, source);
  if (template !== undefined) {
    return new SerializedCommand(
      endpoint,
      commandPath(command),
      source.request_id as string,
      bodyObject(template, source) as BodyOf<E>,
      template,
      ownValues(template, source),
    );
  }
  const path = commandPath(command);
  const built = checkedWireBody(command) as Readonly<Record<string, unknown>>;
  const text = JSON.stringify(built);
  rememberCheckedBody(endpoint, source, built, text);
  return new SerializedCommand(
    endpoint,
    path,
    built.request_id as string,
    definedFields(built) as BodyOf<E>,
    null,
    text,
  );
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * The prepared command. Its JSON text (for a body of a shape checked before), UTF-8 bytes and
 * their SHA-256 are made together when the bytes or the hash are first read, then kept: the
 * live journal reads them before anything is sent, and a resend sends the same ones; a replay,
 * whose venue takes the checked body and whose journal is in memory, never reads them. The
 * text is final here, so the bytes are those an eager encoding would have made, and they are
 * hashed before anyone holds them (bytes altered later fail the signature check). Restored
 * bytes are hashed as they are taken. A class, frozen: an object literal with getters costs
 * about fifteen times as much to make.
 */
class SerializedCommand<E extends EndpointsWithBody> implements PreparedCommand<E> {
  readonly endpoint: E;
  readonly path: string;
  readonly requestId: string;
  readonly body: BodyOf<E>;
  /** The template the text is written from, with `#values`; null when `#values` is the text. */
  #template: BodyTemplate | null;
  #values: readonly unknown[] | string;
  #bytes: Uint8Array | undefined;
  #sha256 = '';

  /**
   * `values`: the template's own values, or the text itself when `template` is null; or the
   * bytes themselves (a restored command), hashed now.
   */
  constructor(
    endpoint: E,
    path: string,
    requestId: string,
    body: BodyOf<E>,
    template: BodyTemplate | null,
    values: readonly unknown[] | string | Uint8Array,
  ) {
    this.endpoint = endpoint;
    this.path = path;
    this.requestId = requestId;
    this.body = body;
    this.#template = template;
    if (values instanceof Uint8Array) {
      this.#values = '';
      this.#bytes = values;
      this.#sha256 = bodySha256Hex(values);
    } else {
      this.#values = values;
    }
    Object.freeze(this);
  }

  get bodyBytes(): Uint8Array {
    return this.#bytes ?? this.#make();
  }

  get bodySha256(): string {
    if (this.#bytes === undefined) this.#make();
    return this.#sha256;
  }

  #make(): Uint8Array {
    const template = this.#template;
    const values = this.#values;
    const bytes = encoder.encode(
      template === null ? (values as string) : fillTemplate(template, values as unknown[]),
    );
    this.#template = null;
    this.#values = '';
    this.#sha256 = bodySha256Hex(bytes);
    this.#bytes = bytes;
    return bytes;
  }
}

/**
 * Rebuilds a prepared command from journaled bytes. Checks that the path addresses `endpoint`
 * and that the bytes are still a valid body (a damaged journal must not be sent), but keeps the
 * bytes exactly as stored (a copy of them), and the body as they encode it.
 */
export function restoreCommand<E extends EndpointsWithBody>(
  endpoint: E,
  path: string,
  bodyBytes: Uint8Array,
): PreparedCommand<E> {
  const match = matchEndpoint(endpoints[endpoint].method, path);
  if (match === null || match.name !== endpoint) {
    throw invalidCommand(endpoint, `the journaled path ${path} does not address this endpoint`);
  }
  let body: unknown;
  try {
    body = JSON.parse(decoder.decode(bodyBytes));
  } catch {
    throw invalidCommand(endpoint, 'the journaled body is not UTF-8 JSON', [invalidJsonIssue()]);
  }
  const result = validateWire(endpoints[endpoint].body, body, 'body');
  if (!result.success) {
    throw invalidCommand(
      endpoint,
      'the journaled body no longer matches the endpoint contract',
      result.issues,
    );
  }
  const requestId = (body as { request_id?: unknown }).request_id;
  if (typeof requestId !== 'string') {
    throw invalidCommand(endpoint, 'the journaled body has no request_id');
  }
  return new SerializedCommand(
    endpoint,
    path,
    requestId,
    body as BodyOf<E>,
    null,
    Uint8Array.from(bodyBytes),
  );
}
