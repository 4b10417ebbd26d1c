/**
 * Error envelope, error codes with their HTTP statuses, the 422 validation-failure body, and the
 * translation of zod issues into the service's `details.issues` list. The emulator answers with
 * `toServiceIssues` and the client runs the same function locally, so a request refused on
 * either side carries the same issues.
 */
import { z } from 'zod';
import { JsonObject } from './primitives.ts';

export const ErrorCode = z.enum([
  'INVALID_SIGNATURE',
  'KEY_REVOKED',
  'KEY_EXPIRED',
  'SCOPE_REQUIRED',
  'IP_NOT_ALLOWED',
  'RISK_LIMIT_EXCEEDED',
  'UNKNOWN_MARKET',
  'ORDER_NOT_FOUND',
  'POSITION_NOT_FOUND',
  'IDEMPOTENCY_CONFLICT',
  'INSUFFICIENT_READY_CAPITAL',
  'MARGIN_MODE_IN_USE',
  'ORDER_CONFIRMATION_PENDING',
  'ROUTE_NOT_READY',
  'INVALID_REQUEST',
  'UNSUPPORTED_ORDER',
  'RATE_LIMITED',
  'EXECUTION_UNAVAILABLE',
]);
export type ErrorCode = z.infer<typeof ErrorCode>;

export const errorStatus: Readonly<Record<ErrorCode, number>> = {
  INVALID_SIGNATURE: 401,
  KEY_REVOKED: 401,
  KEY_EXPIRED: 401,
  SCOPE_REQUIRED: 403,
  IP_NOT_ALLOWED: 403,
  RISK_LIMIT_EXCEEDED: 403,
  UNKNOWN_MARKET: 404,
  ORDER_NOT_FOUND: 404,
  POSITION_NOT_FOUND: 404,
  IDEMPOTENCY_CONFLICT: 409,
  INSUFFICIENT_READY_CAPITAL: 409,
  MARGIN_MODE_IN_USE: 409,
  ORDER_CONFIRMATION_PENDING: 409,
  ROUTE_NOT_READY: 409,
  INVALID_REQUEST: 422,
  UNSUPPORTED_ORDER: 422,
  RATE_LIMITED: 429,
  EXECUTION_UNAVAILABLE: 503,
};

/**
 * The `retryable` flag the project emits for each code: true only where the same request can
 * succeed later without any change by the caller.
 */
export const errorRetryable: Readonly<Record<ErrorCode, boolean>> = {
  INVALID_SIGNATURE: false,
  KEY_REVOKED: false,
  KEY_EXPIRED: false,
  SCOPE_REQUIRED: false,
  IP_NOT_ALLOWED: false,
  RISK_LIMIT_EXCEEDED: false,
  UNKNOWN_MARKET: false,
  ORDER_NOT_FOUND: false,
  POSITION_NOT_FOUND: false,
  IDEMPOTENCY_CONFLICT: false,
  INSUFFICIENT_READY_CAPITAL: false,
  MARGIN_MODE_IN_USE: false,
  ORDER_CONFIRMATION_PENDING: true,
  ROUTE_NOT_READY: true,
  INVALID_REQUEST: false,
  UNSUPPORTED_ORDER: false,
  RATE_LIMITED: true,
  EXECUTION_UNAVAILABLE: true,
};

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(errorStatus, value);
}

/**
 * Codes outside the interface's table that the emulator uses for requests no endpoint matches.
 * Clients treat any code they do not know as not retryable.
 */
export const RoutingErrorCode = z.enum(['NOT_FOUND', 'METHOD_NOT_ALLOWED']);
export type RoutingErrorCode = z.infer<typeof RoutingErrorCode>;

export const routingErrorStatus: Readonly<Record<RoutingErrorCode, number>> = {
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
};

export const IssueLocation = z.enum(['body', 'query', 'path']);
export type IssueLocation = z.infer<typeof IssueLocation>;

const LocPart = z.union([z.string(), z.int()]);

/** One item of `details.issues` of an INVALID_REQUEST error. */
export const ServiceIssue = z.strictObject({
  type: z.string(),
  loc: z.tuple([IssueLocation], LocPart),
  msg: z.string(),
});
export type ServiceIssue = z.infer<typeof ServiceIssue>;

