/** Virtual-time tests of the stateful gate: rate windows, loss limits, the trading state machine. */
import { afterEach, describe, expect, it } from 'vitest';
import type { LogFields } from '../../../src/core/logger.ts';
import { VirtualClock } from '../../../src/core/clock.ts';
import type { OrderIntent } from '../../../src/runtime/intents.ts';
import type { RiskConfigInput } from '../../../src/runtime/risk/config.ts';
import {
  type DenialEvent,
  RiskGate,
  type TradingStateSnapshot,
} from '../../../src/runtime/risk/gate.ts';
import type { RiskSnapshot } from '../../../src/runtime/risk/view.ts';
import { close, market, openConfig, place, position, stamp } from './fixtures.ts';

const DAY = 86_400_000;
/** 2025-01-15T10:00:00Z. */
const START = Date.UTC(2025, 0, 15, 10, 0, 0);

const gates: RiskGate[] = [];
afterEach(() => {
  for (const gate of gates.splice(0)) gate.dispose();
});

function setup(overrides: RiskConfigInput = {}, start = START) {
  const clock = new VirtualClock(start);
  const gate = new RiskGate({ config: openConfig(overrides), clock });
  gates.push(gate);
  const states: TradingStateSnapshot[] = [];
  gate.state$.subscribe((snapshot) => states.push(snapshot));
  const denials: DenialEvent[] = [];
  gate.denials$.subscribe((event) => denials.push(event));
  return { clock, gate, states, denials };
}

/** A market always fresh at the clock's time, with a long position to reduce. */
function snapshotAt(clock: VirtualClock): RiskSnapshot {
  const btc = market({ observedAt: clock.now() });
  return {
    routeReady: true,
    markets: { [btc.marketId]: btc },
    positions: { [btc.marketId]: position(btc.marketId, '1') },
    openOrders: [],
    equity: null,
  };
}

let sequence = 0;
function submit(gate: RiskGate, clock: VirtualClock, intent: OrderIntent = place()) {
  return gate.evaluate(stamp(intent, ++sequence), snapshotAt(clock));
}

function ruleNames(decision: ReturnType<typeof submit>): string[] {
  return decision.allowed ? [] : decision.denials.map((denial) => denial.rule);
}

describe('order rate windows', () => {
  it('allows exactly the per-second limit, then frees a slot when the oldest leaves', () => {
    const { gate, clock } = setup({ max_orders_per_second: 3 });
    for (let index = 0; index < 3; index++) expect(submit(gate, clock).allowed).toBe(true);
    const fourth = submit(gate, clock);
    expect(fourth).toEqual({
      allowed: false,
      denials: [
        expect.objectContaining({ rule: 'max_orders_per_second', limit: '3', observed: '4' }),
      ],
    });
    clock.advanceTo(START + 999);
    expect(ruleNames(submit(gate, clock))).toEqual(['max_orders_per_second']);
    clock.advanceTo(START + 1000);
    for (let index = 0; index < 3; index++) expect(submit(gate, clock).allowed).toBe(true);
    expect(ruleNames(submit(gate, clock))).toEqual(['max_orders_per_second']);
  });

  it('slides: each order frees its slot one second after it was sent', () => {
    const { gate, clock } = setup({ max_orders_per_second: 3 });
    for (const at of [0, 400, 800]) {
      clock.advanceTo(START + at);
      expect(submit(gate, clock).allowed).toBe(true);
    }
    clock.advanceTo(START + 999);
    expect(submit(gate, clock).allowed).toBe(false);
    clock.advanceTo(START + 1000);
    expect(submit(gate, clock).allowed).toBe(true);
    clock.advanceTo(START + 1001);
    expect(submit(gate, clock).allowed).toBe(false);
    clock.advanceTo(START + 1400);
    expect(submit(gate, clock).allowed).toBe(true);
    // The gate keeps a minute of history, for the per-minute window.
    expect(gate.recentOrderTimes()).toEqual([0, 400, 800, 1000, 1400].map((at) => START + at));
  });

  it('holds the per-minute limit over a full minute', () => {
    const { gate, clock } = setup({ max_orders_per_second: 10, max_orders_per_minute: 5 });
    for (let second = 0; second < 5; second++) {
      clock.advanceTo(START + second * 1000);
      expect(submit(gate, clock).allowed).toBe(true);
    }
    clock.advanceTo(START + 5000);
    const denied = submit(gate, clock);
    expect(denied.allowed ? [] : denied.denials).toEqual([
      expect.objectContaining({ rule: 'max_orders_per_minute', limit: '5', observed: '6' }),
    ]);
    clock.advanceTo(START + 59_999);
    expect(submit(gate, clock).allowed).toBe(false);
    clock.advanceTo(START + 60_000);
    expect(submit(gate, clock).allowed).toBe(true);
    expect(submit(gate, clock).allowed).toBe(false);
    clock.advanceTo(START + 61_000);
    expect(submit(gate, clock).allowed).toBe(true);
  });

  it('counts closes but never limits them, and neither counts nor limits cancels', () => {
    const { gate, clock } = setup({ max_orders_per_second: 2 });
    expect(submit(gate, clock, close()).allowed).toBe(true);
    expect(submit(gate, clock, close()).allowed).toBe(true);
    expect(submit(gate, clock, close()).allowed).toBe(true);
    for (let index = 0; index < 10; index++) {
      expect(submit(gate, clock, { kind: 'cancel_all' }).allowed).toBe(true);
    }
    expect(gate.recentOrderTimes()).toHaveLength(3);
    expect(ruleNames(submit(gate, clock))).toEqual(['max_orders_per_second']);
  });

  it('does not count denied intents in the window', () => {
    const { gate, clock } = setup({ max_orders_per_second: 1 });
    expect(submit(gate, clock, place({ quantity: 'junk' })).allowed).toBe(false);
    expect(submit(gate, clock).allowed).toBe(true);
  });
});

