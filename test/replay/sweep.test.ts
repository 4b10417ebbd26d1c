import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildGrid,
  defaultConcurrency,
  formatSweepTable,
  parseSweepSpecs,
  runSweep,
  type SweepResult,
} from '../../src/replay/sweep/index.ts';

const MODULE = fileURLToPath(new URL('./sweep-modules/compute.ts', import.meta.url));

describe('sweep grids', () => {
  it('parses specs into axes, trimming values', () => {
    expect(
      parseSweepSpecs(['spread=0.1, 0.2,0.3', 'risk.levels=3', 'mm-btc.halfSpreadTicks=2,6']),
    ).toEqual([
      { name: 'spread', values: ['0.1', '0.2', '0.3'] },
      { name: 'risk.levels', values: ['3'] },
      { name: 'mm-btc.halfSpreadTicks', values: ['2', '6'] },
    ]);
  });

  it('reports every bad spec at once', () => {
    const error = (() => {
      try {
        parseSweepSpecs(['spread', '-x=1', 'a=1,,2', 'b=1,1', 'c=1', 'c=2']);
      } catch (caught) {
        return caught as {
          code: string;
          details: { problems: { spec: string }[] };
        };
      }
      return null;
    })();
    expect(error?.code).toBe('INVALID_SWEEP');
    expect(error?.details.problems.map((problem) => problem.spec)).toEqual([
      'spread',
      '-x=1',
      'a=1,,2',
      'b=1,1',
      'c=2',
    ]);
  });

  it('builds the cartesian product, first axis slowest', () => {
    const cells = buildGrid(parseSweepSpecs(['a=1,2', 'b=x,y,z']), {
      base: { fixed: true },
    });
    expect(cells.map((cell) => cell.label)).toEqual([
      'a=1 b=x',
      'a=1 b=y',
      'a=1 b=z',
      'a=2 b=x',
      'a=2 b=y',
      'a=2 b=z',
    ]);
    expect(cells[4]).toEqual({
      index: 4,
      parameters: { fixed: true, a: '2', b: 'y' },
      raw: { a: '2', b: 'y' },
      label: 'a=2 b=y',
    });
    expect(buildGrid([])).toEqual([{ index: 0, parameters: {}, raw: {}, label: '' }]);
  });

  it('has one cell per combination, each exactly once (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 4 }), { maxLength: 4 }), (sizes) => {
        const axes = sizes.map((size, axis) => ({
          name: `p${axis}`,
          values: Array.from({ length: size }, (_, value) => String(value)),
        }));
        const cells = buildGrid(axes);
        expect(cells).toHaveLength(sizes.reduce((product, size) => product * size, 1));
        expect(new Set(cells.map((cell) => cell.label)).size).toBe(cells.length);
        expect(cells.map((cell) => cell.index)).toEqual(cells.map((_, index) => index));
      }),
    );
  });

  it('types values through the coercion hook and reports every refusal', () => {
    const coerce = (name: string, raw: string) => {
      const value = Number(raw);
      if (!Number.isInteger(value)) throw new Error(`${name} must be an integer`);
      return value;
    };
    expect(buildGrid(parseSweepSpecs(['n=1,2']), { coerce })[1]!.parameters).toEqual({ n: 2 });
    expect(() => buildGrid(parseSweepSpecs(['n=1,x', 'm=0.5']), { coerce })).toThrow(
      expect.objectContaining({
        code: 'INVALID_SWEEP',
        details: {
          problems: [
            { spec: 'n=x', message: 'n must be an integer' },
            { spec: 'm=0.5', message: 'm must be an integer' },
          ],
        },
      }),
    );
  });

  it('refuses grids over the cell limit', () => {
    expect(() => buildGrid(parseSweepSpecs(['a=1,2,3', 'b=1,2,3']), { maxCells: 8 })).toThrow(
      expect.objectContaining({ code: 'INVALID_SWEEP' }),
    );
  });
});

