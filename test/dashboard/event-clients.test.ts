/**
 * The live-update slots with fake streams: a stream per address at most
 * MAXIMUM_EVENT_CLIENTS_PER_ADDRESS (the address's oldest gives way), at most
 * MAXIMUM_EVENT_CLIENTS in all (the busiest address's oldest gives way), each reaped stream
 * told `reaped` before it is closed, and a client that stops reading dropped.
 */
import { describe, expect, it } from 'vitest';
import {
  EventClients,
  type EventStream,
  MAXIMUM_BUFFERED_BYTES,
  MAXIMUM_EVENT_CLIENTS,
  MAXIMUM_EVENT_CLIENTS_PER_ADDRESS,
} from '../../src/cli/dashboard/event-clients.ts';

class FakeStream implements EventStream {
  writableLength = 0;
  readonly written: string[] = [];
  ended: string | null = null;
  destroyed = false;
  constructor(readonly name: string) {}
  write(chunk: string) {
    if (this.ended !== null || this.destroyed) throw new Error(`${this.name} written after close`);
    this.written.push(chunk);
    return true;
  }
  end(chunk = '') {
    this.ended = chunk;
  }
  destroy() {
    this.destroyed = true;
  }
}

function open(clients: EventClients, address: string, name: string): FakeStream {
  const stream = new FakeStream(name);
  clients.makeRoom(address);
  clients.add(address, stream);
  return stream;
}

describe('the live-update slots', () => {
  it('keep at most the per-address cap, the oldest of that address giving way', () => {
    const clients = new EventClients();
    const page = open(clients, '10.0.0.1', 'page');
    const hogs = Array.from({ length: MAXIMUM_EVENT_CLIENTS_PER_ADDRESS + 2 }, (_, index) =>
      open(clients, '10.0.0.2', `hog-${index}`),
    );
    expect(clients.size).toBe(1 + MAXIMUM_EVENT_CLIENTS_PER_ADDRESS);
    // The page of another address is untouched; the hog's own oldest two were reaped, told so.
    expect(page.ended).toBeNull();
    expect(hogs.filter((hog) => hog.ended !== null).map((hog) => hog.name)).toEqual([
      'hog-0',
      'hog-1',
    ]);
    expect(hogs[0]?.ended).toContain('event: reaped');
    clients.broadcast('event: snapshot\ndata: {}\n\n');
    expect(page.written).toEqual(['event: snapshot\ndata: {}\n\n']);
    expect(hogs[0]?.written).toEqual([]);
  });

  it('keep at most the total cap, the busiest address giving way first', () => {
    const clients = new EventClients();
    const streams: FakeStream[] = [];
    // Four addresses at three each, then a fifth address fills the rest.
    for (let address = 1; address <= 4; address += 1) {
      for (let index = 0; index < 3; index += 1) {
        streams.push(open(clients, `10.0.1.${address}`, `a${address}-${index}`));
      }
    }
    for (let index = 0; clients.size < MAXIMUM_EVENT_CLIENTS; index += 1) {
      streams.push(open(clients, '10.0.2.1', `b-${index}`));
    }
    expect(streams.filter((stream) => stream.name.startsWith('b-'))).toHaveLength(4);
    expect(streams.every((stream) => stream.ended === null)).toBe(true);
    // A newcomer: the oldest stream of the busiest address (the fifth, with four) gives way.
    const newcomer = open(clients, '10.0.3.1', 'newcomer');
    expect(clients.size).toBe(MAXIMUM_EVENT_CLIENTS);
    expect(streams.filter((stream) => stream.ended !== null).map((stream) => stream.name)).toEqual([
      'b-0',
    ]);
    expect(newcomer.ended).toBeNull();
  });

  it('drop a client that stops reading', () => {
    const clients = new EventClients();
    const slow = open(clients, '10.0.0.1', 'slow');
    const fast = open(clients, '10.0.0.1', 'fast');
    slow.writableLength = MAXIMUM_BUFFERED_BYTES + 1;
    clients.broadcast('x');
    expect(slow.destroyed).toBe(true);
    expect(clients.size).toBe(1);
    expect(fast.written).toEqual(['x']);
    clients.closeAll();
    expect(fast.ended).toBe('');
    expect(clients.size).toBe(0);
  });
});
