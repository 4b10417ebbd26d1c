/**
 * Plain-text tables for terminals, laid out by the `table` package: columns padded to their
 * widest cell (display width, so wide characters line up), two spaces between columns, a dashed
 * rule under the headers, numbers right-aligned. Every table the commands print goes through here.
 */
import { getBorderCharacters, table, type TableUserConfig } from 'table';

export type Alignment = 'left' | 'right';

export interface TextTableOptions {
  /** Per column; by default a column is right-aligned when every cell in it looks numeric. */
  readonly align?: readonly Alignment[];
  /** The dashed rule under the headers; default true. */
  readonly rule?: boolean;
}

const NUMERIC = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)%?$|^n\/a$|^$/;

/** No outer border; the two-space gap between columns and the header rule are the only marks. */
const BORDER: TableUserConfig['border'] = {
  ...getBorderCharacters('void'),
  bodyJoin: '  ',
  headerJoin: '  ',
  joinBody: '-',
  joinJoin: '  ',
};

// `table` refuses control characters (a tab would shift every column anyway): shown as a space;
// a line break stays, and the cell spans several lines.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0009\u000B-\u001F\u007F]/g;

export function formatTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  options: TextTableOptions = {},
): string {
  const columns = headers.length;
  if (columns === 0) return options.rule === false ? '' : '\n';
  const cells = [headers, ...rows].map((row) =>
    Array.from({ length: columns }, (_, column) => (row[column] ?? '').replace(CONTROL, ' ')),
  );
  const align = headers.map(
    (_, column): Alignment =>
      options.align?.[column] ??
      (rows.length > 0 && rows.every((row) => NUMERIC.test(row[column] ?? '')) ? 'right' : 'left'),
  );
  const rule = options.rule !== false;
  const text = table(cells, {
    border: BORDER,
    columnDefault: { paddingLeft: 0, paddingRight: 0 },
    columns: align.map((alignment) => ({ alignment })),
    drawHorizontalLine: (line) => rule && line === 1,
  });
  return text
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n');
}
