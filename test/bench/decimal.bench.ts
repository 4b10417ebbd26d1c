import { Bench } from 'tinybench';
import { parseDecimal, toWire } from '../../src/core/decimal.ts';
import { IncrementGrid, roundPrice } from '../../src/core/grid.ts';
import { printBench } from './report.ts';

export default async function run(): Promise<void> {
  const a = parseDecimal('64123.45');
  const b = parseDecimal('0.0375');
  const tick = parseDecimal('0.01');
  const grid = new IncrementGrid(tick);
  const bench = new Bench({ time: 300 });
  bench
    .add('decimal parse', () => parseDecimal('64123.4567'))
    .add('decimal plus', () => a.plus(b))
    .add('decimal times', () => a.times(b))
    .add('decimal toWire', () => toWire(a))
    .add('round price to tick', () => roundPrice(a, tick, 'buy'))
    .add('price to integer ticks', () => grid.toUnits(a));
  await bench.run();
  printBench(bench);
}
