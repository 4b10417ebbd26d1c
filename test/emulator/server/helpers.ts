/**
 * Test helpers for the emulator server: an emulator on a virtual clock, a small signed-fetch
 * client over a real loopback socket (undici + signRequest), a WebSocket client that queues
 * frames, and a few order bodies. The real client is written elsewhere; these stay minimal.
 */
import { request as httpRequest } from 'node:http';
import { Agent, request } from 'undici';
import WebSocket from 'ws';
import { VirtualClock } from '../../../src/core/clock.ts';
import {
  type RunningEmulator,
  type StartEmulatorOptions,
  startEmulator,
} from '../../../src/emulator/index.ts';
import { ErrorEnvelope } from '../../../src/protocol/index.ts';
import { type Credential, signRequest, signWebSocketAuth } from '../../../src/signing/index.ts';

/** 2026-01-01T00:00:00Z. */
export const START_MS = 1_767_225_600_000;

export async function startTestEmulator(
  options: Partial<StartEmulatorOptions> = {},
): Promise<RunningEmulator & { readonly clock: VirtualClock }> {
  const clock = options.clock instanceof VirtualClock ? options.clock : new VirtualClock(START_MS);
  const emulator = await startEmulator({
    checkResponses: true,
    rateLimit: { quota: 100_000, windowMs: 60_000 },
    ...options,
    clock,
  });
  return emulator as RunningEmulator & { readonly clock: VirtualClock };
}

export interface Reply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly text: string;
  /** The parsed body, or undefined when it is not JSON. */
  readonly json: unknown;
}

export type Body = unknown;

export interface SendOptions {
  /** Send these exact bytes (or text) instead of JSON-encoding `body`. */
  readonly raw?: string | Buffer;
  readonly headers?: Readonly<Record<string, string>>;
  /** Default application/json when there is a body. null: no content-type header. */
  readonly contentType?: string | null;
  /** Sign with this credential (default: the client's); false: send unsigned. */
  readonly sign?: boolean;
  readonly timestampMs?: number;
  readonly nonce?: string;
  /** Change the signed headers after signing. */
  readonly tamper?: (headers: Record<string, string>) => Record<string, string>;
}

/** One agent per test file, so no pooled connection survives an emulator restart unnoticed. */
export class TestHttp {
  readonly agent = new Agent({ keepAliveTimeout: 1_000, connections: 8 });

