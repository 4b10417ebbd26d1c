/** The chaos figures, counted from a made-up venue truth and made-up bot log lines. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { countFigures } from './counting.ts';

const directory = mkdtempSync(join(tmpdir(), 'paperbot-chaos-counting-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const order = (id: string, client: string, request: string, status: string) => ({
  order_id: id,
  client_order_id: client,
  request_id: request,
  status,
});

describe('chaos counting', () => {
  it('counts duplicates, lost and double-counted fills and open orders', () => {
    const figures = countFigures({
      orders: [
        order('o1', 'c1', 'r1', 'FILLED'),
        order('o2', 'c1', 'r2', 'CANCELLED'),
        order('o3', 'c3', 'r3', 'OPEN'),
        order('o4', 'c4', 'r3', 'PARTIALLY_FILLED'),
      ],
      fills: [
        { fill_id: 'f1', order_id: 'o1' },
        { fill_id: 'f2', order_id: 'o4' },
        { fill_id: 'f3', order_id: 'o4' },
      ],
      records: [
        { event: 'fill', fill_id: 'f1' },
        { event: 'fill', fill_id: 'f1' },
        { event: 'fill', fill_id: 'f2' },
        { event: 'fill', fill_id: 'f2' },
        { event: 'fill', fill_id: 'f2' },
        { msg: 'intent submitted', fill_id: 'f3' },
      ],
      // No journal there: every order is also one the journal does not know.
      journalPath: join(directory, 'missing', 'journal.sqlite'),
    });
    expect(figures).toMatchObject({
      lost_fills: 1,
      double_counted: 3,
      left_open: 2,
      venueOrders: 4,
      venueFills: 3,
    });
    // c1 twice, r3 twice: one extra order by either key; the journal could not be read.
    expect(figures.duplicates).toBe(1);
    expect(figures.notes.join('\n')).toContain('journal could not be opened');
    expect(figures.notes.join('\n')).toContain('f3');
  });

  it('is all zeros when the venue and the log agree', () => {
    const figures = countFigures({
      orders: [],
      fills: [{ fill_id: 'f1', order_id: 'o1' }],
      records: [{ event: 'fill', fill_id: 'f1' }],
      journalPath: join(directory, 'none.sqlite'),
    });
    expect(figures).toMatchObject({
      duplicates: 0,
      lost_fills: 0,
      double_counted: 0,
      left_open: 0,
    });
  });
});
