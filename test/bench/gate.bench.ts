/**
 * Risk gate throughput: evaluations per second of a typical limit order, through the pure
 * `evaluateIntent` and through the stateful `RiskGate` (rate windows included), on a view
 * with a few markets, positions and resting orders. Beside tinybench's wall-clock figures, each
 * case is timed in CPU time (process.cpuUsage, user + system) over a fixed number of calls after
 * tinybench has warmed it up, since the machine may be shared.
 */
import { Bench } from 'tinybench';
import { VirtualClock } from '../../src/core/clock.ts';
import { parseDecimal } from '../../src/core/decimal.ts';
import type { StampedIntent } from '../../src/runtime/intents.ts';
import { RiskConfig } from '../../src/runtime/risk/config.ts';
import { evaluateIntent } from '../../src/runtime/risk/evaluate.ts';
import { RiskGate } from '../../src/runtime/risk/gate.ts';
import type { RiskMarketView, RiskSnapshot, RiskView } from '../../src/runtime/risk/view.ts';
import { printBench } from './report.ts';

const NOW = Date.UTC(2025, 0, 15, 12);
const d = parseDecimal;

function market(marketId: string, mark: string, tick: string, step: string): RiskMarketView {
  return {
    marketId,
    priceTick: d(tick),
    quantityStep: d(step),
    minimumQuantity: d(step),
    minimumNotional: d('10'),
    maximumLeverage: 50,
    markPrice: d(mark),
    dataStatus: 'live',
    observedAt: NOW,
  };
}

const snapshot: RiskSnapshot = {
  routeReady: true,
  markets: {
    'BTC-PERP': market('BTC-PERP', '60000', '0.5', '0.001'),
    'ETH-PERP': market('ETH-PERP', '3000', '0.05', '0.01'),
    'SOL-PERP': market('SOL-PERP', '150', '0.01', '0.1'),
  },
  positions: {
    'BTC-PERP': { marketId: 'BTC-PERP', quantity: d('0.4'), entryPrice: d('59000') },
    'ETH-PERP': { marketId: 'ETH-PERP', quantity: d('-3'), entryPrice: d('3100') },
  },
  openOrders: Array.from({ length: 10 }, (_, index) => ({
    clientOrderId: `resting-${index}`,
    marketId: index % 2 === 0 ? 'BTC-PERP' : 'ETH-PERP',
    side: index % 3 === 0 ? ('sell' as const) : ('buy' as const),
    price: index % 2 === 0 ? d('59500') : d('2990'),
    remainingQuantity: index % 2 === 0 ? d('0.01') : d('0.5'),
    reduceOnly: false,
  })),
  equity: d('250000'),
};

const config = RiskConfig.parse({
  max_order_notional: '50000',
  max_position_notional: '200000',
  max_gross_exposure: '500000',
  max_account_leverage: '5',
  max_leverage: 20,
  max_orders_per_second: 1_000_000_000,
  max_orders_per_minute: 1_000_000_000,
});

const stamped: StampedIntent = {
  strategyId: 'bench',
  sequence: 1,
  requestId: 'bench:epoch:1',
  clientOrderId: 'bench-1',
  emittedAt: NOW,
  intent: {
    kind: 'place',
    marketId: 'BTC-PERP',
    side: 'buy',
    type: 'limit',
    quantity: '0.0507',
    price: '59987.3',
    leverage: 5,
  },
};

const CPU_CALLS = 50_000;

/** CPU microseconds per call of `work`, over `CPU_CALLS` calls. */
function cpuMicrosecondsPerCall(work: () => void): number {
  const start = process.cpuUsage();
  for (let call = 0; call < CPU_CALLS; call++) work();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / CPU_CALLS;
}

export default async function run(): Promise<void> {
  const view: RiskView = {
    ...snapshot,
    now: NOW,
    tradingState: 'ACTIVE',
    recentOrderTimes: Array.from({ length: 50 }, (_, index) => NOW - 50_000 + index * 1000),
  };
  if (!evaluateIntent(stamped, view, config).allowed) throw new Error('the bench intent is denied');

  const clock = new VirtualClock(NOW);
  const gate = new RiskGate({ config, clock });
  let fresh = 0;
  const cases: [string, () => void][] = [
    [
      'evaluateIntent: limit place',
      () => {
        evaluateIntent(stamped, view, config);
      },
    ],
    [
      'RiskGate.evaluate: limit place (rate windows)',
      () => {
        // One order per virtual second: the minute window holds 60 entries, as a busy bot's would.
        clock.advanceBy(1000);
        gate.evaluate(stamped, snapshot);
      },
    ],
    [
      'RiskGate.evaluate: limit place, one new order and a new mark each time',
      () => {
        // As in a replay: every intent finds the order the last one placed and a newer ticker.
        clock.advanceBy(1000);
        fresh += 1;
        const newest = {
          clientOrderId: `fresh-${fresh}`,
          marketId: 'BTC-PERP',
          side: 'buy' as const,
          price: d(`59${500 + (fresh % 400)}`),
          remainingQuantity: d('0.012'),
          reduceOnly: false,
        };
        const btc = snapshot.markets['BTC-PERP']!;
        gate.evaluate(stamped, {
          routeReady: true,
          markets: {
            ...snapshot.markets,
            'BTC-PERP': { ...btc, markPrice: d(`600${fresh % 10}0`) },
          },
          positions: snapshot.positions,
          openOrders: [...snapshot.openOrders.slice(1), newest],
          equity: snapshot.equity,
        });
      },
    ],
    [
      'evaluateIntent: cancel',
      () => {
        evaluateIntent(
          { ...stamped, intent: { kind: 'cancel', clientOrderId: 'x' } },
          view,
          config,
        );
      },
    ],
  ];
  const bench = new Bench({ time: 500 });
  for (const [name, work] of cases) bench.add(name, work);
  await bench.run();
  printBench(bench);
  console.table(
    cases.map(([name, work]) => ({
      task: name,
      'CPU us per call': cpuMicrosecondsPerCall(work).toFixed(2),
    })),
  );
  gate.dispose();
}
