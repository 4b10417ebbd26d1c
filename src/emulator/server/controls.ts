/**
 * The test controls of a running emulator, off until used, reachable only in-process (the
 * `controls` of `startEmulator`'s handle) or through the admin API with the admin token.
 */
import type { RouteHealth } from '../../protocol/index.ts';
import type { Exchange } from '../engine/exchange.ts';
import type {
  DelayResponseOptions,
  DropResponseOptions,
  FailOptions,
  FaultController,
  FaultSnapshot,
  FrameFaultOptions,
} from './faults.ts';
import type { RateLimiter, RateLimitSettings } from './rate-limit.ts';
import type { DisconnectOptions, WebSocketGateway } from './ws.ts';

export interface EmulatorControls {
  /** Freezes prices and quotes of one market (all when omitted); its data turns `stale`. */
  pauseFeed(marketId?: string): void;
  resumeFeed(marketId?: string): void;
  /** `degraded` or `disabled` refuse new orders with ROUTE_NOT_READY; /ready answers 503. */
  setRouteHealth(health: RouteHealth): void;
  /**
   * The next `count` matching requests (default: any mutation) are answered with `code`:
   * EXECUTION_UNAVAILABLE (503), ORDER_CONFIRMATION_PENDING (409, the mutation committed first)
   * or RATE_LIMITED (429 with Retry-After).
   */
  failRequests(options: FailOptions): void;
  /** Commits the next matching mutations, then closes the connection without a response. */
  dropResponses(options?: DropResponseOptions): void;
  /** Commits the next matching mutations, then answers after `delayMs` of the emulator clock. */
  delayResponses(options: DelayResponseOptions): void;
  /** Drops the next `count` private WebSocket frames, or each with `probability` (seeded). */
  dropFrames(options?: FrameFaultOptions): void;
  /** Sends the next `count` private WebSocket frames twice, or each with `probability`. */
  duplicateFrames(options?: FrameFaultOptions): void;
  /** Closes every WebSocket connection; returns how many were open. */
  disconnectWebSockets(options?: DisconnectOptions): number;
  /** Makes armed cancel-all-after deadlines pass now (one account's, or all). */
  fireCancelAllAfter(accountId?: string): void;
  /** Replaces the per-key quota and window (counts start over). */
  setRateLimit(settings: RateLimitSettings): void;
  /** Removes every request and frame fault. Feed pauses and route health stay as set. */
  clearFaults(): void;
  faults(): FaultSnapshot;
}

export function createControls(parts: {
  readonly exchange: Exchange;
  readonly faults: FaultController;
  readonly gateway: WebSocketGateway;
  readonly rateLimiter: RateLimiter;
}): EmulatorControls {
  const { exchange, faults, gateway, rateLimiter } = parts;
  return {
    pauseFeed: (marketId) => exchange.controls.pauseFeed(marketId),
    resumeFeed: (marketId) => exchange.controls.resumeFeed(marketId),
    setRouteHealth: (health) => exchange.controls.setRouteHealth(health),
    failRequests: (options) => faults.fail(options),
    dropResponses: (options) => faults.dropResponses(options),
    delayResponses: (options) => faults.delayResponses(options),
    dropFrames: (options) => faults.dropFrames(options),
    duplicateFrames: (options) => faults.duplicateFrames(options),
    disconnectWebSockets: (options) => gateway.disconnectAll(options),
    fireCancelAllAfter: (accountId) => exchange.controls.fireCancelAllAfter(accountId),
    setRateLimit: (settings) => rateLimiter.configure(settings),
    clearFaults: () => faults.clear(),
    faults: () => faults.snapshot(),
  };
}
