/**
 * Test helpers of the client tests: waiting on real I/O by yielding event-loop turns (never
 * by sleeping), a clock that lets short waits pass at once, and small stub HTTP servers.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RestClient, StreamClient, type StreamClientOptions } from '../../src/client/index.ts';
import type { Clock, TimerHandle, VirtualClock } from '../../src/core/clock.ts';
import type { Credential } from '../../src/signing/index.ts';
import type { ReadingMode } from '../../src/protocol/index.ts';

/** One turn of the event loop, so pending socket I/O can progress. */
export function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Yields event-loop turns until `predicate` holds. Bounded, so a broken expectation fails the
 * test instead of hanging it.
 */
export async function until(
  predicate: () => boolean,
  description = 'a condition',
  maxTurns = 200_000,
): Promise<void> {
  for (let count = 0; count < maxTurns; count += 1) {
    if (predicate()) return;
    await turn();
  }
  throw new Error(`gave up waiting for ${description}`);
}

/** Resolves with the promise's outcome, recording whether it has settled. */
export function track<T>(promise: Promise<T>): {
  readonly promise: Promise<T>;
  settled: () => boolean;
} {
  let done = false;
  const tracked = promise.finally(() => {
    done = true;
  });
  tracked.catch(() => undefined);
  return { promise: tracked, settled: () => done };
}

/**
 * The client's view of a shared VirtualClock: a timer of at most `autoAdvanceMaxMs` (a retry
 * backoff, a Retry-After wait) moves the shared clock to its due time on the next turn, so the
 * wait passes in virtual time only. Longer timers (request timeouts) move only when the test
 * advances the clock. Both sides keep reading the same time, so signatures stay in the window.
 */
export class AutoAdvanceClock implements Clock {
  readonly waits: number[] = [];

  constructor(
    readonly base: VirtualClock,
    private readonly autoAdvanceMaxMs: number,
  ) {}

  get scheduler() {
    return this.base.scheduler;
  }

  now(): number {
    return this.base.now();
  }

  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    const handle = this.base.setTimeout(callback, delayMs);
    if (delayMs <= this.autoAdvanceMaxMs) {
      this.waits.push(delayMs);
      const dueAt = this.base.now() + delayMs;
      setImmediate(() => {
        if (this.base.now() < dueAt) this.base.advanceTo(dueAt);
      });
    }
    return handle;
  }

  clearTimeout(handle: TimerHandle | undefined): void {
    this.base.clearTimeout(handle);
  }

  setInterval(callback: () => void, periodMs: number): TimerHandle {
    return this.base.setInterval(callback, periodMs);
  }

  clearInterval(handle: TimerHandle | undefined): void {
    this.base.clearInterval(handle);
  }
}

export interface CapturedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Buffer;
}

export type StubHandler = (
  request: CapturedRequest,
  response: ServerResponse,
) => void | Promise<void>;

export interface StubServer {
  readonly baseUrl: string;
  readonly requests: CapturedRequest[];
  /** Replaces the handler; requests with no handler get a 599 so a test notices. */
  handle(handler: StubHandler): void;
  close(): Promise<void>;
}

/** A loopback HTTP server that records every request and answers with the current handler. */
export async function startStubServer(): Promise<StubServer> {
  const requests: CapturedRequest[] = [];
  let handler: StubHandler | null = null;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const captured: CapturedRequest = {
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks),
      };
      requests.push(captured);
      if (handler === null) {
        response.writeHead(599).end('no handler');
        return;
      }
      Promise.resolve(handler(captured, response)).catch((error: unknown) => {
        response.writeHead(599).end(String(error));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    handle(next) {
      handler = next;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

export function json(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    ...headers,
  });
  response.end(text);
}

/** 2025-01-01T00:00:00Z, the start of virtual time in these tests. */
export const START_MS = Date.UTC(2025, 0, 1);

export function envelope(code: string, message: string, retryable: boolean, details = {}) {
  return {
    error: { code, message, request_id: 'req_stub_1', retryable, details },
  };
}

/**
 * A REST client on a test's virtual clock: no jitter, one attempt, no timeout of its own; strict
 * reading unless a test of tolerant reading asks for it.
 */
export function virtualRestClient(
  credential: Credential,
  clock: Clock,
  reading: ReadingMode = 'strict',
): RestClient {
  return new RestClient({
    credential,
    clock,
    random: () => 0.5,
    requestTimeoutMs: 600_000,
    retry: { maxAttempts: 1 },
    // The emulator is read strictly, so that it cannot drift (contract section 7).
    reading,
  });
}

/** A stream client on a test's virtual clock whose own timeouts never fire in a test. */
export function virtualStreamClient(
  rest: RestClient,
  clock: Clock,
  options: Partial<StreamClientOptions> = {},
): StreamClient {
  return new StreamClient({
    rest,
    clock,
    random: () => 0.5,
    heartbeatTimeoutMs: 3_600_000,
    replyTimeoutMs: 3_600_000,
    connectTimeoutMs: 3_600_000,
    ...options,
  });
}