describe('denials', () => {
  it('are counted by rule and published with the intent and the state', () => {
    const { gate, clock, denials } = setup({
      max_orders_per_second: 1,
      max_order_notional: '10000',
    });
    expect(submit(gate, clock, place({ quantity: '0.1' })).allowed).toBe(true);
    submit(gate, clock, place({ quantity: '0.2' }));
    submit(gate, clock, place({ quantity: '0.1' }));
    expect(gate.deniedIntents).toBe(2);
    expect(Object.fromEntries(gate.denialCounts())).toEqual({
      max_order_notional: 1,
      max_orders_per_second: 2,
    });
    expect(denials).toHaveLength(2);
    expect(denials[0]).toMatchObject({
      at: START,
      tradingState: 'ACTIVE',
      intent: { intent: { quantity: '0.2' } },
      denials: [{ rule: 'max_order_notional' }, { rule: 'max_orders_per_second' }],
    });
  });

  it('are logged with the rules that failed', () => {
    const clock = new VirtualClock(START);
    const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
    const record =
      (level: string) =>
      (message: string, fields?: LogFields): void => {
        lines.push({ level, fields: { ...fields }, message });
      };
    const logger = {
      debug: record('debug'),
      info: record('info'),
      warn: record('warn'),
      error: record('error'),
    };
    const gate = new RiskGate({ config: openConfig({ max_order_notional: '1' }), clock, logger });
    gates.push(gate);
    submit(gate, clock);
    expect(lines).toEqual([
      {
        level: 'warn',
        fields: expect.objectContaining({ event: 'risk.denied', kind: 'place' }),
        message: 'intent denied by max_order_notional',
      },
    ]);
  });
});

describe('trading state', () => {
  it('halts and resumes on request, with reasons and times', () => {
    const { gate, clock, states } = setup();
    clock.advanceTo(START + 5000);
    gate.reduce('reconciliation found a difference');
    clock.advanceTo(START + 6000);
    gate.halt('operator');
    gate.halt('operator');
    gate.reduce('ignored: already halted');
    expect(ruleNames(submit(gate, clock))).toEqual(['trading_state']);
    expect(submit(gate, clock, close()).allowed).toBe(true);
    clock.advanceTo(START + 7000);
    gate.resume();
    expect(states).toEqual([
      { state: 'ACTIVE', reason: null, source: null, since: START },
      {
        state: 'REDUCING',
        reason: 'reconciliation found a difference',
        source: 'manual',
        since: START + 5000,
      },
      { state: 'HALTED', reason: 'operator', source: 'manual', since: START + 6000 },
      { state: 'ACTIVE', reason: null, source: null, since: START + 7000 },
    ]);
    expect(gate.tradingState.state).toBe('ACTIVE');
    expect(gate.state$.value.state).toBe('ACTIVE');
  });

  it('lets only reducing orders through while REDUCING', () => {
    const { gate, clock } = setup();
    gate.reduce('test');
    expect(ruleNames(submit(gate, clock, place({ side: 'buy' })))).toEqual(['trading_state']);
    expect(submit(gate, clock, place({ side: 'sell', quantity: '0.5' }))).toMatchObject({
      allowed: true,
      effect: 'reduces_exposure',
    });
  });

  it('keeps a kill-switch halt through a new day until resume', () => {
    const { gate, clock } = setup({ daily_loss: { halt_at: '100' } });
    gate.halt('kill file', 'kill_switch');
    clock.advanceBy(3 * DAY);
    expect(gate.tradingState).toMatchObject({ state: 'HALTED', source: 'kill_switch' });
    gate.resume();
    expect(gate.tradingState.state).toBe('ACTIVE');
  });
});

