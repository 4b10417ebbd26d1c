/**
 * The kernel against the real emulator: the emulator on a loopback port, the real REST and
 * stream clients, the live venue, a real SQLite journal in a temporary folder, all on one
 * VirtualClock that moves only when a test advances it. Socket I/O still takes event-loop
 * turns, which the helpers yield (never by sleeping).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Subject } from 'rxjs';
import { z } from 'zod';
import { RestClient, StreamClient } from '../../../src/client/index.ts';
import { VirtualClock } from '../../../src/core/clock.ts';
import {
  type CreateKeyOptions,
  type RunningEmulator,
  type StartEmulatorOptions,
  startEmulator,
} from '../../../src/emulator/index.ts';
import type { Fill, Order } from '../../../src/protocol/index.ts';
import { silentLogger } from '../../../src/core/logger.ts';
import type { IntentOutcome, OrderIntent } from '../../../src/runtime/intents.ts';
import { Journal } from '../../../src/runtime/journal/journal.ts';
import { Kernel, type KernelOptions } from '../../../src/runtime/kernel/index.ts';
import { createLiveVenue, type LiveVenue } from '../../../src/runtime/live/index.ts';
import { parseRiskConfig, type RiskConfigInput } from '../../../src/runtime/risk/index.ts';
import type {
  OwnOrderUpdate,
  StrategyContext,
  StrategyDefinition,
} from '../../../src/runtime/strategy/index.ts';
import { defineStrategy } from '../../../src/runtime/strategy/index.ts';
import type { Credential } from '../../../src/signing/index.ts';
import { RecordingVenue } from './recording-venue.ts';
import { type LogLine, RecordingLogger } from './recording-logger.ts';

export const START_MS = Date.UTC(2026, 0, 5, 9, 0, 0);

/** One turn of the event loop, so socket I/O can progress. */
export function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Yields turns until `predicate` holds; bounded, so a broken expectation fails, not hangs. */
export async function until(
  predicate: () => boolean,
  description: string,
  maxTurns = 50_000,
): Promise<void> {
  for (let count = 0; count < maxTurns; count += 1) {
    if (predicate()) return;
    await turn();
  }
  throw new Error(`gave up waiting for ${description}`);
}

/** What a probe strategy saw, and how a test makes it emit. */
export class Probe {
  readonly commands = new Subject<OrderIntent>();
  readonly outcomes: IntentOutcome[] = [];
  readonly fills: Fill[] = [];
  readonly ownOrders: OwnOrderUpdate[] = [];
  context: StrategyContext<unknown> | null = null;

  emit(intent: OrderIntent): void {
    this.commands.next(intent);
  }

  outcomesOf(requestId: string): IntentOutcome[] {
    return this.outcomes.filter((outcome) => outcome.intent.requestId === requestId);
  }

  /** The request id of the n-th intent (from 0) this probe emitted, once an outcome names it. */
  lastOutcome(): IntentOutcome | undefined {
    return this.outcomes[this.outcomes.length - 1];
  }
}

/** A strategy that emits what the test tells it and records everything it is told. */
export function probeStrategy(probe: Probe): StrategyDefinition<unknown> {
  return defineStrategy({
    name: 'probe',
    description: 'test strategy: emits what the test pushes, records what it sees',
    params: z.strictObject({}),
    create: (context) => {
      probe.context = context as StrategyContext<unknown>;
      context.outcomes$.subscribe((outcome) => probe.outcomes.push(outcome));
      context.fills$.subscribe((fill) => probe.fills.push(fill));
      context.ownOrders$.subscribe((update) => probe.ownOrders.push(update));
      return probe.commands.asObservable();
    },
  }) as StrategyDefinition<unknown>;
}

export interface BootOptions {
  readonly strategies?: KernelOptions['strategies'];
  readonly risk?: RiskConfigInput;
  readonly kernel?: Partial<Omit<KernelOptions, 'venue' | 'marketData' | 'journal' | 'clock'>>;
  readonly marketIds?: readonly string[];
}

/** One bot process: its clients, venues, journal and kernel. */
export interface Process {
  readonly rest: RestClient;
  readonly stream: StreamClient;
  readonly live: LiveVenue;
  readonly venue: RecordingVenue;
  readonly journal: Journal;
  readonly kernel: Kernel;
  readonly logger: RecordingLogger;
}

export class KernelWorld {
  readonly processes: Process[] = [];

  private constructor(
    readonly clock: VirtualClock,
    readonly emulator: RunningEmulator,
    readonly credential: Credential,
    readonly folder: string,
  ) {}

  static async start(
    options: { emulator?: Partial<StartEmulatorOptions>; key?: CreateKeyOptions } = {},
  ): Promise<KernelWorld> {
    const clock = new VirtualClock(START_MS);
    const emulator = await startEmulator({
      clock,
      seed: 5,
      rateLimit: { quota: 1_000_000, windowMs: 60_000 },
      heartbeatIntervalMs: 10_000,
      ...options.emulator,
    });
    const credential = emulator.createKey(options.key);
    const folder = mkdtempSync(join(tmpdir(), 'paperbot-kernel-'));
    return new KernelWorld(clock, emulator, credential, folder);
  }