describe('runSweep', () => {
  const axes = parseSweepSpecs(['a=1,2,13', 'b=0.5,1']);
  const cells = buildGrid(axes);

  it('runs TypeScript cells on worker threads, results in grid order, errors per cell', async () => {
    const finished: number[] = [];
    const results = await runSweep({
      module: MODULE,
      exportName: 'slowCompute',
      cells,
      input: { base: '10' },
      concurrency: 3,
      onResult: (result) => finished.push(result.index),
    });
    expect(results.map((result) => result.index)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(finished.sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(results.slice(0, 4).map((result) => result.status === 'ok' && result.value)).toEqual([
      { product: '10.5', label: '1/0.5' },
      { product: '11', label: '1/1' },
      { product: '20.5', label: '2/0.5' },
      { product: '21', label: '2/1' },
    ]);
    for (const result of results.slice(4)) {
      expect(result).toMatchObject({
        status: 'error',
        error: { code: 'UNLUCKY', message: 'thirteen is refused' },
      });
    }
    const single = await runSweep({
      module: MODULE,
      exportName: 'compute',
      cells,
      input: { base: '10' },
      concurrency: 1,
    });
    expect(single).toEqual(results);
  });

  it('fails only the cells whose worker died, and carries on with a new worker', async () => {
    const results = await runSweep({
      module: MODULE,
      exportName: 'exitOnTwo',
      cells,
      input: { base: '1' },
      concurrency: 2,
    });
    expect(results.map((result) => result.status)).toEqual([
      'ok',
      'ok',
      'error',
      'error',
      'error',
      'error',
    ]);
    expect(results[2]).toMatchObject({
      error: { code: 'SWEEP_WORKER_EXITED' },
    });
    expect(results[4]).toMatchObject({ error: { code: 'UNLUCKY' } });
  });

  it('fails every cell at once when the function cannot be found', async () => {
    const results = await runSweep({
      module: MODULE,
      exportName: 'notAFunction',
      cells,
    });
    expect(
      new Set(results.map((result) => result.status === 'error' && result.error.code)),
    ).toEqual(new Set(['SWEEP_MODULE_INVALID']));
    const missing = await runSweep({
      module: `${MODULE}.missing.ts`,
      exportName: 'x',
      cells,
    });
    expect(missing.every((result) => result.status === 'error')).toBe(true);
  });

  it('reports results that cannot cross threads', async () => {
    const [result] = await runSweep({
      module: MODULE,
      exportName: 'notCloneable',
      cells: cells.slice(0, 1),
    });
    expect(result).toMatchObject({
      status: 'error',
      error: { code: 'SWEEP_RESULT_NOT_CLONEABLE' },
    });
  });

  it('runs at most `concurrency` threads, and rejects when the progress callback throws', async () => {
    const wide = buildGrid(parseSweepSpecs(['a=1,2,3,4,5,6']));
    const threads = await runSweep({
      module: MODULE,
      exportName: 'threadOf',
      cells: wide,
      concurrency: 2,
    });
    const ids = new Set(threads.map((result) => result.status === 'ok' && result.value));
    expect(threads.every((result) => result.status === 'ok')).toBe(true);
    expect(ids.size).toBeLessThanOrEqual(2);
    await expect(
      runSweep({
        module: MODULE,
        exportName: 'compute',
        cells,
        input: { base: '1' },
        onResult: () => {
          throw new Error('progress broke');
        },
      }),
    ).rejects.toThrow('progress broke');
  });

  it('sizes the pool by the grid and the machine', () => {
    expect(defaultConcurrency(1)).toBe(1);
    expect(defaultConcurrency(10_000)).toBeGreaterThanOrEqual(1);
  });
});

describe('formatSweepTable', () => {
  it('prints parameters as typed, the result fields and the status, in grid order', () => {
    const axes = parseSweepSpecs(['a=1,2']);
    const cells = buildGrid(axes, { coerce: (_, raw) => Number(raw) });
    const results: SweepResult<{ pnl: string; trades: number }>[] = [
      { ...cells[0]!, status: 'ok', value: { pnl: '12.5', trades: 3 } },
      {
        ...cells[1]!,
        status: 'error',
        error: { code: 'BOOM', message: 'no data' },
      },
    ];
    expect(formatSweepTable(axes, results)).toBe(
      [
        'a   pnl  trades  status',
        '-  ----  ------  -------------------',
        '1  12.5       3  ok',
        '2                error BOOM: no data',
      ].join('\n'),
    );
  });
});
