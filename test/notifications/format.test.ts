/**
 * The bodies: paperbot's JSON, Slack's `{text}` and Discord's `{content}` (at most 2000
 * characters), and events built from the kernel's streams that carry no secret.
 */
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/clock.ts';
import {
  type NotificationEvent,
  type NotificationSource,
  subscribeNotificationEvents,
} from '../../src/cli/notifications/events.ts';
import { webhookBody } from '../../src/cli/notifications/format.ts';
import { nextDailyAt } from '../../src/cli/notifications/notifier.ts';
import type { Fill } from '../../src/protocol/index.ts';
import type { TradingStateSnapshot } from '../../src/runtime/risk/gate.ts';
import type { DeadmanStatus } from '../../src/runtime/deadman/heartbeat.ts';

const AT = Date.UTC(2026, 0, 5, 12, 30, 15);

function event(n: number): NotificationEvent {
  return { kind: 'fill', at: AT, title: `fill buy 0.001 BTC-PERP at ${64000 + n}`, fields: { n } };
}

describe('webhook bodies', () => {
  it('has the Slack, Discord and JSON shapes', () => {
    const events = [event(1), event(2)];
    expect(webhookBody('slack', events, 0)).toEqual({
      text: 'paperbot\n12:30:15 fill buy 0.001 BTC-PERP at 64001\n12:30:15 fill buy 0.001 BTC-PERP at 64002',
    });
    expect(webhookBody('discord', events, 3)).toEqual({
      username: 'paperbot',
      content:
        '12:30:15 fill buy 0.001 BTC-PERP at 64001\n12:30:15 fill buy 0.001 BTC-PERP at 64002\n(3 more events were dropped: too many to send)',
    });
    expect(webhookBody('json', events, 0)).toEqual({
      source: 'paperbot',
      dropped: 0,
      events: [
        { kind: 'fill', at: '2026-01-05T12:30:15.000Z', title: events[0]?.title, fields: { n: 1 } },
        { kind: 'fill', at: '2026-01-05T12:30:15.000Z', title: events[1]?.title, fields: { n: 2 } },
      ],
    });
  });

  it('keeps a Discord message within 2000 characters', () => {
    const many = Array.from({ length: 200 }, (_, n) => event(n));
    const body = webhookBody('discord', many, 0) as { content: string };
    expect(body.content.length).toBeLessThanOrEqual(2000);
    expect(body.content.endsWith('…')).toBe(true);
  });

  it('schedules the daily summary at the next HH:MM UTC', () => {
    expect(nextDailyAt(AT, '00:00')).toBe(Date.UTC(2026, 0, 6));
    expect(nextDailyAt(AT, '13:05')).toBe(Date.UTC(2026, 0, 5, 13, 5));
    expect(nextDailyAt(Date.UTC(2026, 0, 5, 13, 5), '13:05')).toBe(Date.UTC(2026, 0, 6, 13, 5));
  });
});

describe('events from the kernel', () => {
  it('tells fills, state changes, the kill switch and the dead-man, and nothing secret', () => {
    const clock = new VirtualClock(AT);
    const fills$ = new Subject<Fill>();
    const tradingState$ = new Subject<TradingStateSnapshot>();
    let deadman: DeadmanStatus = {
      phase: 'armed',
      mayTrade: true,
      deadlineAt: AT + 60_000,
      failedRefreshes: 0,
      lastRequestId: 'pb-deadman:e:1',
      reason: 'armed',
    };
    const source: NotificationSource = {
      fills$,
      outcomes$: new Subject(),
      reconciliation$: new Subject(),
      tradingState$,
      status: () => ({ deadman }),
    };
    const events: NotificationEvent[] = [];
    const stop = subscribeNotificationEvents(source, clock, (e) => events.push(e));
    tradingState$.next({ state: 'ACTIVE', reason: null, source: null, since: AT });
    fills$.next({
      fill_id: 'f1',
      market_id: 'BTC-PERP',
      route_id: 'r',
      side: 'sell',
      quantity: '0.002',
      price: '64010',
      fee: '0.02',
      notional: '128.02',
      order_id: 'o1',
      is_maker: true,
      occurred_at: '2026-01-05T12:30:15.000Z',
    });
    tradingState$.next({
      state: 'HALTED',
      reason: 'kill file /x: ops',
      source: 'kill_switch',
      since: AT,
    });
    tradingState$.next({
      state: 'REDUCING',
      reason: 'daily loss',
      source: 'daily_loss',
      since: AT,
    });
    deadman = { ...deadman, phase: 'expired', reason: 'the venue cancelled every order' };
    clock.advanceBy(1_000);
    clock.advanceBy(1_000);
    stop();
    expect(events.map((e) => e.kind)).toEqual(['fill', 'kill_switch', 'trading_state', 'deadman']);
    expect(events[0]?.title).toBe('fill sell 0.002 BTC-PERP at 64010');
    expect(events[1]?.title).toBe('trading HALTED: kill file /x: ops');
    const text = JSON.stringify(events.map((e) => webhookBody('json', [e], 0)));
    for (const secret of ['private', 'seed', 'signature', 'token', 'key_id', 'http']) {
      expect(text.toLowerCase()).not.toContain(secret);
    }
  });
});
