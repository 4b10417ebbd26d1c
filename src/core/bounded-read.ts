/**
 * Bounds for one outbound HTTP read of the command line (`paperbot status`, the emulator's admin
 * client): a total deadline, whatever the server trickles, and a size cap on the answer. Both end
 * in a PaperbotError with a stable code, `READ_TIMEOUT` or `RESPONSE_TOO_LARGE`.
 */
import type { Clock } from './clock.ts';
import { PaperbotError } from './errors.ts';

export interface ReadLimits {
  /** For the whole exchange: connect, headers and body. */
  readonly timeoutMs: number;
  readonly maxBytes: number;
}

export interface Deadline {
  readonly signal: AbortSignal;
  /** True once the deadline has passed (the signal fired for it). */
  expired(): boolean;
  /** Stops the timer; call it when the read is over. */
  dispose(): void;
}

/** An AbortSignal that fires `timeoutMs` from now on `clock`. */
export function deadlineOf(clock: Clock, timeoutMs: number): Deadline {
  const controller = new AbortController();
  let expired = false;
  const handle = clock.setTimeout(() => {
    expired = true;
    controller.abort(
      new PaperbotError('READ_TIMEOUT', `no complete answer within ${timeoutMs} ms`),
    );
  }, timeoutMs);
  return {
    signal: controller.signal,
    expired: () => expired,
    dispose: () => clock.clearTimeout(handle),
  };
}

/** The body as UTF-8 text, refused (and destroyed) once it passes `maxBytes`. */
export async function readAtMost(
  body: AsyncIterable<Uint8Array> & { destroy(): unknown },
  maxBytes: number,
): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > maxBytes) {
      body.destroy();
      throw new PaperbotError('RESPONSE_TOO_LARGE', `the answer is larger than ${maxBytes} bytes`, {
        details: { limit_bytes: maxBytes },
      });
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

/** The error to report for a failed bounded read: the deadline's own when it fired. */
export function boundedReadFailure(error: unknown, deadline: Deadline, timeoutMs: number): unknown {
  if (deadline.expired()) {
    return new PaperbotError('READ_TIMEOUT', `no complete answer within ${timeoutMs} ms`, {
      cause: error,
    });
  }
  return error;
}