describe('daily loss', () => {
  it('moves to REDUCING then HALTED, latched for the day, and clears at the day boundary', () => {
    const { gate, clock, states } = setup({ daily_loss: { reduce_at: '100', halt_at: '200' } });
    gate.updateEquity('1000');
    gate.updateEquity('901');
    expect(gate.tradingState.state).toBe('ACTIVE');
    clock.advanceTo(START + 1000);
    gate.updateEquity('900');
    expect(gate.tradingState).toEqual({
      state: 'REDUCING',
      reason: 'daily loss 100 reached daily_loss.reduce_at 100',
      source: 'daily_loss',
      since: START + 1000,
    });
    gate.updateEquity('990');
    expect(gate.tradingState.state).toBe('REDUCING');
    clock.advanceTo(START + 2000);
    gate.updateEquity('800');
    expect(gate.tradingState).toMatchObject({ state: 'HALTED', since: START + 2000 });

    const midnight = Date.UTC(2025, 0, 16);
    clock.advanceTo(midnight - 1);
    expect(gate.tradingState.state).toBe('HALTED');
    clock.advanceTo(midnight);
    expect(gate.tradingState).toEqual({
      state: 'ACTIVE',
      reason: null,
      source: null,
      since: midnight,
    });
    // The new day counts from the equity at the boundary.
    gate.updateEquity('701');
    expect(gate.tradingState.state).toBe('ACTIVE');
    gate.updateEquity('700');
    expect(gate.tradingState.state).toBe('REDUCING');
    expect(states.map((snapshot) => snapshot.state)).toEqual([
      'ACTIVE',
      'REDUCING',
      'HALTED',
      'ACTIVE',
      'REDUCING',
    ]);
  });

  it('uses the configured day start in UTC', () => {
    const { gate, clock } = setup({ daily_loss: { reduce_at: '10' }, day_start_utc: '22:30' });
    gate.updateEquity('100');
    gate.updateEquity('90');
    expect(gate.tradingState.state).toBe('REDUCING');
    const boundary = Date.UTC(2025, 0, 15, 22, 30);
    clock.advanceTo(boundary - 1);
    expect(gate.tradingState.state).toBe('REDUCING');
    clock.advanceTo(boundary);
    expect(gate.tradingState.state).toBe('ACTIVE');
    clock.advanceTo(boundary + DAY + 1);
    expect(gate.tradingState.state).toBe('ACTIVE');
  });

  it("counts a percentage of the day's starting equity", () => {
    const { gate } = setup({ daily_loss: { halt_at_percent: '5' } });
    gate.updateEquity('2000');
    gate.updateEquity('1900.01');
    expect(gate.tradingState.state).toBe('ACTIVE');
    gate.updateEquity('1900');
    expect(gate.tradingState).toMatchObject({
      state: 'HALTED',
      reason: 'daily loss 5% reached daily_loss.halt_at_percent 5%',
    });
  });

  it('cannot be resumed away while the loss is still beyond the limit', () => {
    const { gate } = setup({ daily_loss: { reduce_at: '100' } });
    gate.updateEquity('1000');
    gate.updateEquity('850');
    gate.resume();
    expect(gate.tradingState).toMatchObject({ state: 'REDUCING', source: 'daily_loss' });
  });

  it('survives a restart through the saved loss tracking', () => {
    const { gate, clock } = setup({ daily_loss: { reduce_at: '100' } });
    gate.updateEquity('1000');
    gate.updateEquity('950');
    const saved = gate.lossTrackingRecord();
    expect(saved).toEqual({
      dayStartedAt: Date.UTC(2025, 0, 15),
      dayStartEquity: '1000',
      peakEquity: '1000',
      lastEquity: '950',
    });
    clock.advanceBy(60_000);
    const restarted = new RiskGate({
      config: openConfig({ daily_loss: { reduce_at: '100' } }),
      clock,
      lossTracking: saved,
    });
    gates.push(restarted);
    restarted.updateEquity('900');
    expect(restarted.tradingState.state).toBe('REDUCING');
  });

  it('starts a new day when restored after the boundary', () => {
    const clock = new VirtualClock(START + DAY);
    const restarted = new RiskGate({
      config: openConfig({ daily_loss: { reduce_at: '100' } }),
      clock,
      lossTracking: {
        dayStartedAt: Date.UTC(2025, 0, 15),
        dayStartEquity: '1000',
        peakEquity: '1000',
        lastEquity: '850',
      },
    });
    gates.push(restarted);
    expect(restarted.tradingState.state).toBe('ACTIVE');
    restarted.updateEquity('800');
    expect(restarted.lossTrackingRecord().dayStartEquity).toBe('850');
    expect(restarted.tradingState.state).toBe('ACTIVE');
  });
});