export const InvalidRequestDetails = z.strictObject({
  issues: z.array(ServiceIssue).min(1),
});
export type InvalidRequestDetails = z.infer<typeof InvalidRequestDetails>;

/**
 * `code` stays a string so that a code the project does not know still parses; branch with
 * `isErrorCode`. `details` is any object: INVALID_REQUEST fills it per InvalidRequestDetails,
 * UNSUPPORTED_ORDER with `{field}`.
 */
export const ErrorBody = z.strictObject({
  code: z.string(),
  message: z.string(),
  request_id: z.string(),
  retryable: z.boolean(),
  details: JsonObject,
});
export type ErrorBody = z.infer<typeof ErrorBody>;

export const ErrorEnvelope = z.strictObject({ error: ErrorBody });
export type ErrorEnvelope = z.infer<typeof ErrorEnvelope>;

/** The error object of a WebSocket error frame: the HTTP error body without `request_id`. */
export const FrameErrorBody = ErrorBody.omit({ request_id: true });
export type FrameErrorBody = z.infer<typeof FrameErrorBody>;

/** The alternative 422 body the interface's schema describes (`{detail: [...]}`). */
export const ValidationFailureItem = z.strictObject({
  loc: z.array(LocPart),
  msg: z.string(),
  type: z.string(),
  input: z.unknown().optional(),
  ctx: JsonObject.optional(),
});
export type ValidationFailureItem = z.infer<typeof ValidationFailureItem>;

export const ValidationFailureBody = z.strictObject({
  detail: z.array(ValidationFailureItem),
});
export type ValidationFailureBody = z.infer<typeof ValidationFailureBody>;

export interface ErrorEnvelopeOptions {
  readonly code: ErrorCode;
  readonly message: string;
  /** The server identifier of the failed HTTP request (also sent as SVC-REQUEST-ID). */
  readonly requestId: string;
  readonly details?: JsonObject;
  /** Defaults to `errorRetryable[code]`. */
  readonly retryable?: boolean;
}

export function buildErrorEnvelope(options: ErrorEnvelopeOptions): ErrorEnvelope {
  return {
    error: {
      code: options.code,
      message: options.message,
      request_id: options.requestId,
      retryable: options.retryable ?? errorRetryable[options.code],
      details: options.details ?? {},
    },
  };
}

/** Issues an error message names; the rest are counted (all stay in `details.issues`). */
export const ISSUES_NAMED = 3;

/**
 * The one way an issue list reads in a message (the client's, the runtime's serializer's and the
 * emulator's INVALID_REQUEST alike): `loc: msg` for the first `ISSUES_NAMED`, then how many
 * more. `details.issues` carries the whole list; this line is for a person.
 */
export function formatServiceIssues(issues: readonly ServiceIssue[]): string {
  let text = '';
  const named = Math.min(issues.length, ISSUES_NAMED);
  for (let index = 0; index < named; index++) {
    const issue = issues[index]!;
    text += `${index === 0 ? '' : '; '}${issue.loc.join('.')}: ${issue.msg}`;
  }
  return issues.length > named ? `${text}; and ${issues.length - named} more` : text;
}

/** The issue for a request body that is not valid JSON. */
export function invalidJsonIssue(): ServiceIssue {
  return { type: 'json_invalid', loc: ['body'], msg: 'JSON decode error' };
}

type Issue = z.core.$ZodIssue;

const NO_VALUE: unique symbol = Symbol('no value');

function lookup(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const part of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[part];
  }
  return value;
}

function issueValue(issue: Issue, hasInput: boolean, input: unknown): unknown {
  if ('input' in issue) return issue.input;
  return hasInput ? lookup(input, issue.path) : NO_VALUE;
}

function quote(value: unknown): string {
  return typeof value === 'string' ? `'${value}'` : String(value);
}

function listOf(values: readonly unknown[]): string {
  const quoted = values.map(quote);
  if (quoted.length <= 1) return quoted.join('');
  return `${quoted.slice(0, -1).join(', ')} or ${quoted[quoted.length - 1]}`;
}

