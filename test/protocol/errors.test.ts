import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  buildErrorEnvelope,
  ClientFrame,
  ErrorCode,
  ErrorEnvelope,
  errorRetryable,
  errorStatus,
  InvalidRequestDetails,
  invalidJsonIssue,
  isErrorCode,
  OrderRequest,
  routingErrorStatus,
  ServiceIssue,
  toServiceIssues,
  ValidationFailureBody,
  validateWire,
} from '../../src/protocol/index.ts';
import { limitOrder, marketOrder } from './fixtures.ts';

/** The interface's error table, row by row. */
const interfaceErrorTable: Array<[number, string]> = [
  [401, 'INVALID_SIGNATURE'],
  [401, 'KEY_REVOKED'],
  [401, 'KEY_EXPIRED'],
  [403, 'SCOPE_REQUIRED'],
  [403, 'IP_NOT_ALLOWED'],
  [403, 'RISK_LIMIT_EXCEEDED'],
  [404, 'UNKNOWN_MARKET'],
  [404, 'ORDER_NOT_FOUND'],
  [404, 'POSITION_NOT_FOUND'],
  [409, 'IDEMPOTENCY_CONFLICT'],
  [409, 'INSUFFICIENT_READY_CAPITAL'],
  [409, 'MARGIN_MODE_IN_USE'],
  [409, 'ORDER_CONFIRMATION_PENDING'],
  [409, 'ROUTE_NOT_READY'],
  [422, 'INVALID_REQUEST'],
  [422, 'UNSUPPORTED_ORDER'],
  [429, 'RATE_LIMITED'],
  [503, 'EXECUTION_UNAVAILABLE'],
];

describe('error codes', () => {
  it('ErrorCode holds exactly the codes of the table, with their statuses', () => {
    expect(ErrorCode.options).toEqual(interfaceErrorTable.map(([, code]) => code));
    for (const [status, code] of interfaceErrorTable) {
      expect(errorStatus[code as ErrorCode]).toBe(status);
    }
    expect(Object.keys(errorStatus).sort()).toEqual([...ErrorCode.options].sort());
    expect(Object.keys(errorRetryable).sort()).toEqual([...ErrorCode.options].sort());
  });

  it('marks only transient conditions retryable', () => {
    const retryable = ErrorCode.options.filter((code) => errorRetryable[code]);
    expect(retryable).toEqual([
      'ORDER_CONFIRMATION_PENDING',
      'ROUTE_NOT_READY',
      'RATE_LIMITED',
      'EXECUTION_UNAVAILABLE',
    ]);
  });

  it('isErrorCode tells table codes from anything else', () => {
    expect(isErrorCode('RATE_LIMITED')).toBe(true);
    expect(isErrorCode('rate_limited')).toBe(false);
    expect(isErrorCode('toString')).toBe(false);
    expect(isErrorCode('NOT_FOUND')).toBe(false);
    expect(routingErrorStatus).toEqual({ NOT_FOUND: 404, METHOD_NOT_ALLOWED: 405 });
  });
});

describe('ErrorEnvelope', () => {
  it('parses the envelope and keeps unknown codes parseable', () => {
    const envelope = {
      error: {
        code: 'SOMETHING_NEW',
        message: 'later version',
        request_id: 'srv-1',
        retryable: false,
        details: {},
      },
    };
    expect(ErrorEnvelope.parse(envelope)).toEqual(envelope);
  });

  it('needs every field of the error and refuses unknown ones', () => {
    const result = ErrorEnvelope.safeParse({
      error: { code: 'RATE_LIMITED', message: 'slow down', retryable: true, details: {}, hint: 1 },
    });
    expect(result.success).toBe(false);
    expect(toServiceIssues(result.error!, 'body').map((issue) => issue.loc.join('.'))).toEqual([
      'body.error.request_id',
      'body.error.hint',
    ]);
  });

  it('buildErrorEnvelope fills retryable from the table and details with {}', () => {
    expect(
      buildErrorEnvelope({ code: 'EXECUTION_UNAVAILABLE', message: 'down', requestId: 'srv-2' }),
    ).toEqual({
      error: {
        code: 'EXECUTION_UNAVAILABLE',
        message: 'down',
        request_id: 'srv-2',
        retryable: true,
        details: {},
      },
    });
    const issues = [invalidJsonIssue()];
    const envelope = buildErrorEnvelope({
      code: 'INVALID_REQUEST',
      message: 'invalid',
      requestId: 'srv-3',
      details: { issues },
    });
    expect(ErrorEnvelope.parse(envelope)).toEqual(envelope);
    expect(InvalidRequestDetails.parse(envelope.error.details)).toEqual({ issues });
  });

  it('issue loc must start with body, query or path', () => {
    expect(
      ServiceIssue.safeParse({ type: 'missing', loc: ['query', 'limit'], msg: 'x' }).success,
    ).toBe(true);
    expect(
      ServiceIssue.safeParse({ type: 'missing', loc: ['body', 'orders', 0], msg: 'x' }).success,
    ).toBe(true);
    expect(
      ServiceIssue.safeParse({ type: 'missing', loc: ['header', 'x'], msg: 'x' }).success,
    ).toBe(false);
    expect(ServiceIssue.safeParse({ type: 'missing', loc: [], msg: 'x' }).success).toBe(false);
    expect(InvalidRequestDetails.safeParse({ issues: [] }).success).toBe(false);
  });
});

