/**
 * Latency legs given as distributions (`venue.latency.distribution`, what `paperbot calibrate`
 * writes): draws stay within the quantiles and follow their shape, the config refuses quantiles
 * that decrease, and events with drawn delays still reach the bot in the order they happened.
 */
import { describe, expect, it } from 'vitest';
import { parseReplayVenueConfig } from '../../../src/replay/venue/config.ts';
import { LatencyModel, latencySettings } from '../../../src/replay/venue/latency.ts';
import { harness, limit, MARKET } from './helpers.ts';

function config(distribution: Record<string, unknown>) {
  return parseReplayVenueConfig({ latency: { distribution } }).latency;
}

describe('latency distributions', () => {
  it('draws each leg from its quantiles, seeded, and leaves the other legs fixed', () => {
    const latency = config({ order_ms: [20, 40], event_ms: [5, 5, 6, 50] });
    const draw = () => {
      const model = new LatencyModel(latencySettings(latency), 7);
      return {
        orders: Array.from({ length: 2_000 }, () => model.order()),
        responses: Array.from({ length: 10 }, () => model.response()),
        events: Array.from({ length: 2_000 }, () => model.event()),
        fixed: model.fixed,
      };
    };
    const first = draw();
    expect(draw()).toEqual(first);
    expect(first.fixed).toBe(false);
    expect(Math.min(...first.orders)).toBe(20);
    expect(Math.max(...first.orders)).toBe(40);
    const mean = first.orders.reduce((sum, value) => sum + value, 0) / first.orders.length;
    expect(Math.abs(mean - 30)).toBeLessThan(1);
    // The default 20 ms response leg, no distribution given.
    expect(new Set(first.responses)).toEqual(new Set([20]));
    // Two thirds of the event draws fall between 5 and 6 ms, a third reach up to 50.
    const short = first.events.filter((value) => value <= 6).length / first.events.length;
    expect(short).toBeGreaterThan(0.6);
    expect(short).toBeLessThan(0.72);
    expect(Math.max(...first.events)).toBeLessThanOrEqual(50);
  });

  it('refuses quantiles that decrease or a single value, naming the path', () => {
    expect(() => config({ order_ms: [30, 20] })).toThrow(
      /venue\.latency\.distribution\.order_ms|latency\.distribution\.order_ms/,
    );
    expect(() => config({ event_ms: [30] })).toThrow(/distribution\.event_ms: give at least two/);
    expect(() => config({ read_ms: [1, 2] })).toThrow(/distribution/);
  });

  it('delivers events with drawn delays in the order they happened', async () => {
    const h = harness({
      latency: {
        order_ms: 10,
        response_ms: 10,
        event_ms: 5,
        distribution: { event_ms: [0, 0, 200] },
      },
    });
    const statuses: string[] = [];
    h.venue.execution.privateStream.items$.subscribe((item) => {
      if (item.kind === 'order') {
        statuses.push(`${item.event.data.entity_id}:${item.event.data.to_state}`);
      }
    });
    h.ticker('100');
    h.book([['99', '5']], [['101', '5']]);
    for (let index = 1; index <= 6; index++) {
      await h.send(limit(`order-000${index}`, 'buy', String(90 + index), '1'));
    }
    await h.advance(1_000);
    const engine = h.engineEvents
      .filter((event) => event.type === 'authoritative_status')
      .map((event) => `${event.data.entity_id}:${event.data.to_state}`);
    expect(statuses.length).toBe(engine.length);
    expect(statuses).toEqual(engine);
    expect(h.venue.queueOf(MARKET).size).toBe(6);
  });
});
