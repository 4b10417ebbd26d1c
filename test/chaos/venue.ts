/**
 * The venues a chaos scenario trades on, each with the truth the counting reads after the run:
 * the real emulator (in this process, on a real loopback port, system clock) or the minimal
 * server of test/chaos/minimal-server. Orders and fills are read from the venue's own state,
 * not through the bot or its client.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.ts';
import { BUY, SELL } from '../../src/emulator/engine/order-book.ts';
import { writeKeyFile } from '../../src/signing/index.ts';
import { type MinimalServerOptions, startMinimalServer } from './minimal-server/server.ts';

export interface VenueOrder {
  readonly order_id: string;
  readonly client_order_id: string | null;
  readonly request_id: string | null;
  readonly status: string;
}

export interface VenueFill {
  readonly fill_id: string;
  readonly order_id: string | null;
}

export interface ChaosVenue {
  /** `http://127.0.0.1:port` */
  readonly baseUrl: string;
  readonly kind: 'emulator' | 'minimal';
  /** A key file (mode 0600) for a fresh account whose URLs point at `proxyBase`. */
  writeKey(directory: string, proxyBase: string): Promise<{ path: string; accountId: string }>;
  orders(accountId: string): VenueOrder[];
  fills(accountId: string): VenueFill[];
  /** Makes the market trade through some of the account's resting orders (fills while down). */
  crossRestingOrders(accountId: string): number;
  /** Resolves `count` times on the account's cancel-all-after expiry. */
  onDeadlineFired(accountId: string, listener: () => void): () => void;
  /** Stops price moves (no new fills) before the bot is stopped. */
  quiesce(): void;
  readonly emulator: RunningEmulator | null;
  close(): Promise<void>;
}

export const ACTIVE_STATUSES = new Set(['PENDING', 'SUBMITTED', 'OPEN', 'PARTIALLY_FILLED']);

function rewriteKeyUrls(path: string, proxyBase: string): void {
  const file = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  file.api_base_url = proxyBase;
  file.ws_url = `${proxyBase.replace(/^http/, 'ws')}/v1/ws`;
  writeFileSync(path, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
}

function allPages<T>(
  read: (cursor: string | undefined) => {
    data: T[];
    page: { next_cursor: string | null; has_more: boolean };
  },
): T[] {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 10_000; page++) {
    const answer = read(cursor);
    items.push(...answer.data);
    if (!answer.page.has_more || answer.page.next_cursor === null) return items;
    cursor = answer.page.next_cursor;
  }
  throw new Error('more than 10,000 pages at the venue');
}

export async function startEmulatorVenue(options: {
  seed: string;
  heartbeatIntervalMs?: number;
}): Promise<ChaosVenue> {
  const emulator = await startEmulator({
    seed: options.seed,
    heartbeatIntervalMs: options.heartbeatIntervalMs ?? 2_000,
  });
  const exchange = emulator.exchange;
  return {
    baseUrl: emulator.baseUrl,
    kind: 'emulator',
    emulator,
    async writeKey(directory, proxyBase) {
      const credential = emulator.createKey();
      const path = join(directory, 'bot.key.json');
      await writeKeyFile(path, credential, { overwrite: true });
      rewriteKeyUrls(path, proxyBase);
      return { path, accountId: credential.accountId };
    },
    orders: (accountId) =>
      allPages((cursor) =>
        exchange.listOrders(accountId, { limit: 200, ...(cursor === undefined ? {} : { cursor }) }),
      ),
    fills: (accountId) =>
      allPages((cursor) =>
        exchange.listFills(accountId, { limit: 200, ...(cursor === undefined ? {} : { cursor }) }),
      ),
    crossRestingOrders(accountId) {
      // A synthetic taker trades through the account's best resting order of each side, down
      // (or up) to its price: the account's order fills while the bot may be away.
      const resting = allPages((cursor) =>
        exchange.listOrders(accountId, { limit: 200, ...(cursor === undefined ? {} : { cursor }) }),
      ).filter((order) => ACTIVE_STATUSES.has(order.status) && order.price !== null);
      const best = new Map<string, (typeof resting)[number]>();
      for (const order of resting) {
        const key = `${order.market_id}/${order.side}`;
        const seen = best.get(key);
        const better =
          seen === undefined ||
          (order.side === 'buy'
            ? Number(order.price) > Number(seen.price)
            : Number(order.price) < Number(seen.price));
        if (better) best.set(key, order);
      }
      let traded = 0;
      for (const order of best.values()) {
        const tick = Number(exchange.getMarket(order.market_id).price_tick ?? '1');
        const limitTicks = Math.round(Number(order.price) / tick);
        traded += exchange.submitSyntheticOrder(
          order.market_id,
          order.side === 'buy' ? SELL : BUY,
          200,
          limitTicks,
        );
      }
      return traded;
    },
    onDeadlineFired(accountId, listener) {
      return exchange.onPrivateEvent((account, event) => {
        if (account === accountId && event.type === 'cancel_all_after.triggered') listener();
      });
    },
    quiesce: () => emulator.controls.pauseFeed(),
    close: () => emulator.close(),
  };
}

export async function startMinimalVenue(options: MinimalServerOptions): Promise<ChaosVenue> {
  const server = await startMinimalServer(options);
  return {
    baseUrl: server.baseUrl,
    kind: 'minimal',
    emulator: null,
    async writeKey(directory, proxyBase) {
      const path = join(directory, 'bot.key.json');
      const accountId = server.writeKeyFile(path, proxyBase);
      return { path, accountId };
    },
    orders: (accountId) => server.orders(accountId),
    fills: (accountId) => server.fills(accountId),
    crossRestingOrders: (accountId) => server.crossRestingOrders(accountId),
    onDeadlineFired: (accountId, listener) => server.onDeadlineFired(accountId, listener),
    quiesce: () => server.quiesce(),
    close: () => server.close(),
  };
}
