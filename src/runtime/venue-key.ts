/**
 * What the bot knows of its own venue key: valid, expiring soon, expired or revoked.
 *
 * - A `KEY_REVOKED` or `KEY_EXPIRED` answer from the venue (any call of the execution venue,
 *   or the private stream's failure) ends the key for this process: `onEnded` halts trading at
 *   once, and every later call of the wrapped venue is refused here, without a request, with
 *   the same code. A dead key cannot come back, so there is nothing to retry: the shutdown's
 *   own calls fail at once instead of waiting on the network.
 * - A key with an `expires_at` is warned about a configurable lead before it (`warningLeadMs`),
 *   and ended at `expires_at` itself should no call have told it sooner.
 *
 * Time only through the clock: the expiry is looked at every `checkMs` (a timer of weeks would
 * overflow), so the warning comes at most that late.
 */
import { BehaviorSubject, type Observable } from 'rxjs';
import { type Clock, isoTimestamp, type TimerHandle } from '../core/clock.ts';
import { durationText, parseDurationText } from '../core/duration.ts';
import { isPaperbotError, PaperbotError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { ExecutionVenue } from './venue.ts';

export type VenueKeyState = 'valid' | 'expiring' | 'expired' | 'revoked';

export interface VenueKeyStatus {
  readonly state: VenueKeyState;
  readonly keyId: string | null;
  /** RFC 3339, or null for a key that does not expire. */
  readonly expiresAt: string | null;
  /** One line a person reads; null while valid. */
  readonly reason: string | null;
  /** Epoch milliseconds of the last change of state. */
  readonly since: number;
}

export interface VenueKeyWatchOptions {
  readonly clock: Clock;
  readonly keyId: string | null;
  readonly expiresAt: string | null;
  /** How long before `expiresAt` to warn; null never warns. */
  readonly warningLeadMs: number | null;
  readonly logger?: Logger;
  /** Called once when the key ends (revoked or expired): halt trading. */
  readonly onEnded: (reason: string) => void;
  /** How often the expiry is looked at. Default 60 000 ms. */
  readonly checkMs?: number;
}

const ENDING_CODES: Readonly<Record<string, 'revoked' | 'expired'>> = {
  KEY_REVOKED: 'revoked',
  KEY_EXPIRED: 'expired',
};

/** `revoked` or `expired` when `error` (or one of its causes) is the venue saying so. */
export function keyEndingOf(error: unknown): 'revoked' | 'expired' | null {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    if (isPaperbotError(current) && Object.hasOwn(ENDING_CODES, current.code)) {
      return ENDING_CODES[current.code] ?? null;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/** `30s`, `90m`, `24h`, `7d` (or a whole number of milliseconds) in milliseconds; null if not one. */
export function parseLeadTime(text: string | number): number | null {
  if (typeof text === 'number') return Number.isSafeInteger(text) && text >= 0 ? text : null;
  return parseDurationText(text);
}

export class VenueKeyWatch {
  private readonly subject: BehaviorSubject<VenueKeyStatus>;
  private readonly expiresAtMs: number | null;
  private timer: TimerHandle | undefined;

  constructor(private readonly options: VenueKeyWatchOptions) {
    const parsed = options.expiresAt === null ? Number.NaN : Date.parse(options.expiresAt);
    this.expiresAtMs = Number.isFinite(parsed) ? parsed : null;
    this.subject = new BehaviorSubject<VenueKeyStatus>({
      state: 'valid',
      keyId: options.keyId,
      expiresAt: options.expiresAt,
      reason: null,
      since: options.clock.now(),
    });
    if (this.expiresAtMs !== null) {
      this.checkExpiry();
      if (!this.ended) {
        this.timer = options.clock.setInterval(() => this.checkExpiry(), options.checkMs ?? 60_000);
      }
    }
  }

  get status(): VenueKeyStatus {
    return this.subject.value;
  }

  get status$(): Observable<VenueKeyStatus> {
    return this.subject.asObservable();
  }

  get ended(): boolean {
    const state = this.subject.value.state;
    return state === 'revoked' || state === 'expired';
  }

  /** Looks at a venue failure; true when it ended the key. */
  observe(error: unknown): boolean {
    const ending = keyEndingOf(error);
    if (ending === null) return false;
    const message = error instanceof Error ? error.message : String(error);
    this.end(ending, `the venue answered KEY_${ending.toUpperCase()}: ${message}`);
    return true;
  }

  /**
   * The venue with every call watched: a key-ending answer ends the key; once ended, calls are
   * refused here with the same code and never reach the venue.
   */
  wrap(venue: ExecutionVenue): ExecutionVenue {
    const guard = <T>(work: () => Promise<T>): Promise<T> => {
      const refusal = this.refusal();
      if (refusal !== null) return Promise.reject(refusal);
      return work().catch((error: unknown) => {
        this.observe(error);
        throw error;
      });
    };
    const watched: ExecutionVenue = {
      ...(venue.abortable === undefined ? {} : { abortable: venue.abortable }),
      ...(venue.cannotHang === undefined ? {} : { cannotHang: venue.cannotHang }),
      prepare: (command) => venue.prepare(command),
      restore: (endpoint, path, bodyBytes) => venue.restore(endpoint, path, bodyBytes),
      send: (prepared, signal, timeoutMs) => guard(() => venue.send(prepared, signal, timeoutMs)),
      getRequest: (requestId) => guard(() => venue.getRequest(requestId)),
      getOrder: (orderId) => guard(() => venue.getOrder(orderId)),
      getOrderByClientId: (clientOrderId) => guard(() => venue.getOrderByClientId(clientOrderId)),
      listOpenOrders: () => guard(() => venue.listOpenOrders()),
      listPositions: () => guard(() => venue.listPositions()),
      getAccount: () => guard(() => venue.getAccount()),
      riskEvents$: venue.riskEvents$,
      resync$: venue.resync$,
      privateStream: venue.privateStream,
    };
    return watched;
  }

  dispose(): void {
    this.options.clock.clearInterval(this.timer);
    this.timer = undefined;
    this.subject.complete();
  }

  private refusal(): PaperbotError | null {
    if (!this.ended) return null;
    const state = this.subject.value.state;
    const code = state === 'revoked' ? 'KEY_REVOKED' : 'KEY_EXPIRED';
    return new PaperbotError(code, `not sent: the venue key is ${state} (${this.status.reason})`, {
      retryable: false,
      details: { httpStatus: 401, source: 'local' },
    });
  }

  private checkExpiry(): void {
    const expiresAt = this.expiresAtMs;
    if (expiresAt === null || this.ended) return;
    const now = this.options.clock.now();
    if (now >= expiresAt) {
      this.end('expired', `the venue key expired at ${this.options.expiresAt}`);
      return;
    }
    const lead = this.options.warningLeadMs;
    if (lead === null || now < expiresAt - lead || this.subject.value.state === 'expiring') return;
    const reason = `the venue key expires at ${this.options.expiresAt} (in ${durationText(expiresAt - now)}): make a new key before then`;
    this.subject.next({ ...this.subject.value, state: 'expiring', reason, since: now });
    this.options.logger?.warn(reason, {
      event: 'venue_key.expiring',
      key_id: this.options.keyId,
      expires_at: this.options.expiresAt,
      warned_at: isoTimestamp(now),
    });
  }

  private end(state: 'revoked' | 'expired', reason: string): void {
    if (this.ended) return;
    const now = this.options.clock.now();
    this.subject.next({ ...this.subject.value, state, reason, since: now });
    this.options.clock.clearInterval(this.timer);
    this.timer = undefined;
    this.options.logger?.error(
      `${reason}; trading halted, nothing more is sent with this key (a new key file and a restart are needed)`,
      { event: `venue_key.${state}`, key_id: this.options.keyId },
    );
    this.options.onEnded(`venue key ${state}: ${reason}`);
  }
}
