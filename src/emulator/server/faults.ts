/**
 * Test faults, all off by default and reachable only in-process or through the admin API:
 * answer an error instead of the result (with or without committing the mutation first),
 * commit then drop the connection without a response, commit then delay the response on the
 * injected clock, and drop or duplicate private WebSocket frames (the next N, or each with a
 * probability drawn from the seeded generator, so a seed replays the same losses).
 */
import type { EndpointName } from '../../protocol/index.ts';
import { Random } from '../random.ts';

export type FailureCode = 'EXECUTION_UNAVAILABLE' | 'ORDER_CONFIRMATION_PENDING' | 'RATE_LIMITED';
export const FAILURE_CODES: readonly FailureCode[] = [
  'EXECUTION_UNAVAILABLE',
  'ORDER_CONFIRMATION_PENDING',
  'RATE_LIMITED',
];

/** Which requests a fault applies to. With neither field: every mutation. */
export interface RequestMatch {
  /** Only this endpoint (mutation or not). */
  readonly endpoint?: EndpointName;
  /** Only requests whose body carries this request_id. */
  readonly requestId?: string;
}

export interface FailOptions extends RequestMatch {
  readonly code: FailureCode;
  /** How many matching requests get the answer (default 1). */
  readonly count?: number;
  /**
   * Run the mutation before answering the error. Default: true for ORDER_CONFIRMATION_PENDING
   * (the order exists but its confirmation is late), false otherwise (nothing happened).
   */
  readonly commit?: boolean;
  /** Retry-After of a RATE_LIMITED answer (default 1). */
  readonly retryAfterSeconds?: number;
}

export interface DropResponseOptions extends RequestMatch {
  readonly count?: number;
}

export interface DelayResponseOptions extends RequestMatch {
  readonly delayMs: number;
  readonly count?: number;
}

export type RequestFault =
  | {
      readonly kind: 'fail';
      readonly code: FailureCode;
      readonly commit: boolean;
      readonly retryAfterSeconds: number;
    }
  | { readonly kind: 'drop' }
  | { readonly kind: 'delay'; readonly delayMs: number };

export interface FrameFaultOptions {
  /** Affect the next `count` private frames (default: unlimited when a probability is given, else 1). */
  readonly count?: number;
  /** Affect each private frame with this probability (seeded). */
  readonly probability?: number;
}

export type FrameFault = 'drop' | 'duplicate';

interface RequestRule {
  readonly fault: RequestFault;
  readonly match: RequestMatch;
  remaining: number;
}

interface FrameRule {
  readonly fault: FrameFault;
  readonly probability: number | null;
  remaining: number;
}

export interface FaultSnapshot {
  readonly requests: {
    fault: RequestFault;
    match: RequestMatch;
    remaining: number;
  }[];
  readonly frames: {
    fault: FrameFault;
    probability: number | null;
    remaining: number | null;
  }[];
}

function positiveCount(count: number | undefined, fallback: number): number {
  const value = count ?? fallback;
  if (!(value === Number.POSITIVE_INFINITY || (Number.isSafeInteger(value) && value >= 1))) {
    throw new RangeError('count must be a positive integer');
  }
  return value;
}

export class FaultController {
  readonly #requestRules: RequestRule[] = [];
  readonly #frameRules: FrameRule[] = [];
  readonly #random: Random;

  constructor(seed: string) {
    this.#random = new Random(`${seed}/server-faults`);
  }

  fail(options: FailOptions): void {
    const retryAfterSeconds = options.retryAfterSeconds ?? 1;
    if (!Number.isSafeInteger(retryAfterSeconds) || retryAfterSeconds < 0) {
      throw new RangeError('retryAfterSeconds must be a non-negative integer');
    }
    this.#addRequestRule(
      {
        kind: 'fail',
        code: options.code,
        commit: options.commit ?? options.code === 'ORDER_CONFIRMATION_PENDING',
        retryAfterSeconds,
      },
      options,
      options.count,
    );
  }

  dropResponses(options: DropResponseOptions = {}): void {
    this.#addRequestRule({ kind: 'drop' }, options, options.count);
  }

  delayResponses(options: DelayResponseOptions): void {
    if (!Number.isSafeInteger(options.delayMs) || options.delayMs < 0) {
      throw new RangeError('delayMs must be a non-negative integer');
    }
    this.#addRequestRule({ kind: 'delay', delayMs: options.delayMs }, options, options.count);
  }

  dropFrames(options: FrameFaultOptions = {}): void {
    this.#addFrameRule('drop', options);
  }

  duplicateFrames(options: FrameFaultOptions = {}): void {
    this.#addFrameRule('duplicate', options);
  }

  clear(): void {
    this.#requestRules.length = 0;
    this.#frameRules.length = 0;
  }

  /** The fault for this request, consumed; null when none applies. */
  takeRequestFault(
    endpoint: EndpointName,
    mutation: boolean,
    requestId: string | undefined,
  ): RequestFault | null {
    if (this.#requestRules.length === 0) return null;
    for (let index = 0; index < this.#requestRules.length; index++) {
      const rule = this.#requestRules[index]!;
      const { match } = rule;
      if (match.endpoint !== undefined ? match.endpoint !== endpoint : !mutation) continue;
      if (match.requestId !== undefined && match.requestId !== requestId) continue;
      rule.remaining -= 1;
      if (rule.remaining <= 0) this.#requestRules.splice(index, 1);
      return rule.fault;
    }
    return null;
  }

  /** What happens to the next private frame: null (sent once), drop or duplicate. */
  takeFrameFault(): FrameFault | null {
    if (this.#frameRules.length === 0) return null;
    for (let index = 0; index < this.#frameRules.length; index++) {
      const rule = this.#frameRules[index]!;
      if (rule.probability !== null && !this.#random.chance(rule.probability)) continue;
      rule.remaining -= 1;
      if (rule.remaining <= 0) this.#frameRules.splice(index, 1);
      return rule.fault;
    }
    return null;
  }

  snapshot(): FaultSnapshot {
    return {
      requests: this.#requestRules.map((rule) => ({
        fault: rule.fault,
        match: rule.match,
        remaining: rule.remaining,
      })),
      frames: this.#frameRules.map((rule) => ({
        fault: rule.fault,
        probability: rule.probability,
        remaining: Number.isFinite(rule.remaining) ? rule.remaining : null,
      })),
    };
  }

  #addRequestRule(fault: RequestFault, match: RequestMatch, count: number | undefined): void {
    const rule: RequestRule = {
      fault,
      match: {
        ...(match.endpoint === undefined ? {} : { endpoint: match.endpoint }),
        ...(match.requestId === undefined ? {} : { requestId: match.requestId }),
      },
      remaining: positiveCount(count, 1),
    };
    this.#requestRules.push(rule);
  }

  #addFrameRule(fault: FrameFault, options: FrameFaultOptions): void {
    const probability = options.probability ?? null;
    if (probability !== null && !(probability >= 0 && probability <= 1)) {
      throw new RangeError('probability must be between 0 and 1');
    }
    const fallback = probability === null ? 1 : Number.POSITIVE_INFINITY;
    this.#frameRules.push({
      fault,
      probability,
      remaining: positiveCount(options.count, fallback),
    });
  }
}
