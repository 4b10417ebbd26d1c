/** Test tools for strategy authors: the virtual-time harness, marble helpers and fixtures. */
export {
  createStrategyHarness,
  type FillOptions,
  type HarnessResponder,
  type LogRecord,
  StrategyHarness,
  type StrategyHarnessOptions,
} from './harness.ts';
export {
  type LevelInput,
  TEST_ROUTE_ID,
  TEST_START_TIME,
  testAccount,
  testBook,
  testCandle,
  testFill,
  testMarket,
  testOrder,
  testPosition,
  testTicker,
  testTrade,
} from './fixtures.ts';
export {
  type MarbleStrategyOptions,
  schedulerClock,
  stampedIntents$,
  strategyIntents$,
} from './marbles.ts';