describe('ValidationFailureBody (the 422 detail form)', () => {
  it('accepts items with and without input and ctx', () => {
    const body = {
      detail: [
        {
          loc: ['body', 'quantity'],
          msg: 'Input should be greater than 0',
          type: 'greater_than',
          input: 0,
          ctx: { gt: 0 },
        },
        { loc: ['body', 'side'], msg: 'Field required', type: 'missing' },
      ],
    };
    expect(ValidationFailureBody.parse(body)).toEqual(body);
    expect(ValidationFailureBody.safeParse({ detail: [{ loc: [], msg: 'x' }] }).success).toBe(
      false,
    );
    expect(ValidationFailureBody.safeParse({ detail: 'bad' }).success).toBe(false);
  });
});

describe('toServiceIssues', () => {
  it('produces issues the ServiceIssue schema accepts, with readable messages', () => {
    const result = validateWire(
      OrderRequest,
      { ...marketOrder(), side: 'BUY', quantity: 0, leverage: 1.5, extra: true },
      'body',
    );
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(result.issues).toEqual([
      { type: 'enum', loc: ['body', 'side'], msg: "Input should be 'buy' or 'sell'" },
      { type: 'greater_than', loc: ['body', 'quantity'], msg: 'Input should be greater than 0' },
      {
        type: 'int_from_float',
        loc: ['body', 'leverage'],
        msg: 'Input should be a valid integer, got a number with a fractional part',
      },
      { type: 'extra_forbidden', loc: ['body', 'extra'], msg: 'Extra inputs are not permitted' },
    ]);
    for (const issue of result.issues) expect(ServiceIssue.safeParse(issue).success).toBe(true);
  });

  it('describes lengths and patterns like the service', () => {
    const result = validateWire(OrderRequest, { ...limitOrder(), request_id: 'a b' }, 'body');
    expect(result.success ? [] : result.issues).toEqual([
      {
        type: 'string_too_short',
        loc: ['body', 'request_id'],
        msg: 'String should have at least 8 characters',
      },
      {
        type: 'string_pattern_mismatch',
        loc: ['body', 'request_id'],
        msg: "String should match pattern '^[A-Za-z0-9:_-]*$'",
      },
    ]);
  });

  it('gives the same issues with the input passed, with reportInput, or with neither', () => {
    const input = { quantity: 'x', side: 'buy', extra: 1 };
    const plain = OrderRequest.safeParse(input);
    const reported = OrderRequest.safeParse(input, { reportInput: true });
    const withInput = toServiceIssues(plain.error!, 'body', input);
    expect(toServiceIssues(reported.error!, 'body')).toEqual(withInput);
    expect(
      withInput.filter((issue) => issue.type === 'missing').map((issue) => issue.loc[1]),
    ).toEqual(['request_id', 'client_order_id', 'market_id', 'type', 'leverage']);
    // Without the input, an absent plain field is still told apart by zod's own message.
    expect(
      toServiceIssues(plain.error!, 'body').find((issue) => issue.loc[1] === 'request_id')?.type,
    ).toBe('missing');
  });

  it('is deterministic: the same input always gives the same list (property)', () => {
    const anything = fc.dictionary(
      fc.constantFrom(...Object.keys(marketOrder()), 'price', 'post_only', 'extra'),
      fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null)),
    );
    fc.assert(
      fc.property(anything, (input) => {
        const first = validateWire(OrderRequest, input, 'body');
        const second = validateWire(OrderRequest, structuredClone(input), 'body');
        expect(second).toEqual(first);
        if (!first.success) {
          for (const issue of first.issues) {
            expect(ServiceIssue.safeParse(issue).success).toBe(true);
          }
        }
      }),
    );
  });

  it('uses the location given and keeps array indices as numbers', () => {
    const schema = z.strictObject({ items: z.array(z.strictObject({ n: z.int() })) });
    const result = validateWire(schema, { items: [{ n: 1 }, { n: 'x' }] }, 'query');
    expect(result.success ? [] : result.issues).toEqual([
      {
        type: 'float_type',
        loc: ['query', 'items', 1, 'n'],
        msg: 'Input should be a valid number',
      },
    ]);
  });

  it('reports discriminated-union tags: missing, or not one of the options', () => {
    expect(validateWire(ClientFrame, { request_id: 'abc' }, 'body')).toEqual({
      success: false,
      issues: [{ type: 'missing', loc: ['body', 'op'], msg: 'Field required' }],
    });
    expect(validateWire(ClientFrame, { op: 'hello', request_id: 'abc' }, 'body')).toEqual({
      success: false,
      issues: [
        {
          type: 'union_tag_invalid',
          loc: ['body', 'op'],
          msg: "Input tag should be 'auth', 'subscribe', 'unsubscribe' or 'ping'",
        },
      ],
    });
  });

  it('maps the remaining zod issue kinds', () => {
    const schema = z.strictObject({
      list: z.array(z.string()).max(1),
      word: z.string().max(2),
      literal: z.literal('x'),
      multiple: z.number().multipleOf(5),
      below: z.number().lt(3),
      object: z.strictObject({}),
      uuid: z.uuid(),
    });
    const result = validateWire(
      schema,
      { list: ['a', 'b'], word: 'abc', literal: 'y', multiple: 7, below: 3, object: 1, uuid: 'u' },
      'body',
    );
    expect(result.success ? [] : result.issues.map((issue) => [issue.type, issue.msg])).toEqual([
      ['too_long', 'List should have at most 1 item'],
      ['string_too_long', 'String should have at most 2 characters'],
      ['literal_error', "Input should be 'x'"],
      ['multiple_of', 'Input should be a multiple of 5'],
      ['less_than', 'Input should be less than 3'],
      ['model_type', 'Input should be a valid dictionary or object'],
      ['uuid_parsing', 'Input should be a valid UUID'],
    ]);
  });

  it('invalidJsonIssue locates the whole body', () => {
    expect(invalidJsonIssue()).toEqual({
      type: 'json_invalid',
      loc: ['body'],
      msg: 'JSON decode error',
    });
  });
});
