import { EventEmitter } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../src/core/clock.ts';
import { RiskGate } from '../../../src/runtime/risk/gate.ts';
import {
  clearKill,
  installKillSignal,
  readKillFile,
  requestKill,
  type SignalSource,
  watchKillFile,
} from '../../../src/runtime/risk/kill-switch.ts';
import { openConfig } from './fixtures.ts';

let folder: string;
let gate: RiskGate;
let clock: VirtualClock;

beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'paperbot-kill-'));
  clock = new VirtualClock(1_000_000);
  gate = new RiskGate({ config: openConfig(), clock });
});

afterEach(() => {
  gate.dispose();
  rmSync(folder, { recursive: true, force: true });
});

describe('kill file', () => {
  it('halts at the first poll after the file appears, and again after a resume while present', () => {
    const path = join(folder, 'state', 'paperbot.kill');
    const stop = watchKillFile(path, clock, gate, { pollMs: 500 });
    clock.advanceBy(1000);
    expect(gate.tradingState.state).toBe('ACTIVE');

    requestKill(path, 'operator says stop\nnow');
    clock.advanceBy(499);
    expect(gate.tradingState.state).toBe('ACTIVE');
    clock.advanceBy(1);
    expect(gate.tradingState).toEqual({
      state: 'HALTED',
      reason: `kill file ${path}: operator says stop now`,
      source: 'kill_switch',
      since: 1_001_500,
    });

    gate.resume();
    expect(gate.tradingState.state).toBe('ACTIVE');
    clock.advanceBy(500);
    expect(gate.tradingState.state).toBe('HALTED');

    expect(clearKill(path)).toBe(true);
    expect(clearKill(path)).toBe(false);
    gate.resume();
    clock.advanceBy(5000);
    expect(gate.tradingState.state).toBe('ACTIVE');
    stop();
  });

  it('halts at once when the file is already there, and stops polling when told', () => {
    const path = join(folder, 'paperbot.kill');
    requestKill(path, 'left over from yesterday');
    const timersBefore = clock.pendingTimers();
    const stop = watchKillFile(path, clock, gate);
    expect(gate.tradingState.state).toBe('HALTED');
    expect(clock.pendingTimers()).toBe(timersBefore + 1);
    stop();
    expect(clock.pendingTimers()).toBe(timersBefore);
  });

  it('is written atomically, private, with the reason on one line', () => {
    const path = join(folder, 'nested', 'deeper', 'kill');
    requestKill(path, '  drawdown   too deep  ');
    expect(readFileSync(path, 'utf8')).toBe('drawdown too deep\n');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(folder, 'nested', 'deeper'))).toEqual(['kill']);
    expect(readKillFile(path)).toBe('drawdown too deep');
  });

  it('counts an empty or unreadable file as a kill', () => {
    const path = join(folder, 'kill');
    requestKill(path, '');
    expect(readKillFile(path)).toBe('no reason given');
    rmSync(path);
    expect(readKillFile(path)).toBeNull();
    expect(existsSync(path)).toBe(false);
    expect(readKillFile(folder)).toBe('present but unreadable');
  });
});

describe('kill signal', () => {
  it('halts on SIGUSR2 until uninstalled', () => {
    const fakeProcess = new EventEmitter();
    const uninstall = installKillSignal(fakeProcess, gate);
    expect(fakeProcess.listenerCount('SIGUSR2')).toBe(1);
    fakeProcess.emit('SIGUSR2');
    expect(gate.tradingState).toMatchObject({
      state: 'HALTED',
      reason: 'signal SIGUSR2',
      source: 'kill_switch',
    });
    uninstall();
    expect(fakeProcess.listenerCount('SIGUSR2')).toBe(0);
    gate.resume();
    fakeProcess.emit('SIGUSR2');
    expect(gate.tradingState.state).toBe('ACTIVE');
  });

  it('listens on the configured signal only', () => {
    const fakeProcess = new EventEmitter();
    const uninstall = installKillSignal(fakeProcess, gate, 'SIGHUP');
    fakeProcess.emit('SIGUSR2');
    expect(gate.tradingState.state).toBe('ACTIVE');
    fakeProcess.emit('SIGHUP');
    expect(gate.tradingState.reason).toBe('signal SIGHUP');
    uninstall();
  });

  it('accepts the real process object', () => {
    const source: SignalSource = process;
    expect(typeof source.on).toBe('function');
  });
});
