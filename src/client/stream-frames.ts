/**
 * Frames on the stream's socket: a message read into a frame (tolerantly, contract section 7,
 * drift reported to the REST client's reading monitor), and client frames matched with the
 * replies that answer them (the challenge, `authenticated`, `subscribed`, `unsubscribed`,
 * `pong`), each waited for with a timeout on the client's clock.
 */
import WebSocket from 'ws';
import type { Clock, TimerHandle } from '../core/clock.ts';
import { readServerFrameWith, type ServerFrameReading } from '../protocol/index.ts';
import { excerptOf, VenueError } from './errors.ts';
import type { ReadingMonitor } from './reading-monitor.ts';
import { tlsFailureOf } from './tls-errors.ts';

export function streamError(
  code: string,
  message: string,
  extra: {
    cause?: unknown;
    details?: Record<string, unknown>;
    retryable?: boolean;
  } = {},
): VenueError {
  return new VenueError(code, message, { source: 'transport', ...extra });
}

/** A TLS failure named with its advice; other socket errors by their message. */
export function describeSocketError(error: Error): string {
  const tls = tlsFailureOf((error as NodeJS.ErrnoException).code);
  return tls === null ? error.message : `TLS failed (${tls.code}): ${tls.advice}`;
}

export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

export const STREAM_SOURCE = { where: 'stream' } as const;

/** A message read: a frame (frozen), or why it could not be read and the text that was sent. */
export type MessageReading =
  | { readonly reading: ServerFrameReading; readonly problem?: undefined }
  | { readonly problem: string; readonly text: string };

/** Reads one message of the socket into a frame. */
export function readMessage(data: WebSocket.RawData, monitor: ReadingMonitor): MessageReading {
  // A frame arrives as one Buffer (ws's default): read it in place, not through a copy.
  const text = Buffer.isBuffer(data)
    ? data.toString('utf8')
    : Array.isArray(data)
      ? Buffer.concat(data).toString('utf8')
      : Buffer.from(data).toString('utf8');
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return { problem: 'a frame is not JSON', text };
  }
  const { reading, drift } = readServerFrameWith(document, monitor.mode);
  if (drift.length > 0) monitor.report(STREAM_SOURCE, drift);
  if (reading.kind === 'malformed') {
    monitor.refused(STREAM_SOURCE, `stream: ${reading.problem}`);
    return { problem: reading.problem, text };
  }
  return { reading: deepFreeze(reading) };
}

/** The error a frame that could not be read becomes. */
export function malformedFrame(problem: string, text: string): VenueError {
  return new VenueError('MALFORMED_RESPONSE', `stream: ${problem}`, {
    source: 'transport',
    bodyExcerpt: excerptOf(text),
  });
}

interface Waiter {
  readonly resolve: (reading: ServerFrameReading) => void;
  readonly reject: (error: unknown) => void;
  readonly timer: TimerHandle;
  /** The confirmation kind that answers it (`authenticated` for auth); null for the challenge. */
  readonly answeredBy: ServerFrameReading['kind'] | null;
}

/** The confirmation that answers each client frame. */
const ANSWER_OF: Readonly<Record<string, ServerFrameReading['kind']>> = {
  auth: 'authenticated',
  subscribe: 'subscribed',
  unsubscribe: 'unsubscribed',
  ping: 'pong',
};

/** The client frames waiting for their reply, and the challenge waited for on a new socket. */
export class StreamReplies {
  private frameCounter = 0;
  private challengeWaiter: Waiter | null = null;
  private readonly replyWaiters = new Map<string, Waiter>();

  constructor(private readonly clock: Clock) {}

  /** Waits for the challenge a new socket's service sends first. */
  waitForChallenge(timeoutMs: number): Promise<ServerFrameReading> {
    return new Promise((resolve, reject) => {
      const timer = this.clock.setTimeout(() => {
        this.challengeWaiter = null;
        reject(
          streamError('REQUEST_TIMEOUT', `no challenge within ${timeoutMs} ms`, {
            retryable: true,
          }),
        );
      }, timeoutMs);
      this.challengeWaiter = { resolve, reject, timer, answeredBy: null };
    });
  }

  answerChallenge(reading: ServerFrameReading): void {
    this.takeChallengeWaiter()?.resolve(reading);
  }

  /** The challenge's waiter, no longer waiting (its timer cleared); null when none waits. */
  private takeChallengeWaiter(): Waiter | null {
    const waiter = this.challengeWaiter;
    this.challengeWaiter = null;
    if (waiter !== null) this.clock.clearTimeout(waiter.timer);
    return waiter;
  }

  /** Sends a client frame and waits for the reply carrying its request id. */
  request(
    socket: WebSocket | null,
    generation: number,
    frame: Record<string, unknown>,
    timeoutMs: number,
  ): Promise<ServerFrameReading> {
    if (socket === null || socket.readyState !== WebSocket.OPEN) {
      return Promise.reject(
        streamError('TRANSPORT_FAILURE', 'the stream is not connected', {
          retryable: true,
        }),
      );
    }
    this.frameCounter += 1;
    const requestId = `ws-${generation}-${this.frameCounter}`;
    return new Promise<ServerFrameReading>((resolve, reject) => {
      const timer = this.clock.setTimeout(() => {
        this.replyWaiters.delete(requestId);
        reject(
          streamError(
            'REQUEST_TIMEOUT',
            `no answer to ${String(frame.op)} within ${timeoutMs} ms`,
            { retryable: true },
          ),
        );
      }, timeoutMs);
      this.replyWaiters.set(requestId, {
        resolve,
        reject,
        timer,
        answeredBy: ANSWER_OF[String(frame.op)] ?? null,
      });
      socket.send(JSON.stringify({ ...frame, request_id: requestId }), (error) => {
        if (error === undefined || error === null) return;
        this.reject(
          requestId,
          streamError('TRANSPORT_FAILURE', 'could not send a frame', {
            cause: error,
          }),
        );
      });
    });
  }

  /**
   * Answers the waiter of `requestId`; a confirmation without a request id we sent (the
   * interface does not show its fields) answers the oldest waiter of its kind instead.
   */
  resolve(requestId: string | null | undefined, reading: ServerFrameReading): void {
    let id = typeof requestId === 'string' && this.replyWaiters.has(requestId) ? requestId : null;
    if (id === null) {
      for (const [candidate, waiter] of this.replyWaiters) {
        if (waiter.answeredBy === reading.kind) {
          id = candidate;
          break;
        }
      }
    }
    if (id === null) return;
    const waiter = this.replyWaiters.get(id)!;
    this.replyWaiters.delete(id);
    this.clock.clearTimeout(waiter.timer);
    waiter.resolve(reading);
  }

  /** Refuses the waiter of `requestId` with `error`; false when none waits under that id. */
  reject(requestId: string | null, error: unknown): boolean {
    const waiter = requestId === null ? undefined : this.replyWaiters.get(requestId);
    if (waiter === undefined || requestId === null) return false;
    this.replyWaiters.delete(requestId);
    this.clock.clearTimeout(waiter.timer);
    waiter.reject(error);
    return true;
  }

  /** The socket is gone: every waiter, the challenge's included, is refused with `error`. */
  rejectAll(error: unknown): void {
    this.takeChallengeWaiter()?.reject(error);
    for (const [requestId, reply] of this.replyWaiters) {
      this.clock.clearTimeout(reply.timer);
      reply.reject(error);
      this.replyWaiters.delete(requestId);
    }
  }
}
