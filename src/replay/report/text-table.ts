/** Plain-text tables for terminals: columns padded to their widest cell, numbers right-aligned. */

export type Alignment = 'left' | 'right';

export interface TextTableOptions {
  /** Per column; by default a column is right-aligned when every cell in it looks numeric. */
  readonly align?: readonly Alignment[];
}

const NUMERIC = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)%?$|^n\/a$|^$/;

function width(text: string): number {
  // Code points, not UTF-16 units: a market or parameter name may hold any character.
  return [...text].length;
}

export function formatTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  options: TextTableOptions = {},
): string {
  const columns = headers.length;
  const widths = headers.map((header, column) =>
    Math.max(width(header), ...rows.map((row) => width(row[column] ?? ''))),
  );
  const align = headers.map(
    (_, column): Alignment =>
      options.align?.[column] ??
      (rows.length > 0 && rows.every((row) => NUMERIC.test(row[column] ?? '')) ? 'right' : 'left'),
  );
  const line = (cells: readonly string[]): string =>
    Array.from({ length: columns }, (_, column) => {
      const text = cells[column] ?? '';
      const padding = ' '.repeat(widths[column]! - width(text));
      return align[column] === 'right' ? padding + text : text + padding;
    })
      .join('  ')
      .trimEnd();
  const rule = widths.map((size) => '-'.repeat(size)).join('  ');
  return [line(headers), rule, ...rows.map(line)].join('\n');
}