describe('drawdown', () => {
  it('measures from the peak and rebases the peak on resume', () => {
    const { gate, clock } = setup({
      drawdown: { reduce_at_percent: '10', halt_at_percent: '20' },
    });
    gate.updateEquity('1000');
    gate.updateEquity('1200');
    gate.updateEquity('1081');
    expect(gate.tradingState.state).toBe('ACTIVE');
    gate.updateEquity('1080');
    expect(gate.tradingState).toMatchObject({ state: 'REDUCING', source: 'drawdown' });
    clock.advanceBy(DAY);
    expect(gate.tradingState.state).toBe('REDUCING');
    gate.resume();
    expect(gate.tradingState.state).toBe('ACTIVE');
    gate.updateEquity('972');
    expect(gate.tradingState.state).toBe('REDUCING');
    gate.updateEquity('864');
    expect(gate.tradingState).toMatchObject({
      state: 'HALTED',
      reason: 'drawdown from the peak 1080 20% reached drawdown.halt_at_percent 20%',
    });
  });

  it('reports the most severe condition, the earliest first among equals', () => {
    const { gate } = setup({ drawdown: { reduce_at_percent: '10' } });
    gate.halt('first');
    gate.updateEquity('100');
    gate.updateEquity('50');
    expect(gate.tradingState).toMatchObject({ state: 'HALTED', reason: 'first' });
    gate.halt('second', 'kill_switch');
    expect(gate.tradingState).toMatchObject({ reason: 'first', source: 'manual' });
  });
});

it('dispose stops the day timer and completes the streams', () => {
  const { gate, clock } = setup();
  expect(clock.pendingTimers()).toBe(1);
  let completed = 0;
  gate.state$.subscribe({ complete: () => completed++ });
  gate.denials$.subscribe({ complete: () => completed++ });
  gate.dispose();
  expect(clock.pendingTimers()).toBe(0);
  expect(completed).toBe(2);
});

describe('work a decision does not need', () => {
  it('builds no snapshot for a cancel, and one for a placement', () => {
    const { gate, clock } = setup();
    let built = 0;
    const read = () => {
      built += 1;
      return snapshotAt(clock);
    };
    expect(gate.evaluate(stamp({ kind: 'cancel', clientOrderId: 'c' }, ++sequence), read)).toEqual({
      allowed: true,
      intent: expect.objectContaining({ sequence }),
      effect: 'no_exposure',
    });
    expect(gate.evaluate(stamp({ kind: 'cancel_all' }, ++sequence), read).allowed).toBe(true);
    expect(built).toBe(0);
    expect(gate.evaluate(stamp(place(), ++sequence), read).allowed).toBe(true);
    expect(built).toBe(1);
  });

  it('passes a placement already on the grid on as the same stamped intent', () => {
    const { gate, clock } = setup();
    const onGrid = stamp(place({ price: '50000', quantity: '0.01' }), ++sequence);
    const decision = gate.evaluate(onGrid, snapshotAt(clock));
    expect(decision.allowed && decision.intent).toBe(onGrid);
    const offGrid = stamp(place({ price: '50000.123456', quantity: '0.01' }), ++sequence);
    const rounded = gate.evaluate(offGrid, snapshotAt(clock));
    expect(rounded.allowed).toBe(true);
    expect(rounded.allowed && rounded.intent).not.toBe(offGrid);
    expect(rounded.allowed && rounded.intent.intent).not.toEqual(offGrid.intent);
  });

  it('tracks a repeated equity once, and the loss tracking version moves only with a change', () => {
    const { gate, clock, states } = setup({ daily_loss: { reduce_at: '100', halt_at: '200' } });
    gate.updateEquity('1000');
    const first = gate.lossTrackingVersion;
    const record = gate.lossTrackingRecord();
    gate.updateEquity('1000');
    gate.updateEquity('1000.00');
    expect(gate.lossTrackingVersion).toBe(first);
    expect(gate.lossTrackingRecord()).toEqual(record);
    gate.updateEquity('890');
    expect(gate.lossTrackingVersion).toBeGreaterThan(first);
    expect(states.at(-1)?.state).toBe('REDUCING');
    const reduced = gate.lossTrackingVersion;
    gate.updateEquity('890');
    expect(gate.lossTrackingVersion).toBe(reduced);
    // A new trading day starts from the last equity: the same figure then counts again.
    clock.advanceBy(DAY);
    gate.updateEquity('890');
    expect(gate.lossTrackingVersion).toBeGreaterThan(reduced);
    expect(gate.lossTrackingRecord()).toMatchObject({ dayStartEquity: '890', lastEquity: '890' });
    expect(states.at(-1)?.state).toBe('ACTIVE');
  });
});
