/** `paperbot status` lists the bot's waiting exits with their trigger and distance. */
import { describe, expect, it } from 'vitest';
import { renderStatus, StatusDocument } from '../../../src/cli/bot/status-view.ts';

const base = {
  bot: {
    pid: 7,
    startedAt: '2030-01-01T00:00:00.000Z',
    now: '2030-01-01T00:01:00.000Z',
    venue: { baseUrl: 'http://127.0.0.1:8787', embedded: true, accountId: 'acct_1' },
    journal: '/tmp/journal.sqlite',
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
};

describe('status view: waiting exits', () => {
  it('lists each live exit with its trigger, the last price and the distance', () => {
    const document = StatusDocument.parse({
      ...base,
      waitingExits: [
        {
          id: 'guard:e1:4',
          strategyId: 'guard',
          marketId: 'BTC-PERP',
          side: 'sell',
          quantity: '0.01',
          state: 'waiting',
          kind: 'stop',
          source: 'mark',
          triggerPrice: '62000',
          price: '63187.5',
          distance: '1187.5',
        },
        {
          id: 'guard:e1:5:tp',
          strategyId: 'guard',
          marketId: 'BTC-PERP',
          side: 'sell',
          quantity: '0.01',
          state: 'pending',
          kind: 'take_profit',
          source: 'last',
          triggerPrice: null,
          price: null,
          distance: null,
        },
      ],
    });
    const text = renderStatus(document, 'http://127.0.0.1:9464');
    const lines = text.split('\n');
    const heading = lines.findIndex((line) => line.startsWith('Waiting exits (2;'));
    expect(heading).toBeGreaterThan(0);
    expect(lines[heading + 1]).toMatch(
      /^\s*ID\s+MARKET\s+SIDE\s+KIND\s+SOURCE\s+STATE\s+QUANTITY\s+TRIGGER\s+PRICE\s+DISTANCE\s*$/,
    );
    expect(lines.slice(heading + 2).join('\n')).toMatch(
      /guard:e1:4\s+BTC-PERP\s+sell\s+stop\s+mark\s+waiting\s+0\.01\s+62000\s+63187\.5\s+1187\.5/,
    );
    expect(lines.slice(heading + 2).join('\n')).toMatch(
      /guard:e1:5:tp\s+.*pending\s+0\.01\s+-\s+-\s+-/,
    );
  });

  it('leaves the block out for a bot that reports no exits at all', () => {
    const text = renderStatus(StatusDocument.parse(base), 'http://127.0.0.1:9464');
    expect(text).not.toContain('Waiting exits');
  });
});
