/**
 * One command sequence through the emulator's HTTP server (real loopback, signed requests) and
 * through the replay venue's path over the service core (same config, seed and virtual start
 * time): the same statuses, the same bodies and the same private events, step by step. The
 * only field allowed to differ is the error envelope's `request_id`, which is each transport's
 * own request id by construction.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../src/core/clock.ts';
import { isPaperbotError } from '../../../src/core/errors.ts';
import {
  defaultEmulatorConfig,
  Exchange,
  IdempotencyWindow,
  MemoryStore,
  type RunningEmulator,
  type ServiceAnswer,
} from '../../../src/emulator/index.ts';
import {
  buildPath,
  type EndpointName,
  endpoints,
  type PrivateEvent,
} from '../../../src/protocol/index.ts';
import type {
  CommandEndpoint,
  PreparedCommand,
  VenueCommandOf,
} from '../../../src/runtime/venue.ts';
import type { Credential } from '../../../src/signing/index.ts';
import { ExchangeExecutionVenue } from '../../../src/replay/venue/exchange-venue.ts';
import { LatencyModel, ZERO_LATENCY } from '../../../src/replay/venue/latency.ts';
import {
  SignedClient,
  START_MS,
  startTestEmulator,
  TestHttp,
} from '../../emulator/server/helpers.ts';

/** Small enough for the breach below, large enough for every other order. */
const MAX_ORDER_NOTIONAL = '5000';
const STEP_MS = 1_000;

interface Answer {
  readonly status: number;
  readonly body: unknown;
}

/** The envelope without the transport's own request id; success bodies as they are. */
function comparable(answer: Answer): Answer {
  const envelope = answer.body as { error?: Record<string, unknown> } | null;
  if (answer.status < 400 || envelope?.error === undefined) {
    return { status: answer.status, body: JSON.parse(JSON.stringify(answer.body)) as unknown };
  }
  const { request_id: _, ...error } = envelope.error;
  return { status: answer.status, body: { error } };
}

class HttpSide {
  private afterSequence = 0;

  constructor(
    readonly emulator: RunningEmulator & { readonly clock: VirtualClock },
    readonly client: SignedClient,
  ) {}

  async command(
    name: EndpointName,
    params: Record<string, string>,
    body: unknown,
    raw?: string,
  ): Promise<Answer> {
    const path = buildPath(name as 'placeOrder', params as never);
    const reply = await this.client.send(
      endpoints[name].method,
      path,
      body,
      raw === undefined ? {} : { raw },
    );
    return comparable({ status: reply.status, body: reply.json });
  }

  async newEvents(): Promise<unknown[]> {
    const reply = await this.client.get(`/v1/events?after_sequence=${this.afterSequence}`);
    expect(reply.status).toBe(200);
    const page = reply.json as { data: { sequence: number }[] };
    const last = page.data[page.data.length - 1];
    if (last !== undefined) this.afterSequence = last.sequence;
    return page.data;
  }
}

class VenueSide {
  private seen = 0;

  constructor(
    readonly clock: VirtualClock,
    readonly venue: ExchangeExecutionVenue,
    /** The account's private events as the venue's engine hook sees them. */
    readonly events: PrivateEvent[],
  ) {}

  /** A command through the venue's port: prepared by its serializer, sent, answered. */
  async command<E extends CommandEndpoint>(command: VenueCommandOf<E>): Promise<Answer> {
    return this.send(this.venue.prepare(command));
  }

  async send<E extends CommandEndpoint>(prepared: PreparedCommand<E>): Promise<Answer> {
    const pending = this.venue.send(prepared).then(
      (value): Answer => ({ status: endpoints[prepared.endpoint].successStatus, body: value }),
      (error: unknown): Answer => {
        if (!isPaperbotError(error)) throw error;
        const { httpStatus, ...details } = error.details;
        return {
          status: httpStatus as number,
          body: {
            error: {
              code: error.code,
              message: error.message,
              retryable: error.retryable,
              details,
            },
          },
        };
      },
    );
    this.clock.advanceBy(0);
    return comparable(await pending);
  }