  get journalPath(): string {
    return join(this.folder, 'journal.sqlite');
  }

  get accountId(): string {
    return this.credential.accountId;
  }

  /** Creates a process (clients, live venue, journal, kernel); `start` is left to the test. */
  async boot(options: BootOptions = {}): Promise<Process> {
    // As the bot does: the journal first, and the private stream resumes after its sequence.
    const journal = Journal.open(this.journalPath, {
      now: () => this.clock.now(),
      durability: 'normal',
    });
    const resumeAfterSequence = journal.privateCursor()?.lastSequence ?? null;
    const rest = new RestClient({
      credential: this.credential,
      clock: this.clock,
      random: () => 0.5,
      requestTimeoutMs: 600_000,
      retry: { initialDelayMs: 10, maxDelayMs: 10 },
      reading: 'strict',
    });
    const stream = new StreamClient({
      rest,
      clock: this.clock,
      random: () => 0.5,
      heartbeatTimeoutMs: 3_600_000,
      replyTimeoutMs: 3_600_000,
      connectTimeoutMs: 3_600_000,
      reconnect: { initialDelayMs: 100, maxDelayMs: 1_000 },
      startAfterSequence: resumeAfterSequence ?? 'latest',
    });
    const live = createLiveVenue({
      rest,
      stream,
      clock: this.clock,
      logger: silentLogger,
      bookPollMs: 1_000,
      tradesPollMs: 1_000,
      marketIds: options.marketIds ?? ['BTC-PERP', 'ETH-PERP'],
      resumeAfterSequence,
    });
    await live.start();
    const venue = new RecordingVenue(live.venue);
    const logger = new RecordingLogger();
    const kernel = Kernel.create({
      clock: this.clock,
      venue,
      marketData: live.marketData,
      journal,
      strategies: options.strategies ?? [],
      risk: parseRiskConfig({
        kill_switch: { file: null, signal: null },
        max_orders_per_second: 100,
        max_orders_per_minute: 10_000,
        ...options.risk,
      }),
      routeReady$: live.routeReadiness$,
      logger,
      execution: { callTimeoutMs: 600_000 },
      ...options.kernel,
    });
    const process: Process = { rest, stream, live, venue, journal, kernel, logger };
    this.processes.push(process);
    return process;
  }

  /** Moves virtual time in steps, yielding turns after each so I/O keeps up. */
  async advance(totalMs: number, stepMs = 50, turnsPerStep = 30): Promise<void> {
    for (let moved = 0; moved < totalMs; moved += stepMs) {
      this.clock.advanceBy(Math.min(stepMs, totalMs - moved));
      for (let index = 0; index < turnsPerStep; index += 1) await turn();
    }
  }

  /** Advances time in small steps until `predicate` holds (or `maxMs` of virtual time pass). */
  async advanceUntil(
    predicate: () => boolean,
    description: string,
    maxMs = 120_000,
    stepMs = 50,
  ): Promise<void> {
    for (let moved = 0; moved <= maxMs; moved += stepMs) {
      for (let index = 0; index < 30; index += 1) {
        if (predicate()) return;
        await turn();
      }
      this.clock.advanceBy(stepMs);
    }
    throw new Error(`gave up waiting for ${description} (${maxMs} ms of virtual time)`);
  }

  /** Every order of the account, straight from the engine (not through the code under test). */
  orders(): Order[] {
    const out: Order[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = this.emulator.exchange.listOrders(this.accountId, {
        limit: 200,
        ...(cursor === undefined ? {} : { cursor }),
      });
      out.push(...page.data);
      if (!page.page.has_more || page.page.next_cursor === null) return out;
      cursor = page.page.next_cursor;
    }
  }

  ordersWithRequestId(requestId: string): Order[] {
    return this.orders().filter((order) => order.request_id === requestId);
  }

  /** Every fill of the account, from the engine. */
  fills(): Fill[] {
    return this.emulator.exchange.listFills(this.accountId, { limit: 10_000 }).data;
  }

  /** A crash: the kernel stops without a word to the venue, the process's resources close. */
  async crash(process: Process): Promise<void> {
    process.kernel.dispose();
    await this.release(process);
  }

  /** A clean stop: the kernel's shutdown, then the process's resources. */
  async stop(process: Process, reason = 'test over') {
    const report = await process.kernel.stop(reason);
    await this.release(process);
    return report;
  }

  async close(): Promise<void> {
    for (const process of this.processes.splice(0)) {
      process.kernel.dispose();
      await this.release(process);
    }
    await this.emulator.close();
    rmSync(this.folder, { recursive: true, force: true });
  }

  private async release(process: Process): Promise<void> {
    const index = this.processes.indexOf(process);
    if (index >= 0) this.processes.splice(index, 1);
    await process.live.stop();
    await process.stream.close();
    await process.rest.close();
    if (process.journal.isOpen) process.journal.close();
  }
}

export type { LogLine };
