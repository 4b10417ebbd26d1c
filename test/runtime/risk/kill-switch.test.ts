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
  KillSwitch,
  readKillFile,
  readKillRequest,
  requestKill,
  type SignalSource,
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

function killSwitchOn(path: string | null, pollMs = 500): KillSwitch {
  return new KillSwitch({ file: path, clock, target: gate, pollMs });
}

describe('kill file', () => {
  it('halts at the first poll after the file appears, again after a resume while present, and resumes when it goes', () => {
    const path = join(folder, 'state', 'paperbot.kill');
    const killSwitch = killSwitchOn(path);
    killSwitch.start();
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

    // Removing the file (what `paperbot kill --clear` does) resumes at the next poll: no restart.
    expect(clearKill(path)).toBe(true);
    expect(clearKill(path)).toBe(false);
    clock.advanceBy(499);
    expect(gate.tradingState.state).toBe('HALTED');
    clock.advanceBy(1);
    expect(gate.tradingState.state).toBe('ACTIVE');
    killSwitch.stop();
  });

  it('reads reduce-only files as REDUCING, and moves between halted and reduce-only both ways', () => {
    const path = join(folder, 'paperbot.kill');
    const killSwitch = killSwitchOn(path);
    killSwitch.start();
    requestKill(path, 'flatten slowly', 'reduce-only');
    expect(readFileSync(path, 'utf8')).toBe('reduce-only: flatten slowly\n');
    expect(readKillRequest(path)).toEqual({ mode: 'reduce-only', reason: 'flatten slowly' });
    clock.advanceBy(500);
    expect(gate.tradingState).toMatchObject({
      state: 'REDUCING',
      reason: `kill file ${path}: flatten slowly`,
      source: 'kill_switch',
    });
    requestKill(path, 'stop now');
    clock.advanceBy(500);
    expect(gate.tradingState).toMatchObject({ state: 'HALTED', source: 'kill_switch' });
    requestKill(path, 'calmer now', 'reduce-only');
    clock.advanceBy(500);
    expect(gate.tradingState).toMatchObject({ state: 'REDUCING', source: 'kill_switch' });
    killSwitch.stop();
  });

  it('halts at once when the file is already there, and stops polling when told', () => {
    const path = join(folder, 'paperbot.kill');
    requestKill(path, 'left over from yesterday');
    const timersBefore = clock.pendingTimers();
    const killSwitch = killSwitchOn(path, 1000);
    killSwitch.start();
    expect(gate.tradingState.state).toBe('HALTED');
    expect(clock.pendingTimers()).toBe(timersBefore + 1);
    killSwitch.stop();
    expect(clock.pendingTimers()).toBe(timersBefore);
  });

  it('halt, reduceOnly and clear write the same file and act at once, as the poll would', () => {
    const path = join(folder, 'paperbot.kill');
    const killSwitch = killSwitchOn(path);
    killSwitch.start();
    killSwitch.halt('dashboard');
    expect(readKillRequest(path)).toEqual({ mode: 'halt', reason: 'dashboard' });
    expect(gate.tradingState).toMatchObject({
      state: 'HALTED',
      reason: `kill file ${path}: dashboard`,
    });
    killSwitch.reduceOnly('dashboard');
    expect(readKillRequest(path)).toEqual({ mode: 'reduce-only', reason: 'dashboard' });
    expect(gate.tradingState.state).toBe('REDUCING');
    expect(killSwitch.clear('dashboard')).toBe(true);
    expect(existsSync(path)).toBe(false);
    expect(gate.tradingState.state).toBe('ACTIVE');
    clock.advanceBy(5000);
    expect(gate.tradingState.state).toBe('ACTIVE');
    killSwitch.stop();
  });

  it('without a file, still halts, reduces and clears the gate', () => {
    const timersBefore = clock.pendingTimers();
    const killSwitch = killSwitchOn(null);
    killSwitch.start();
    expect(clock.pendingTimers()).toBe(timersBefore);
    killSwitch.halt('dashboard');
    expect(gate.tradingState).toMatchObject({ state: 'HALTED', reason: 'dashboard' });
    expect(killSwitch.clear('dashboard')).toBe(false);
    expect(gate.tradingState.state).toBe('ACTIVE');
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
  it('halts on SIGUSR2 through the kill file until uninstalled', () => {
    const fakeProcess = new EventEmitter();
    const path = join(folder, 'paperbot.kill');
    const uninstall = installKillSignal(fakeProcess, killSwitchOn(path));
    expect(fakeProcess.listenerCount('SIGUSR2')).toBe(1);
    fakeProcess.emit('SIGUSR2');
    expect(gate.tradingState).toMatchObject({
      state: 'HALTED',
      reason: `kill file ${path}: signal SIGUSR2`,
      source: 'kill_switch',
    });
    expect(readKillFile(path)).toBe('signal SIGUSR2');
    clearKill(path);
    uninstall();
    expect(fakeProcess.listenerCount('SIGUSR2')).toBe(0);
    gate.resume();
    fakeProcess.emit('SIGUSR2');
    expect(gate.tradingState.state).toBe('ACTIVE');
  });

  it('listens on the configured signal only', () => {
    const fakeProcess = new EventEmitter();
    const uninstall = installKillSignal(fakeProcess, killSwitchOn(null), 'SIGHUP');
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