  /** The core directly, as an in-process transport holding bytes (the batch: no venue port). */
  submit(name: EndpointName, bytes: string): { answer: Answer; events: readonly PrivateEvent[] } {
    const answer: ServiceAnswer = this.venue.core.submit({
      endpoint: name,
      account: {
        accountId: this.venue.accountId,
        riskLimits: { maxOrderNotional: MAX_ORDER_NOTIONAL },
      },
      params: {},
      bytes: new TextEncoder().encode(bytes),
      traceId: 'in-process',
    });
    return { answer: comparable(answer), events: answer.events };
  }

  newEvents(): unknown[] {
    const fresh = this.events.slice(this.seen);
    this.seen = this.events.length;
    return JSON.parse(JSON.stringify(fresh)) as unknown[];
  }
}

describe('one service core under the HTTP server and the replay venue', () => {
  let http: TestHttp;
  let wire: HttpSide;
  let local: VenueSide;
  let credential: Credential;

  beforeAll(async () => {
    const config = defaultEmulatorConfig();
    const emulator = await startTestEmulator({ config });
    http = new TestHttp();
    credential = emulator.createKey({ maxOrderNotional: MAX_ORDER_NOTIONAL });
    wire = new HttpSide(emulator, new SignedClient(http, emulator, credential));

    const clock = new VirtualClock(START_MS);
    const exchange = Exchange.open({ clock, config, store: new MemoryStore() });
    exchange.start();
    const accountId = exchange.createAccount();
    const events: PrivateEvent[] = [];
    const venue = new ExchangeExecutionVenue({
      exchange,
      accountId,
      clock,
      store: new IdempotencyWindow(),
      latency: new LatencyModel(ZERO_LATENCY, 1),
      riskLimits: { maxOrderNotional: MAX_ORDER_NOTIONAL },
      hooks: { onEngineEvent: (event) => events.push(event) },
    });
    local = new VenueSide(clock, venue, events);
    expect(accountId).toBe(credential.accountId);
  });

  afterAll(async () => {
    local?.venue.close();
    await http?.close();
    await wire?.emulator.close();
  });

  /** Both sides advance the same virtual time, then must have emitted the same events. */
  async function step(): Promise<void> {
    wire.emulator.clock.advanceBy(STEP_MS);
    local.clock.advanceBy(STEP_MS);
    const over = await wire.newEvents();
    expect(local.newEvents()).toEqual(over);
  }

  async function both<E extends CommandEndpoint>(
    command: VenueCommandOf<E>,
    expectedStatus: number,
  ): Promise<Answer> {
    const params = ('params' in command ? command.params : {}) as Record<string, string>;
    const over = await wire.command(command.endpoint, params, command.body);
    const inProcess = await local.command(command);
    expect(inProcess).toEqual(over);
    expect(over.status).toBe(expectedStatus);
    await step();
    return over;
  }

  const order = (id: string, overrides: Record<string, unknown> = {}) => ({
    request_id: `parity-${id}`,
    client_order_id: `c-parity-${id}`,
    market_id: 'BTC-PERP',
    side: 'buy' as const,
    type: 'limit' as const,
    quantity: '0.01',
    price: '60000',
    leverage: 5,
    ...overrides,
  });

  it('gives the same statuses, bodies and events for one command sequence', async () => {
    // Place, the same again (the first answer), the same id with other content (a conflict).
    const placed = await both({ endpoint: 'placeOrder', body: order('a') }, 202);
    const orderA = (placed.body as { order_id: string }).order_id;
    await both({ endpoint: 'placeOrder', body: order('a') }, 202);
    const conflict = await both(
      { endpoint: 'placeOrder', body: order('a', { price: '59000' }) },
      409,
    );
    expect((conflict.body as { error: { code: string } }).error.code).toBe('IDEMPOTENCY_CONFLICT');

    await both({ endpoint: 'simulateOrder', body: order('sim') }, 200);

    // Cancel one, amend another, cancel the rest of the market at once.
    const b = await both({ endpoint: 'placeOrder', body: order('b', { price: '59500' }) }, 202);
    const orderB = (b.body as { order_id: string }).order_id;
    await both(
      { endpoint: 'cancelOrder', params: { order_id: orderB }, body: { request_id: 'parity-cb' } },
      202,
    );
    await both(
      {
        endpoint: 'amendOrder',
        params: { order_id: orderA },
        body: { request_id: 'parity-am', price: '59800' },
      },
      202,
    );
    await both({ endpoint: 'placeOrder', body: order('c', { price: '59000' }) }, 202);
    await both(
      { endpoint: 'cancelAllOrders', body: { request_id: 'parity-ca', market_id: 'BTC-PERP' } },
      202,
    );

    // A batch: one new item and one repeating an earlier placement's request id.
    const batch = JSON.stringify({
      request_id: 'parity-batch',
      orders: [order('d', { price: '58000' }), order('c', { price: '59000' })],
    });
    const overBatch = await wire.command('placeBatch', {}, undefined, batch);
    const inBatch = local.submit('placeBatch', batch);
    expect(inBatch.answer).toEqual(overBatch);
    expect(overBatch.status).toBe(endpoints.placeBatch.successStatus);
    wire.emulator.clock.advanceBy(0);
    const batchEvents = await wire.newEvents();
    expect(JSON.parse(JSON.stringify(inBatch.events))).toEqual(batchEvents);
    expect(batchEvents.length).toBeGreaterThan(0);
    expect(local.newEvents()).toEqual(batchEvents);
    await step();

    // A market order opens a position, which is then closed.
    await both(
      {
        endpoint: 'placeOrder',
        body: (({ price: _, ...rest }) => ({ ...rest, type: 'market' as const }))(
          order('m', { max_slippage_percent: '1' }),
        ),
      },
      202,
    );
    await step();
    const positions = await wire.client.get('/v1/positions');
    const position = (positions.json as { data: { position_id: string }[] }).data[0];
    expect(position).toBeDefined();
    expect(JSON.parse(JSON.stringify(local.venue.positionsNow()))).toEqual(
      (positions.json as { data: unknown[] }).data,
    );
    await both(
      {
        endpoint: 'closePosition',
        params: { position_id: position!.position_id },
        body: { request_id: 'parity-close', client_order_id: 'c-parity-close' },
      },
      202,
    );

    await both(
      { endpoint: 'setCancelAllAfter', body: { request_id: 'parity-caa', timeout_seconds: 60 } },
      200,
    );

    // The key's risk limit: an order above its notional is refused the same way.
    const breach = await both(
      { endpoint: 'placeOrder', body: order('big', { quantity: '1' }) },
      403,
    );
    expect((breach.body as { error: { code: string } }).error.code).toBe('RISK_LIMIT_EXCEEDED');

    // Bytes that are not a valid body: the same INVALID_REQUEST with the same issues.
    const invalid = JSON.stringify({ ...order('bad'), quantity: 'lots' });
    const overInvalid = await wire.command('placeOrder', {}, undefined, invalid);
    const bytes = new TextEncoder().encode(invalid);
    const inInvalid = await local.send({
      endpoint: 'placeOrder',
      path: '/v1/orders',
      requestId: 'parity-bad',
      body: JSON.parse(invalid) as never,
      bodyBytes: bytes,
      bodySha256: 'unchecked',
    });
    expect(inInvalid).toEqual(overInvalid);
    expect(overInvalid.status).toBe(422);
    expect((overInvalid.body as { error: { code: string } }).error.code).toBe('INVALID_REQUEST');
    await step();

    // Orders moved, filled and were cancelled along the way, on both sides alike.
    expect(local.events.length).toBeGreaterThan(10);

    // The request records agree too.
    const record = await wire.client.get('/v1/requests/parity-a');
    expect(JSON.parse(JSON.stringify(await local.venue.getRequest('parity-a')))).toEqual(
      record.json,
    );
  });
});
