import { describe, expect, it } from 'vitest';
import { formatTable } from '../../src/core/text-table.ts';

describe('formatTable', () => {
  it('pads columns to their widest cell, numbers right, a rule under the headers', () => {
    expect(
      formatTable(
        ['market', 'pnl'],
        [
          ['BTC-PERP', '-3.5'],
          ['ETH', '12'],
        ],
      ),
    ).toBe(['market     pnl', '--------  ----', 'BTC-PERP  -3.5', 'ETH         12'].join('\n'));
  });

  it('leaves the rule out and follows the alignment it is given', () => {
    expect(formatTable(['ID', 'N'], [['a', '1']], { align: ['left', 'left'], rule: false })).toBe(
      ['ID  N', 'a   1'].join('\n'),
    );
  });

  it('lines up wide characters by their display width, and prints control characters as spaces', () => {
    expect(
      formatTable(
        ['name', 'x'],
        [
          ['市场', 'a\tb'],
          ['ab', 'c'],
        ],
      ),
    ).toBe(['name  x', '----  ---', '市场  a b', 'ab    c'].join('\n'));
  });

  it('keeps every line of a cell that spans several', () => {
    expect(formatTable(['cell', 'status'], [['1', 'error A\n  - detail']])).toBe(
      ['cell  status', '----  ----------', '   1  error A', '        - detail'].join('\n'),
    );
  });
});
