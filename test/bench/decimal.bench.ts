import { Bench } from 'tinybench';
import { parseDecimal, toWire } from '../../src/core/decimal.ts';
import { IncrementGrid, priceRoundingDirection, roundPrice } from '../../src/core/grid.ts';
import {
  parseScaled,
  scaledOf,
  scaledPlus,
  scaledRoundToIncrement,
  scaledTimes,
  scaledToWire,
} from '../../src/core/scaled.ts';
import { printBench } from './report.ts';

export default async function run(): Promise<void> {
  const a = parseDecimal('64123.45');
  const b = parseDecimal('0.0375');
  const tick = parseDecimal('0.01');
  const grid = new IncrementGrid(tick);
  // The same figures as scaled bigints (src/core/scaled.ts), as the risk gate computes them.
  const x = scaledOf(a);
  const y = scaledOf(b);
  const scaledTick = scaledOf(tick);
  const bench = new Bench({ time: 300 });
  bench
    .add('decimal parse', () => parseDecimal('64123.4567'))
    .add('decimal plus', () => a.plus(b))
    .add('decimal times', () => a.times(b))
    .add('decimal toWire', () => toWire(a))
    .add('round price to tick', () => roundPrice(a, tick, 'buy'))
    .add('price to integer ticks', () => grid.toUnits(a))
    .add('scaled parse', () => parseScaled('64123.4567'))
    .add('scaled plus', () => scaledPlus(x, y))
    .add('scaled times', () => scaledTimes(x, y))
    .add('scaled toWire', () => scaledToWire(x))
    .add('scaled round price to tick', () =>
      scaledRoundToIncrement(x, scaledTick, priceRoundingDirection('buy')),
    )
    .add('scaled from a decimal', () => scaledOf(a));
  await bench.run();
  printBench(bench);
}
