/**
 * docs/backtesting.md's "Configuration reference" names every key config/backtest.yaml accepts:
 * this walks the zod schema (every nested object key, array element and map value) and fails on
 * a key the reference lacks or a documented key the schema no longer has, so the reference
 * cannot go stale when a section gains or loses a key.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { BacktestConfig } from '../../src/replay/backtest/config.ts';

const root = join(import.meta.dirname, '..', '..');
const page = readFileSync(join(root, 'docs/backtesting.md'), 'utf8');

/** The zod definition fields the walk reads (zod 4's `_zod.def`). */
interface Definition {
  readonly type: string;
  readonly shape?: Readonly<Record<string, z.core.$ZodType>>;
  readonly innerType?: z.core.$ZodType;
  readonly element?: z.core.$ZodType;
  readonly valueType?: z.core.$ZodType;
  readonly options?: readonly z.core.$ZodType[];
  readonly in?: z.core.$ZodType;
  readonly out?: z.core.$ZodType;
}

/** Wrappers that keep the key's path: defaults, nullability, optionality. */
const WRAPPERS = new Set(['default', 'prefault', 'nullable', 'optional', 'readonly', 'catch']);

/**
 * Every key path of a schema: `a.b` for nested objects, `a[].b` for an array's elements and
 * `a.<key>.b` for a map's values (the placeholder's name is the page's to choose).
 */
function keyPaths(schema: z.core.$ZodType, prefix = '', into = new Set<string>()) {
  const definition = schema._zod.def as unknown as Definition;
  if (definition.type === 'object' && definition.shape) {
    for (const [key, child] of Object.entries(definition.shape)) {
      const path = prefix === '' ? key : `${prefix}.${key}`;
      into.add(path);
      keyPaths(child, path, into);
    }
  } else if (WRAPPERS.has(definition.type) && definition.innerType) {
    keyPaths(definition.innerType, prefix, into);
  } else if (definition.type === 'array' && definition.element) {
    keyPaths(definition.element, `${prefix}[]`, into);
  } else if (definition.type === 'record' && definition.valueType) {
    keyPaths(definition.valueType, `${prefix}.<key>`, into);
  } else if (definition.type === 'union' && definition.options) {
    for (const option of definition.options) keyPaths(option, prefix, into);
  } else if (definition.type === 'pipe') {
    if (definition.in) keyPaths(definition.in, prefix, into);
    if (definition.out) keyPaths(definition.out, prefix, into);
  }
  return into;
}

/** A map placeholder is `<anything>` on the page and `<key>` in the walk. */
function normalized(path: string): string {
  return path.replace(/<[^>]+>/g, '<key>');
}

interface ReferenceRow {
  readonly key: string;
  readonly cells: readonly string[];
}

/** The rows of every table under "## Configuration reference", up to the next `## ` heading. */
function referenceRows(markdown: string): ReferenceRow[] {
  const start = markdown.indexOf('\n## Configuration reference\n');
  if (start < 0) return [];
  const rest = markdown.slice(start + 1);
  const end = rest.indexOf('\n## ', 3);
  const section = end < 0 ? rest : rest.slice(0, end);
  const rows: ReferenceRow[] = [];
  for (const line of section.split('\n')) {
    if (!line.startsWith('|') || /^\|\s*-/.test(line)) continue;
    const cells = line
      .slice(1, line.endsWith('|') ? -1 : undefined)
      .split(/(?<!\\)\|/)
      .map((cell) => cell.trim());
    const key = /^`([^`]+)`$/.exec(cells[0] ?? '')?.[1];
    if (key !== undefined) rows.push({ key, cells });
  }
  return rows;
}

describe('docs/backtesting.md, "Configuration reference"', () => {
  const schemaKeys = [...keyPaths(BacktestConfig)].map(normalized);
  const rows = referenceRows(page);
  const documented = new Set(rows.map((row) => normalized(row.key)));

  it('walks the whole schema, nested sections, arrays and maps included', () => {
    // Guards the walk itself: a walk that stopped at the top would pass vacuously.
    expect(schemaKeys).toEqual(
      expect.arrayContaining([
        'data',
        'strategies[].params',
        'venue.latency.distribution.event_ms',
        'venue.markets.<key>.maintenance_margin_rate',
        'venue.fill_model.taker.max_volume_share',
        'risk.daily_loss.halt_at_percent',
        'risk.markets.<key>.enabled',
        'execution.simulate.close_position',
        'report.sharpe_period_ms',
        'logging.format',
      ]),
    );
    expect(schemaKeys.length).toBeGreaterThan(90);
  });

  it('documents every key the schema accepts', () => {
    const missing = schemaKeys.filter((key) => !documented.has(key));
    expect(missing, 'keys of config/backtest.yaml missing from the reference').toEqual([]);
  });

  it('documents no key the schema does not accept', () => {
    const known = new Set(schemaKeys);
    const stale = rows.map((row) => row.key).filter((key) => !known.has(normalized(key)));
    expect(stale, 'keys in the reference that config/backtest.yaml refuses').toEqual([]);
  });

  it('gives each key once, with its type, default and meaning', () => {
    const seen = new Set<string>();
    for (const row of rows) {
      expect(seen.has(row.key), `${row.key} is listed twice`).toBe(false);
      seen.add(row.key);
      expect(row.cells, `${row.key}: key, type, default, meaning`).toHaveLength(4);
      for (const cell of row.cells) expect(cell, `${row.key} has an empty cell`).not.toBe('');
    }
  });
});
