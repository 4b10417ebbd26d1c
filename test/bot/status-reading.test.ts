/**
 * `paperbot status` and `/status` show what tolerant reading met (issue 24): the mode, the
 * unknown fields and values, the items left out, the answers refused and the last problem with
 * its paths, status and server request id.
 */
import { describe, expect, it } from 'vitest';
import { renderStatus, StatusDocument } from '../../src/cli/bot/status-view.ts';
import { ReadingMonitor } from '../../src/client/index.ts';
import { readWire, endpoints } from '../../src/protocol/index.ts';
import * as fixtures from '../protocol/fixtures.ts';

function documentWith(reading: unknown) {
  return StatusDocument.parse({
    bot: {
      pid: 7,
      startedAt: '2030-01-01T00:00:00.000Z',
      now: '2030-01-01T00:05:12.000Z',
      venue: { baseUrl: 'http://127.0.0.1:8787', embedded: false, accountId: 'acct_1' },
      journal: '/tmp/journal.sqlite',
    },
    tradingState: 'ACTIVE',
    tradingReason: null,
    mayTrade: true,
    reading,
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
  });
}

describe('the reading in paperbot status', () => {
  it('prints the counts and the last item left out, naming its path, status and request id', () => {
    const monitor = new ReadingMonitor('tolerant', () => 1_000);
    const page = {
      data: [fixtures.orderStatusEvent(1), fixtures.orderStatusEvent(2)],
      has_more: false,
      svc_ext: {},
    };
    delete (page.data[1]!.data as Record<string, unknown>).to_state;
    const read = readWire(endpoints.listEvents.read, page, 'tolerant');
    monitor.report(
      { where: 'listEvents', httpStatus: 200, serverRequestId: 'r-42' },
      read.drift,
      read.skipped,
      page,
    );
    const snapshot = monitor.snapshot();
    expect(snapshot).toMatchObject({
      mode: 'tolerant',
      unknownFields: 1,
      skippedItems: 1,
      refused: 0,
      lastProblem: { at: 1_000, httpStatus: 200, serverRequestId: 'r-42' },
    });
    const text = renderStatus(documentWith(snapshot), 'http://127.0.0.1:9464');
    expect(text).toContain(
      'Reading:    tolerant; 1 unknown fields, 0 unknown values, 1 items left out, 0 refused; last: listEvents: body.data[1] left out: body.data[1].data.to_state: required',
    );
  });

  it('leaves the line out for a bot from before the reading', () => {
    const text = renderStatus(documentWith(undefined), 'http://127.0.0.1:9464');
    expect(text).not.toContain('Reading:');
  });
});
