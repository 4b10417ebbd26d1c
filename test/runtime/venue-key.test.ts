/**
 * The venue key watch on virtual time: the expiry warning comes the configured lead before
 * `expires_at` (log, status, the webhook), the key ends at `expires_at` (trading halted), a
 * KEY_REVOKED answer ends it at once, and an ended key's calls are refused without reaching
 * the venue. The status line of `paperbot status` names it.
 */
import { EMPTY, NEVER, Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { type LogFields, type Logger, silentLogger } from '../../src/core/logger.ts';
import { resolveBotConfig } from '../../src/cli/bot/config.ts';
import { renderStatus, StatusDocument } from '../../src/cli/bot/status-view.ts';
import { NotificationsSection } from '../../src/cli/notifications/config.ts';
import type { NotificationSource } from '../../src/cli/notifications/events.ts';
import { Notifier } from '../../src/cli/notifications/notifier.ts';
import type { PostJson } from '../../src/cli/notifications/post.ts';
import { isoTimestamp, VirtualClock } from '../../src/core/clock.ts';
import { PaperbotError } from '../../src/core/errors.ts';
import { RiskGate } from '../../src/runtime/risk/gate.ts';
import type { ExecutionVenue } from '../../src/runtime/venue.ts';
import { openConfig } from './risk/fixtures.ts';
import { parseLeadTime, VenueKeyWatch } from '../../src/runtime/venue-key.ts';

const HOUR = 3_600_000;
const START = Date.UTC(2026, 5, 1, 12, 0);

interface Logged {
  level: 'debug' | 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  message: string;
}

function recordingLogger(lines: Logged[]): Logger {
  const record =
    (level: Logged['level']) =>
    (message: string, fields?: LogFields): void => {
      lines.push({ level, fields: { ...fields }, message });
    };
  return {
    debug: record('debug'),
    info: record('info'),
    warn: record('warn'),
    error: record('error'),
  };
}

async function settle(): Promise<void> {
  for (let n = 0; n < 10; n++) await Promise.resolve();
}

/** A venue whose every call fails the test, but `getAccount`, which answers as told. */
function venueAnswering(getAccount: () => Promise<never>): {
  venue: ExecutionVenue;
  calls: () => number;
} {
  let calls = 0;
  const unexpected = () => {
    throw new Error('unexpected venue call');
  };
  const venue: ExecutionVenue = {
    prepare: unexpected,
    restore: unexpected,
    send: unexpected,
    getRequest: unexpected,
    getOrder: unexpected,
    getOrderByClientId: unexpected,
    listOpenOrders: unexpected,
    listPositions: unexpected,
    getAccount: () => {
      calls += 1;
      return getAccount();
    },
    privateStream: { items$: NEVER, readFillsBack: unexpected },
    riskEvents$: NEVER,
    resync$: EMPTY,
  };
  return { venue, calls: () => calls };
}

describe('the key expiry warning', () => {
  it('fires the configured lead before expires_at, on virtual time, then the key ends', async () => {
    const clock = new VirtualClock(START);
    const expiresAt = isoTimestamp(START + 30 * HOUR);
    const lines: Logged[] = [];
    const halts: string[] = [];
    const sent: unknown[] = [];
    const post: PostJson = (_url, body) => {
      sent.push(body);
      return Promise.resolve({ ok: true, status: 200, error: null });
    };
    const notifier = new Notifier({
      section: NotificationsSection.parse({
        webhooks: [{ url: 'http://127.0.0.1:1/key', events: ['venue_key'] }],
        batch_ms: 1_000,
        daily_summary_at: null,
      }),
      clock,
      logger: silentLogger,
      post,
    });
    const watch = new VenueKeyWatch({
      clock,
      keyId: 'key_1',
      expiresAt,
      warningLeadMs: parseLeadTime('24h'),
      logger: recordingLogger(lines),
      onEnded: (reason) => halts.push(reason),
    });
    const source: NotificationSource = {
      fills$: NEVER,
      outcomes$: NEVER,
      reconciliation$: NEVER,
      tradingState$: new Subject(),
      status: () => ({ deadman: null }),
    };
    notifier.attach(source, undefined, watch.status$);

    // Six hours before the warning: nothing.
    clock.advanceBy(5 * HOUR);
    await settle();
    expect(watch.status.state).toBe('valid');
    expect(lines).toEqual([]);

    // 24 h before expires_at (checked each minute): the warning, once, in each place.
    clock.advanceBy(HOUR + 60_000);
    await settle();
    expect(watch.status.state).toBe('expiring');
    expect(watch.status.reason).toContain(`expires at ${expiresAt}`);
    expect(lines).toHaveLength(1);
    expect(lines[0]?.level).toBe('warn');
    expect(lines[0]?.fields.event).toBe('venue_key.expiring');
    clock.advanceBy(1_000);
    await settle();
    expect(JSON.stringify(sent)).toContain('venue key expiring');
    expect(halts).toEqual([]);
    clock.advanceBy(10 * HOUR);
    await settle();
    expect(lines).toHaveLength(1);

    // paperbot status shows it.
    const document = StatusDocument.parse({
      bot: {
        pid: 1,
        startedAt: null,
        now: isoTimestamp(clock.now()),
        venue: { baseUrl: 'http://127.0.0.1:1', embedded: false, accountId: 'acc' },
        journal: 'j',
      },
      tradingState: 'ACTIVE',
      tradingReason: null,
      mayTrade: true,
      reconciled: true,
      deadman: null,
      unknownIntents: 0,
      unresolvedIntents: 0,
      account: null,
      positions: [],
      openOrders: [],
      strategies: [],
      counters: { intents: 0, denied: 0, rejected: 0, accepted: 0, unknown: 0, fills: 0 },
      pnl: { equity: null, startEquity: null, session: null, unrealized: null },
      venueKey: watch.status,
    });
    expect(renderStatus(document, 'test')).toMatch(/Venue key: +expiring \(the venue key expires/);

    // At expires_at: ended, trading halted, an error line.
    clock.advanceBy(14 * HOUR);
    await settle();
    expect(watch.status.state).toBe('expired');
    expect(halts).toHaveLength(1);
    expect(halts[0]).toContain('venue key expired');
    expect(lines.map((line) => line.fields.event)).toEqual([
      'venue_key.expiring',
      'venue_key.expired',
    ]);
    clock.advanceBy(1_000);
    await settle();
    expect(JSON.stringify(sent)).toContain('venue key expired');
    watch.dispose();
    notifier.close();
  });

  it('does not warn without a lead, and parses the lead strictly', () => {
    const clock = new VirtualClock(START);
    const watch = new VenueKeyWatch({
      clock,
      keyId: 'key_1',
      expiresAt: isoTimestamp(START + HOUR),
      warningLeadMs: null,
      onEnded: () => undefined,
    });
    clock.advanceBy(HOUR - 60_000);
    expect(watch.status.state).toBe('valid');
    watch.dispose();
    expect(parseLeadTime('24h')).toBe(24 * HOUR);
    expect(parseLeadTime('90m')).toBe(90 * 60_000);
    expect(parseLeadTime('7d')).toBe(7 * 24 * HOUR);
    expect(parseLeadTime(5_000)).toBe(5_000);
    expect(parseLeadTime('1 day')).toBeNull();
    expect(parseLeadTime('-1h')).toBeNull();
  });
});

describe('a revoked key', () => {
  it('ends at the first KEY_REVOKED answer, halts once, and refuses every later call here', async () => {
    const clock = new VirtualClock(START);
    const halts: string[] = [];
    const lines: Logged[] = [];
    const watch = new VenueKeyWatch({
      clock,
      keyId: 'key_1',
      expiresAt: null,
      warningLeadMs: 24 * HOUR,
      logger: recordingLogger(lines),
      onEnded: (reason) => halts.push(reason),
    });
    const { venue, calls } = venueAnswering(() =>
      Promise.reject(
        new PaperbotError('KEY_REVOKED', 'this key was revoked', {
          details: { httpStatus: 401 },
        }),
      ),
    );
    const watched = watch.wrap(venue);
    await expect(watched.getAccount()).rejects.toMatchObject({ code: 'KEY_REVOKED' });
    expect(watch.status.state).toBe('revoked');
    expect(halts).toHaveLength(1);
    expect(halts[0]).toContain('venue key revoked');
    // Later calls never reach the venue, and halt nothing more.
    for (let n = 0; n < 5; n++) {
      await expect(watched.getAccount()).rejects.toMatchObject({
        code: 'KEY_REVOKED',
        details: { source: 'local' },
      });
    }
    expect(calls()).toBe(1);
    expect(halts).toHaveLength(1);
    expect(lines.filter((line) => line.level === 'error')).toHaveLength(1);
    // Another failure is not a key's end.
    const other = new VenueKeyWatch({
      clock,
      keyId: 'key_2',
      expiresAt: null,
      warningLeadMs: null,
      onEnded: () => halts.push('wrong'),
    });
    expect(other.observe(new PaperbotError('RATE_LIMITED', 'slow down'))).toBe(false);
    expect(other.status.state).toBe('valid');
    watch.dispose();
    other.dispose();
  });
});

describe('the halt of a dead key', () => {
  it('stays through a resume (the dashboard Clear, paperbot kill --clear): no call can succeed', () => {
    const gate = new RiskGate({ config: openConfig({}), clock: new VirtualClock(START) });
    gate.halt('operator', 'manual');
    gate.halt('venue key revoked: the venue answered KEY_REVOKED', 'venue_key');
    gate.resume();
    expect(gate.tradingState).toMatchObject({
      state: 'HALTED',
      source: 'venue_key',
      reason: 'venue key revoked: the venue answered KEY_REVOKED',
    });
    gate.dispose();
  });
});

describe('venue.key_expiry_warning in the bot config', () => {
  it('defaults to 24h, takes null, and refuses what is not a duration, naming the path', async () => {
    const minimal = {
      strategies: [{ id: 'mm', name: 'market-maker', params: {} }],
      metrics: { enabled: false },
    };
    expect((await resolveBotConfig(minimal, 'test')).config.venue.key_expiry_warning).toBe('24h');
    const off = await resolveBotConfig({ ...minimal, venue: { key_expiry_warning: null } }, 'test');
    expect(off.config.venue.key_expiry_warning).toBeNull();
    const error = await resolveBotConfig(
      { ...minimal, venue: { key_expiry_warning: '1 day' } },
      'test',
    ).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'INVALID_CONFIG' });
    const details = JSON.stringify((error as { details: unknown }).details);
    expect(details).toContain('venue.key_expiry_warning');
    expect(details).toContain('30m, 24h or 7d');
  });
});