  async send(
    baseUrl: string,
    method: string,
    target: string,
    body: Body = undefined,
    options: SendOptions & { credential?: Credential; now?: () => number } = {},
  ): Promise<Reply> {
    const bytes =
      options.raw !== undefined
        ? Buffer.from(options.raw)
        : body === undefined
          ? null
          : Buffer.from(JSON.stringify(body));
    let headers: Record<string, string> = {};
    if (bytes !== null && options.contentType !== null) {
      headers['content-type'] = options.contentType ?? 'application/json';
    }
    if (options.credential !== undefined && options.sign !== false) {
      const signed = signRequest({
        signer: options.credential.createSigner(),
        keyId: options.credential.keyId,
        method,
        target,
        body: bytes,
        timestampMs: options.timestampMs ?? (options.now ?? (() => START_MS))(),
        ...(options.nonce === undefined ? {} : { nonce: options.nonce }),
      });
      headers = { ...headers, ...signed };
    }
    if (options.tamper !== undefined) headers = options.tamper(headers);
    headers = { ...headers, ...options.headers };
    const response = await request(`${baseUrl}${target}`, {
      method: method as 'GET',
      headers,
      ...(bytes === null ? {} : { body: bytes }),
      dispatcher: this.agent,
    });
    const text = await response.body.text();
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    return {
      status: response.statusCode,
      headers: response.headers,
      text,
      json,
    };
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/** A signed client bound to one emulator and one credential, signing at the emulator's time. */
export class SignedClient {
  constructor(
    readonly http: TestHttp,
    readonly emulator: RunningEmulator,
    readonly credential: Credential,
  ) {}

  send(method: string, target: string, body?: Body, options: SendOptions = {}): Promise<Reply> {
    return this.http.send(this.emulator.baseUrl, method, target, body, {
      ...options,
      credential: this.credential,
      now: () => this.emulator.clock.now(),
    });
  }

  get(target: string, options?: SendOptions): Promise<Reply> {
    return this.send('GET', target, undefined, options);
  }

  post(target: string, body: Body, options?: SendOptions): Promise<Reply> {
    return this.send('POST', target, body, options);
  }
}

export function publicGet(
  http: TestHttp,
  emulator: RunningEmulator,
  target: string,
  options: SendOptions = {},
) {
  return http.send(emulator.baseUrl, 'GET', target, undefined, options);
}

/** Asserts the reply is the error envelope with this status and code; returns the error body. */
export function expectError(reply: Reply, status: number, code: string) {
  if (reply.status !== status) {
    throw new Error(`expected ${status} ${code}, got ${reply.status}: ${reply.text}`);
  }
  const envelope = ErrorEnvelope.parse(reply.json);
  if (envelope.error.code !== code) {
    throw new Error(`expected code ${code}, got ${envelope.error.code}: ${reply.text}`);
  }
  if (envelope.error.request_id !== reply.headers['svc-request-id']) {
    throw new Error('the envelope request_id differs from SVC-REQUEST-ID');
  }
  return envelope.error;
}

let counter = 0;
/** A fresh request id (8..80 characters of the allowed set). */
export function requestId(label = 'req'): string {
  counter += 1;
  return `${label}-${counter.toString().padStart(8, '0')}`;
}

export function limitOrder(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const id = requestId('lim');
  return {
    request_id: id,
    client_order_id: `c-${id}`,
    market_id: 'BTC-PERP',
    side: 'buy',
    type: 'limit',
    quantity: '0.01',
    price: '60000',
    leverage: 5,
    ...overrides,
  };
}

export function marketOrder(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const id = requestId('mkt');
  return {
    request_id: id,
    client_order_id: `c-${id}`,
    market_id: 'BTC-PERP',
    side: 'buy',
    type: 'market',
    quantity: '0.01',
    leverage: 5,
    max_slippage_percent: '1',
    ...overrides,
  };
}

/** A WebSocket connection that queues every frame it receives. */
export class TestSocket {
  readonly frames: Record<string, unknown>[] = [];
  readonly #waiters: {
    predicate: (frame: Record<string, unknown>) => boolean;
    resolve: (frame: Record<string, unknown>) => void;
    reject: (error: Error) => void;
  }[] = [];
  #closed: Promise<{ code: number }>;
  #consumed = 0;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const frame = JSON.parse(String(data)) as Record<string, unknown>;
      this.frames.push(frame);
      for (const waiter of [...this.#waiters]) {
        if (waiter.predicate(frame)) {
          this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
          waiter.resolve(frame);
          return;
        }
      }
    });
    this.#closed = new Promise((resolve) =>
      socket.on('close', (code) => {
        for (const waiter of this.#waiters.splice(0))
          waiter.reject(new Error(`socket closed (${code})`));
        resolve({ code });
      }),
    );
  }

  static async open(url: string): Promise<TestSocket> {
    const socket = new WebSocket(url);
    const test = new TestSocket(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return test;
  }

  get closed(): Promise<{ code: number }> {
    return this.#closed;
  }

  /** The next frame not yet taken that matches (frames are taken in order). */
  next(
    predicate: (frame: Record<string, unknown>) => boolean = () => true,
  ): Promise<Record<string, unknown>> {
    for (let index = this.#consumed; index < this.frames.length; index++) {
      const frame = this.frames[index]!;
      if (predicate(frame)) {
        this.#consumed = index + 1;
        return Promise.resolve(frame);
      }
    }
    return new Promise((resolve, reject) => {
      this.#waiters.push({
        predicate: (frame) => predicate(frame),
        resolve: (frame) => {
          this.#consumed = this.frames.length;
          resolve(frame);
        },
        reject,
      });
    });
  }

  nextOfType(type: string): Promise<Record<string, unknown>> {
    return this.next((frame) => frame.type === type);
  }

  send(frame: unknown): void {
    this.socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** Sends a ping and waits for its pong: every frame sent before it has arrived by then. */
  async barrier(): Promise<void> {
    const id = requestId('ping');
    this.send({ op: 'ping', request_id: id });
    await this.next((frame) => frame.type === 'pong' && frame.request_id === id);
  }

  async authenticate(
    credential: Credential,
    now: number,
    options: {
      scopes?: readonly string[];
      lastSequence?: number;
      challenge?: string;
    } = {},
  ): Promise<Record<string, unknown>> {
    const challengeFrame = this.frames.find((frame) => frame.type === 'challenge');
    const challenge = options.challenge ?? String(challengeFrame?.challenge);
    const id = requestId('auth');
    const fields = signWebSocketAuth({
      signer: credential.createSigner(),
      challenge,
      keyId: credential.keyId,
      timestampMs: now,
      scopes: options.scopes ?? credential.scopes,
      lastSequence: options.lastSequence ?? 0,
    });
    this.send({
      op: 'auth',
      request_id: id,
      ...fields,
      timestamp: String(fields.timestamp),
    });
    return this.next((frame) => frame.request_id === id);
  }

  async subscribe(channels: readonly string[]): Promise<Record<string, unknown>> {
    const id = requestId('sub');
    this.send({ op: 'subscribe', request_id: id, channels });
    return this.next((frame) => frame.request_id === id);
  }

  close(): void {
    this.socket.terminate();
  }
}

/** A request through node:http, whose target is sent exactly as given (no URL normalization). */
export function rawRequest(
  port: number,
  method: string,
  target: string,
  headers: Readonly<Record<string, string>> = {},
  body?: string | Buffer,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: '127.0.0.1', port, method, path: target, headers },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text === '' ? undefined : JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            text,
            json,
          });
        });
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}
