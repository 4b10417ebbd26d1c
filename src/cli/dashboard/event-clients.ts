/**
 * The dashboard's live-update streams (Server-Sent Events), oldest first, within two caps: at
 * most MAXIMUM_EVENT_CLIENTS in all and MAXIMUM_EVENT_CLIENTS_PER_ADDRESS per client address.
 * A new stream over a cap takes the place of the oldest (of its own address, else of the
 * address holding the most), which is told `reaped` and closed: idle clients can never lock a
 * page out, and a reaped page polls the snapshot instead of reconnecting into someone's place.
 */

/** The part of a `ServerResponse` a stream needs. */
export interface EventStream {
  readonly writableLength: number;
  write(chunk: string): unknown;
  end(chunk?: string): unknown;
  destroy(): unknown;
}

export const MAXIMUM_EVENT_CLIENTS = 16;
export const MAXIMUM_EVENT_CLIENTS_PER_ADDRESS = 4;
/** A client that lets this much pile up unread is dropped. */
export const MAXIMUM_BUFFERED_BYTES = 4 * 1024 * 1024;

interface EventClient {
  readonly address: string;
  readonly response: EventStream;
}

/** The open event streams, oldest first, with the per-address and total caps. */
export class EventClients {
  /** Insertion order is age: the first is the oldest. */
  private readonly clients = new Map<EventStream, EventClient>();

  get size(): number {
    return this.clients.size;
  }

  /** Reaps what a new stream from `address` would put over a cap. */
  makeRoom(address: string): void {
    const own = [...this.clients.values()].filter((client) => client.address === address);
    if (own.length >= MAXIMUM_EVENT_CLIENTS_PER_ADDRESS && own[0] !== undefined) {
      this.reap(own[0]);
    }
    if (this.clients.size < MAXIMUM_EVENT_CLIENTS) return;
    const counts = new Map<string, number>();
    for (const client of this.clients.values()) {
      counts.set(client.address, (counts.get(client.address) ?? 0) + 1);
    }
    let busiest: string | null = null;
    for (const [candidate, count] of counts) {
      if (busiest === null || count > (counts.get(busiest) ?? 0)) busiest = candidate;
    }
    const oldest = [...this.clients.values()].find((client) => client.address === busiest);
    if (oldest !== undefined) this.reap(oldest);
  }

  add(address: string, response: EventStream): void {
    this.clients.set(response, { address, response });
  }

  delete(response: EventStream): void {
    this.clients.delete(response);
  }

  broadcast(frame: string): void {
    for (const client of [...this.clients.values()]) {
      // A client that lets this much pile up unread is dropped.
      if (client.response.writableLength > MAXIMUM_BUFFERED_BYTES) {
        client.response.destroy();
        this.clients.delete(client.response);
        continue;
      }
      client.response.write(frame);
    }
  }

  closeAll(): void {
    for (const client of this.clients.values()) client.response.end();
    this.clients.clear();
  }

  /** Told first, so its page polls instead of reconnecting into someone else's place. */
  private reap(client: EventClient): void {
    this.clients.delete(client.response);
    client.response.end('event: reaped\ndata: {"reason":"too many live-update streams"}\n\n');
  }
}
