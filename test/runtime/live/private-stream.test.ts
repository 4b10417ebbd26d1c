/**
 * The live private stream (`LivePrivateStream`): events kept until the tracker subscribes, in
 * order, each once; a jump in sequence, or a resume at the head, reported as a gap; and the
 * read-back of GET /v1/fills against the emulator on a loopback port, down to a stop.
 */
import { Subject } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { RestClient, type StreamClient } from '../../../src/client/index.ts';
import { VirtualClock } from '../../../src/core/clock.ts';
import { type RunningEmulator, startEmulator } from '../../../src/emulator/index.ts';
import type {
  OtherPrivateEvent,
  PrivateEvent,
  UnreadablePrivateEvent,
} from '../../../src/protocol/index.ts';
import { LivePrivateStream } from '../../../src/runtime/live/index.ts';
import type { PrivateStreamItem } from '../../../src/runtime/venue.ts';
import { fill, orderEvent } from '../execution/fixtures.ts';

const START_MS = Date.UTC(2026, 0, 5, 9, 0, 0);

let emulator: RunningEmulator | undefined;
let rest: RestClient | undefined;
afterEach(async () => {
  await rest?.close();
  await emulator?.close();
  rest = undefined;
  emulator = undefined;
});

function fakeStream() {
  const events = new Subject<PrivateEvent>();
  const others = new Subject<OtherPrivateEvent>();
  const unreadable = new Subject<UnreadablePrivateEvent>();
  const stream = {
    events$: events.asObservable(),
    otherEvents$: others.asObservable(),
    unreadableEvents$: unreadable.asObservable(),
  } as unknown as StreamClient;
  return { events, others, unreadable, stream };
}

const fillEvent = (sequence: number, fillId: string): PrivateEvent => ({
  version: 1,
  channel: 'fills',
  type: 'fill',
  sequence,
  event_id: `00000000-0000-4000-8000-${String(sequence).padStart(12, '0')}`,
  occurred_at: '2026-01-05T09:00:00.000Z',
  data: fill({ fill_id: fillId }),
});

function describeItem(item: PrivateStreamItem): string {
  return item.kind === 'gap' ? `gap ${item.after}->${item.next}` : `${item.kind} ${item.sequence}`;
}

describe('the live private stream', () => {
  it('counts events of unknown types and unreadable events in the sequence: no false gap', () => {
    const { events, others, unreadable, stream } = fakeStream();
    const feed = new LivePrivateStream({ rest: {} as RestClient, stream, resumeAfterSequence: 0 });
    feed.start();
    const items: PrivateStreamItem[] = [];
    feed.items$.subscribe((item) => items.push(item));
    events.next(fillEvent(1, 'f-1'));
    others.next({
      version: 1,
      channel: 'orders',
      type: 'order.routed',
      sequence: 2,
      event_id: 'e-2',
      occurred_at: '2026-01-05T09:00:00.000Z',
      data: {},
    });
    unreadable.next({
      unreadable: true,
      sequence: 3,
      event_id: 'e-3',
      channel: 'orders',
      type: 'authoritative_status',
      entityId: 'o-1',
      problem: 'frame.data.to_state: required',
    });
    events.next(fillEvent(4, 'f-2'));
    expect(items.map(describeItem)).toEqual(['fill 1', 'other 2', 'unreadable 3', 'fill 4']);
    expect(items[2]).toMatchObject({ kind: 'unreadable', entityId: 'o-1', channel: 'orders' });
    feed.stop();
  });

  it('keeps events until the first subscriber, then hands on each once with gaps marked', () => {
    const { events, stream } = fakeStream();
    const feed = new LivePrivateStream({
      rest: {} as RestClient,
      stream,
      resumeAfterSequence: 10,
      bufferLimit: 4,
    });
    feed.start();
    events.next(orderEvent('o-1', 'SUBMITTED', 'OPEN', 10)); // applied before the restart
    events.next(orderEvent('o-1', 'OPEN', 'FILLED', 11));
    events.next(fillEvent(12, 'f-1'));
    events.next(fillEvent(12, 'f-1')); // a duplicate
    events.next(fillEvent(15, 'f-2')); // 13 and 14 never come
    events.next(fillEvent(16, 'f-3')); // the buffer is full: dropped
    const seen: string[] = [];
    feed.items$.subscribe((item) => seen.push(describeItem(item)));
    expect(seen).toEqual(['order 11', 'fill 12', 'gap 12->15', 'fill 15']);
    events.next(fillEvent(17, 'f-4')); // after the dropped 16: a gap again
    feed.resumedAt(30, 'resumed at the head');
    events.next(fillEvent(31, 'f-5'));
    feed.resumedAt(5, 'the counter went backwards');
    events.next(fillEvent(6, 'f-6'));
    expect(seen.slice(4)).toEqual([
      'gap 15->17',
      'fill 17',
      'gap 17->31',
      'fill 31',
      'gap 31->6',
      'fill 6',
    ]);
    feed.stop();
  });

  it('reads fills back over REST, oldest first, down to the stop and no further than the limit', async () => {
    const clock = new VirtualClock(START_MS);
    emulator = await startEmulator({ clock, seed: 11 });
    const credential = emulator.createKey();
    rest = new RestClient({ credential, clock, requestTimeoutMs: 600_000, reading: 'strict' });
    for (let index = 0; index < 4; index += 1) {
      await rest.placeOrder({
        request_id: `taker-${index}-000`,
        client_order_id: `taker-${index}`,
        market_id: 'BTC-PERP',
        side: index % 2 === 0 ? 'buy' : 'sell',
        type: 'market',
        quantity: '0.001',
        leverage: 2,
        max_slippage_percent: '1',
      });
      for (let step = 0; step < 10; step += 1) {
        clock.advanceBy(50);
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    const newestFirst = (await rest.listFills({ limit: 200 })).data;
    expect(newestFirst.length).toBeGreaterThanOrEqual(4);
    const oldestFirst = [...newestFirst].reverse();
    const { stream } = fakeStream();
    const feed = new LivePrivateStream({ rest, stream, resumeAfterSequence: null });

    const toStop = await feed.readFillsBack({
      stopFillId: oldestFirst[1]?.fill_id ?? null,
      stopOccurredAt: null,
      maximumFills: 100,
    });
    expect(toStop).toEqual({ fills: oldestFirst.slice(2), complete: true });

    const limited = await feed.readFillsBack({
      stopFillId: oldestFirst[0]?.fill_id ?? null,
      stopOccurredAt: null,
      maximumFills: 2,
    });
    expect(limited).toEqual({ fills: oldestFirst.slice(-2), complete: false });

    // Knowing no fill, the time of the last event applied bounds the read.
    const byTime = await feed.readFillsBack({
      stopFillId: null,
      stopOccurredAt: '2000-01-01T00:00:00.000Z',
      maximumFills: 100,
    });
    expect(byTime).toEqual({ fills: oldestFirst, complete: true });
    const none = await feed.readFillsBack({
      stopFillId: null,
      stopOccurredAt: '2100-01-01T00:00:00.000Z',
      maximumFills: 100,
    });
    expect(none).toEqual({ fills: [], complete: true });
  });
});
