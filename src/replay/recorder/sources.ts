/**
 * Recorder sources. `clientSource` reads a service (or an emulator) through the typed client:
 * tickers from the stream, books, trades and markets (their funding) from REST, private events from the stream when
 * the client has a key. `exchangeSource` reads an emulator running in this process (the same
 * objects its endpoints serve), which is how sample sessions are recorded on virtual time.
 */
import { filter, map } from 'rxjs';
import type { RestClient, StreamClient } from '../../client/index.ts';
import type { Exchange } from '../../emulator/index.ts';
import type {
  Book,
  Candle,
  Market,
  PrivateEvent,
  PublicTrade,
  TickerData,
} from '../../protocol/index.ts';
import type { GapListener, RecorderSource } from './recorder.ts';

export interface ClientSourceOptions {
  readonly rest: RestClient;
  readonly stream: StreamClient;
  /** Follow the stream's private events (the stream client needs a key with those scopes). */
  readonly privateEvents: boolean;
}

export function clientSource(options: ClientSourceOptions): RecorderSource {
  const { rest, stream } = options;
  const source: RecorderSource = {
    onTicker(marketId, listener) {
      const subscription = stream
        .ticker$(marketId)
        .pipe(map((frame) => frame.data))
        .subscribe(listener);
      return () => subscription.unsubscribe();
    },
    getBook: (marketId, depth): Promise<Book> => rest.getBook({ market_id: marketId }, { depth }),
    listTrades: (marketId, limit): Promise<PublicTrade[]> =>
      rest.listTrades({ market_id: marketId }, { limit }),
    getMarket: (marketId): Promise<Market> => rest.getMarket({ market_id: marketId }),
    listCandles: (marketId, interval, limit): Promise<Candle[]> =>
      rest.listCandles({ market_id: marketId }, { interval, limit }),
    onGap(listener: GapListener) {
      // Leaving `live` for a backoff means a reconnect: tickers resume with a fresh snapshot.
      const states = stream.state$
        .pipe(filter((state) => state === 'backoff'))
        .subscribe(() =>
          listener('ticker', 'the stream disconnected; tickers resume with a snapshot'),
        );
      const resyncs = stream.resync$.subscribe((signal) =>
        listener('private', `private stream resync (${signal.reason}): ${signal.message}`),
      );
      return () => {
        states.unsubscribe();
        resyncs.unsubscribe();
      };
    },
  };
  if (!options.privateEvents) return source;
  return {
    ...source,
    onPrivateEvent(listener: (event: PrivateEvent) => void) {
      const subscription = stream.events$.subscribe(listener);
      return () => subscription.unsubscribe();
    },
  };
}

export interface ExchangeSourceOptions {
  readonly exchange: Exchange;
  /** The account whose private events are recorded; null for none. */
  readonly accountId?: string | null;
}

export function exchangeSource(options: ExchangeSourceOptions): RecorderSource {
  const { exchange } = options;
  const accountId = options.accountId ?? null;
  const source: RecorderSource = {
    onTicker(marketId, listener: (data: TickerData) => void) {
      return exchange.onTicker((id, data) => {
        if (id === marketId) listener(data);
      });
    },
    getBook: async (marketId, depth) => exchange.getBook(marketId, depth),
    listTrades: async (marketId, limit) => exchange.listTradesWithPast(marketId, limit),
    getMarket: async (marketId) => exchange.getMarket(marketId),
    listCandles: async (marketId, interval, limit) =>
      exchange.listCandlesWithPast(marketId, interval, limit),
  };
  if (accountId === null) return source;
  return {
    ...source,
    onPrivateEvent(listener: (event: PrivateEvent) => void) {
      return exchange.onPrivateEvent((id, event) => {
        if (id === accountId) listener(event);
      });
    },
  };
}