function plural(count: number | bigint, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function patternSource(pattern: string | undefined): string {
  if (pattern === undefined) return '';
  const end = pattern.lastIndexOf('/');
  return pattern.startsWith('/') && end > 0 ? pattern.slice(1, end) : pattern;
}

interface TypeAndMessage {
  readonly type: string;
  readonly msg: string;
}

const MISSING: TypeAndMessage = { type: 'missing', msg: 'Field required' };

const INVALID_TYPE: Readonly<Record<string, TypeAndMessage>> = {
  string: { type: 'string_type', msg: 'Input should be a valid string' },
  number: { type: 'float_type', msg: 'Input should be a valid number' },
  int: { type: 'int_type', msg: 'Input should be a valid integer' },
  boolean: { type: 'bool_type', msg: 'Input should be a valid boolean' },
  array: { type: 'list_type', msg: 'Input should be a valid list' },
  tuple: { type: 'list_type', msg: 'Input should be a valid list' },
  object: { type: 'model_type', msg: 'Input should be a valid dictionary or object' },
  record: { type: 'dict_type', msg: 'Input should be a valid dictionary' },
  null: { type: 'none_required', msg: 'Input should be None' },
};

function invalidType(issue: z.core.$ZodIssueInvalidType, value: unknown): TypeAndMessage {
  const missing =
    value === NO_VALUE ? issue.message.endsWith('received undefined') : value === undefined;
  if (missing) return MISSING;
  if (issue.expected === 'int' && typeof value === 'number' && Number.isFinite(value)) {
    return {
      type: 'int_from_float',
      msg: 'Input should be a valid integer, got a number with a fractional part',
    };
  }
  return (
    INVALID_TYPE[issue.expected] ?? {
      type: `${issue.expected}_type`,
      msg: `Input should be a valid ${issue.expected}`,
    }
  );
}

/** The words that tell a lower bound from an upper one in the service's issue types and texts. */
interface BoundWords {
  /** `string_too_<length>`, `too_<length>`. */
  readonly length: 'short' | 'long';
  readonly extent: 'at least' | 'at most';
  readonly comparison: 'greater_than' | 'less_than';
  readonly comparisonText: 'greater than' | 'less than';
}

const LOWER_BOUND: BoundWords = {
  length: 'short',
  extent: 'at least',
  comparison: 'greater_than',
  comparisonText: 'greater than',
};

const UPPER_BOUND: BoundWords = {
  length: 'long',
  extent: 'at most',
  comparison: 'less_than',
  comparisonText: 'less than',
};

function outOfBound(
  origin: string,
  limit: number | bigint,
  inclusive: boolean | undefined,
  words: BoundWords,
): TypeAndMessage {
  switch (origin) {
    case 'string':
      return {
        type: `string_too_${words.length}`,
        msg: `String should have ${words.extent} ${plural(limit, 'character')}`,
      };
    case 'array':
    case 'set':
      return {
        type: `too_${words.length}`,
        msg: `List should have ${words.extent} ${plural(limit, 'item')}`,
      };
    default:
      return inclusive
        ? {
            type: `${words.comparison}_equal`,
            msg: `Input should be ${words.comparisonText} or equal to ${limit}`,
          }
        : { type: words.comparison, msg: `Input should be ${words.comparisonText} ${limit}` };
  }
}

function tooSmall(issue: z.core.$ZodIssueTooSmall): TypeAndMessage {
  return outOfBound(issue.origin, issue.minimum, issue.inclusive, LOWER_BOUND);
}

function tooBig(issue: z.core.$ZodIssueTooBig): TypeAndMessage {
  return outOfBound(issue.origin, issue.maximum, issue.inclusive, UPPER_BOUND);
}

function invalidFormat(issue: z.core.$ZodIssueInvalidStringFormat): TypeAndMessage {
  switch (issue.format) {
    case 'regex':
    case 'template_literal':
      return {
        type: 'string_pattern_mismatch',
        msg: `String should match pattern '${patternSource(issue.pattern)}'`,
      };
    case 'uuid':
    case 'guid':
      return { type: 'uuid_parsing', msg: 'Input should be a valid UUID' };
    default:
      return { type: `${issue.format}_parsing`, msg: `Input should be a valid ${issue.format}` };
  }
}

function invalidUnion(
  issue: z.core.$ZodIssueInvalidUnion,
  hasInput: boolean,
  input: unknown,
): TypeAndMessage {
  const discriminator = issue.discriminator;
  if (discriminator === undefined) {
    return { type: 'union_error', msg: 'Input does not match any allowed form' };
  }
  // zod reports the object holding the tag, at the path of the tag itself.
  const holder =
    'input' in issue ? issue.input : hasInput ? lookup(input, issue.path.slice(0, -1)) : NO_VALUE;
  if (typeof holder === 'object' && holder !== null && !Object.hasOwn(holder, discriminator)) {
    return MISSING;
  }
  const options = 'options' in issue && issue.options !== undefined ? issue.options : [];
  return { type: 'union_tag_invalid', msg: `Input tag should be ${listOf(options)}` };
}

function customType(issue: z.core.$ZodIssueCustom): string {
  const type: unknown = issue.params?.type;
  return typeof type === 'string' ? type : 'value_error';
}

/**
 * Turns a zod error into the service's issue list, in zod's order (schema field order, unknown
 * keys last), one issue per unknown key. `loc` starts with `location`. Pass the parsed `input`
 * unless the parse ran with `reportInput: true` (as `validateWire` does); it tells a missing
 * field from a wrong type.
 */
export function toServiceIssues(
  error: { readonly issues: readonly Issue[] },
  location: IssueLocation,
  ...rest: [input?: unknown]
): ServiceIssue[] {
  const hasInput = rest.length > 0;
  const input = rest[0];
  const issues: ServiceIssue[] = [];
  for (const issue of error.issues) {
    const path = issue.path.map((part) => (typeof part === 'number' ? part : String(part)));
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        issues.push({
          type: 'extra_forbidden',
          loc: [location, ...path, key],
          msg: 'Extra inputs are not permitted',
        });
      }
      continue;
    }
    let described: TypeAndMessage;
    if (
      (issue.code === 'invalid_value' ||
        (issue.code === 'invalid_union' && issue.discriminator === undefined)) &&
      issueValue(issue, hasInput, input) === undefined
    ) {
      // An enum, a literal or a union reports an absent field as a wrong value.
      issues.push({ type: MISSING.type, loc: [location, ...path], msg: MISSING.msg });
      continue;
    }
    switch (issue.code) {
      case 'invalid_type':
        described = invalidType(issue, issueValue(issue, hasInput, input));
        break;
      case 'too_small':
        described = tooSmall(issue);
        break;
      case 'too_big':
        described = tooBig(issue);
        break;
      case 'invalid_format':
        described = invalidFormat(issue);
        break;
      case 'invalid_value':
        described =
          issue.values.length === 1
            ? { type: 'literal_error', msg: `Input should be ${quote(issue.values[0])}` }
            : { type: 'enum', msg: `Input should be ${listOf(issue.values)}` };
        break;
      case 'invalid_union':
        described = invalidUnion(issue, hasInput, input);
        break;
      case 'not_multiple_of':
        described = { type: 'multiple_of', msg: `Input should be a multiple of ${issue.divisor}` };
        break;
      case 'custom':
        described = { type: customType(issue), msg: issue.message };
        break;
      default:
        described = { type: 'value_error', msg: issue.message };
    }
    issues.push({ type: described.type, loc: [location, ...path], msg: described.msg });
  }
  return issues;
}

export type WireValidation<T> =
  | { readonly success: true; readonly data: T }
  | { readonly success: false; readonly issues: ServiceIssue[] };

/** Parses at the wire edge and reports failures as the service's issues. */
export function validateWire<Schema extends z.ZodType>(
  schema: Schema,
  input: unknown,
  location: IssueLocation,
): WireValidation<z.output<Schema>> {
  const result = schema.safeParse(input, { reportInput: true });
  if (result.success) return { success: true, data: result.data };
  return { success: false, issues: toServiceIssues(result.error, location, input) };
}
