/**
 * The kernel's pipeline speed.
 *
 * (a) Tick to place: from a ticker frame received by the stream client to the placement
 *     handed to the REST client, the gate, the journal writes and the simulation round trip
 *     included, against the emulator over loopback. The emulator's market steps every 10 ms;
 *     the strategy places a resting post-only bid on every 4th ticker. Two rows each:
 *     - `emulator own process` (THE HEADLINE): the emulator in a child process
 *       (emulator-process.ts), as the real service is another process or machine; the bot's
 *       event loop and heap are its own. CPU per placement is given for each process apart.
 *     - `emulator in process`: the emulator in this process, sharing the bot's event loop and
 *       heap (its request handling and its 10 ms market steps run between the bot's stages),
 *       as `paperbot run` with an embedded emulator does. Slower; kept for comparison.
 *     Run with the journal's `normal` durability (the aim's setting) and `full` (each commit
 *     synced).
 * (b) In-process cost per event of streams -> strategy -> gate, no venue I/O: tickers pushed
 *     through a Subject into the strategy host, and the intents they cause evaluated by the
 *     gate against the kernel's risk snapshot. Measured three ways: tickers a strategy only
 *     reads; one intent per ticker through host and gate (allowed, then answered at once in
 *     place of an executor); and the real kernel with trading halted, so each intent is
 *     stamped, its sequence journaled, denied and answered.
 *
 * Two rows before them give the floor under the simulation's round trip on the machine at hand:
 * a bare POST to another process at the same cadence, through undici and through a raw TCP
 * socket with no HTTP library at either end (`loopbackFloor`).
 *
 * `--tick-to-place` runs (a) alone (normal, then full; `--durability normal` or `full` for one
 * of them; `--emulator process` or `inline` for one row of each); `--breakdown` runs (a)
 * traced: each placement's stages from the WebSocket frame to the journaled outcome (wall and
 * this process's CPU per stage) and the journal statements and commits per phase, taken by
 * wrappers in this file only.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, get as httpGet, type Server } from 'node:http';
import { type AddressInfo, connect as connectTcp, type Socket } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { EMPTY, filter, map, mergeMap, type Observable, Subject } from 'rxjs';
import pino from 'pino';
import { Bench } from 'tinybench';
import { Pool } from 'undici';
import { createBotDashboard, DashboardSection } from '../../src/cli/dashboard/index.ts';
import { NotificationsSection } from '../../src/cli/notifications/config.ts';
import { Notifier } from '../../src/cli/notifications/notifier.ts';
import { z } from 'zod';
import { RestClient, StreamClient } from '../../src/client/index.ts';
import { systemClock, VirtualClock } from '../../src/core/clock.ts';
import { startEmulator } from '../../src/emulator/start.ts';
import type { Account, Fill, Order, Position } from '../../src/protocol/index.ts';
import { fromPino, type Logger, silentLogger } from '../../src/core/logger.ts';
import type { OrderIntent } from '../../src/runtime/intents.ts';
import { Journal } from '../../src/runtime/journal/journal.ts';
import { Kernel, RiskSnapshotBuilder } from '../../src/runtime/kernel/index.ts';
import { createLiveVenue } from '../../src/runtime/live/index.ts';
import { TickerArrivals, type MarketDataVenue } from '../../src/runtime/streams/market-data.ts';
import { parseRiskConfig, RiskGate } from '../../src/runtime/risk/index.ts';
import {
  defineStrategy,
  StrategyHost,
  type StrategyDefinition,
  type StrategyEnvironment,
  type Ticker,
} from '../../src/runtime/strategy/index.ts';
import { testMarket, testTicker } from '../../src/runtime/testing/fixtures.ts';
import type { ExecutionVenue } from '../../src/runtime/venue.ts';
import { account } from '../runtime/execution/fixtures.ts';
import { benchEmulatorOptions, startEmulatorProcess } from './emulator-process.ts';
import { printLatency } from './report.ts';

const quiet: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const PLACE_EVERY = 4;
const SAMPLES = 300;
const WARMUP_SAMPLES = 20;

const openRisk = parseRiskConfig({
  kill_switch: { file: null, signal: null },
  max_orders_per_second: null,
  max_orders_per_minute: null,
  max_open_orders: null,
  max_open_orders_per_market: null,
});

/** A venue that notes when each placement is handed over (performance.now). */
function timedVenue(
  inner: ExecutionVenue,
  sentAt: Map<string, number>,
  trace: PipelineTrace | null,
): ExecutionVenue {
  return new Proxy(inner, {
    get(target, property, receiver) {
      if (property === 'send') {
        const send: ExecutionVenue['send'] = (prepared, signal) => {
          if (prepared.endpoint === 'placeOrder') sentAt.set(prepared.requestId, performance.now());
          if (trace === null) return target.send(prepared, signal);
          trace.sendStarted(prepared.endpoint);
          return target.send(prepared, signal).finally(() => trace.sendEnded(prepared.endpoint));
        };
        return send;
      }
      if (property === 'prepare' && trace !== null) {
        const prepare: ExecutionVenue['prepare'] = (command) => {
          trace.mark(`prepare ${command.endpoint}`);
          const prepared = target.prepare(command);
          trace.mark(`prepared ${command.endpoint}`);
          return prepared;
        };
        return prepare;
      }
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

// The breakdown (`--breakdown`): marks taken by wrappers around the parts, in the bench only.

interface Mark {
  readonly wall: number;
  /** Process CPU (user + system), ms. */
  readonly cpu: number;
}

function markNow(): Mark {
  const usage = process.cpuUsage();
  return { wall: performance.now(), cpu: (usage.user + usage.system) / 1000 };
}

type Phase = 'before simulate' | 'before place' | 'after place';

/** Per placement: named marks and the journal's statements and commits in each phase. */
interface Trace {
  readonly marks: Map<string, Mark>;
  phase: Phase;
  readonly statements: Record<Phase, number>;
  readonly commits: Record<Phase, number>;
}

class PipelineTrace {
  private lastFrame: Mark | null = null;
  private readonly byTag = new Map<string, Trace>();
  private current: Trace | null = null;
  private sending: string | null = null;
  readonly finished: Trace[] = [];

  frameArrived(): void {
    this.lastFrame = markNow();
  }

  ticked(tag: string): void {
    const marks = new Map<string, Mark>();
    if (this.lastFrame !== null) marks.set('frame', this.lastFrame);
    marks.set('tick', markNow());
    const zero = { 'before simulate': 0, 'before place': 0, 'after place': 0 };
    this.byTag.set(tag, {
      marks,
      phase: 'before simulate',
      statements: { ...zero },
      commits: { ...zero },
    });
    if (this.byTag.size > 64) this.byTag.delete(this.byTag.keys().next().value as string);
  }

  decided(tag: string): void {
    const trace = this.byTag.get(tag);
    if (trace === undefined) return;
    this.byTag.delete(tag);
    trace.marks.set('intent', markNow());
    this.current = trace;
  }

  /** Notes `name` once per placement (the first time). */
  mark(name: string): void {
    const trace = this.current;
    if (trace !== null && !trace.marks.has(name)) trace.marks.set(name, markNow());
  }

  /** A mark taken only while the named endpoint's send is under way. */
  markInSend(name: string): void {
    if (this.sending !== null) this.mark(`${name} ${this.sending}`);
  }

  sendStarted(endpoint: string): void {
    const trace = this.current;
    if (trace === null) return;
    this.mark(`send ${endpoint}`);
    this.sending = endpoint;
    if (endpoint === 'simulateOrder') trace.phase = 'before place';
    if (endpoint === 'placeOrder') trace.phase = 'after place';
  }

  sendEnded(endpoint: string): void {
    this.mark(`sent ${endpoint}`);
    this.sending = null;
  }

  /** The placement's outcome is journaled: its trace is complete. */
  finish(): void {
    if (this.current !== null) this.finished.push(this.current);
    this.current = null;
  }

  statement(commit: boolean): void {
    const trace = this.current;
    if (trace === null) return;
    trace.statements[trace.phase] += 1;
    if (commit) trace.commits[trace.phase] += 1;
  }

  transaction(): void {
    const trace = this.current;
    if (trace !== null) trace.commits[trace.phase] += 1;
  }
}

/** Wraps the journal's public steps (marks) and its statements and transactions (counts). */
function traceJournal(journal: Journal, trace: PipelineTrace): void {
  const inner = journal as unknown as {
    database: { inTransaction: boolean };
    sql: Record<string, object>;
    runInTransaction: ((work: () => unknown) => unknown) & {
      immediate: (work: () => unknown) => unknown;
    };
  } & Record<string, unknown>;
  for (const name of [
    'noteSequence',
    'recordIntent',
    'recordCommand',
    'recordSimulation',
    'recordCommandWithStep',
    'recordSendAttempt',
    'recordAccepted',
  ]) {
    const method = inner[name] as ((...args: unknown[]) => unknown) | undefined;
    // A journal without the step (an older one, compared back to back) is left as it is.
    if (method === undefined) continue;
    inner[name] = (...args: unknown[]) => {
      trace.mark(`${name}`);
      const result = method.apply(journal, args);
      trace.mark(`${name} done`);
      if (name === 'recordAccepted') trace.finish();
      return result;
    };
  }
  for (const [key, statement] of Object.entries(inner.sql)) {
    inner.sql[key] = new Proxy(statement, {
      get(target, property) {
        const value = Reflect.get(target, property, target) as unknown;
        if (typeof value !== 'function') return value;
        if (property === 'run' || property === 'get' || property === 'all') {
          return (...args: unknown[]) => {
            // A write outside a transaction commits on its own (INSERT ... RETURNING included).
            const writes = !(target as { readonly: boolean }).readonly;
            trace.statement(writes && !inner.database.inTransaction);
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        return (value as (...a: unknown[]) => unknown).bind(target);
      },
    });
  }
  const run = inner.runInTransaction;
  inner.runInTransaction = Object.assign(
    (work: () => unknown) => {
      trace.transaction();
      return run(work);
    },
    {
      immediate: (work: () => unknown) => {
        trace.transaction();
        return run.immediate(work);
      },
    },
  );
}

/** Wraps the gate's evaluation and the kernel's snapshot for it (marks). */
function traceGate(kernel: Kernel, trace: PipelineTrace): void {
  const gate = kernel.gate as unknown as Record<string, (...args: unknown[]) => unknown>;
  const evaluate = gate.evaluate!.bind(gate);
  gate.evaluate = (...args: unknown[]) => {
    trace.mark('gate');
    const decision = evaluate(...args);
    trace.mark('gate done');
    return decision;
  };
  const snapshots = (kernel as unknown as { snapshots: Record<string, () => unknown> }).snapshots;
  const snapshot = snapshots.snapshot!.bind(snapshots);
  snapshots.snapshot = () => {
    trace.mark('snapshot');
    const taken = snapshot();
    trace.mark('snapshot done');
    return taken;
  };
}

/** Wraps the REST client's signer and connection pool: when signing and the HTTP exchange run. */
function traceRest(rest: RestClient, trace: PipelineTrace): void {
  const inner = rest as unknown as {
    signer: { sign: (message: Uint8Array) => Uint8Array };
    pool: { dispatch: (options: unknown, handler: Record<string, unknown>) => boolean };
  };
  const signer = inner.signer;
  const sign = signer.sign.bind(signer);
  signer.sign = (message) => {
    trace.markInSend('sign');
    const signature = sign(message);
    trace.markInSend('signed');
    return signature;
  };
  const pool = inner.pool;
  const dispatch = pool.dispatch.bind(pool);
  pool.dispatch = (options, handler) => {
    trace.markInSend('http');
    const onResponseStart = handler.onResponseStart as (...args: unknown[]) => void;
    handler.onResponseStart = (...args: unknown[]) => {
      trace.markInSend('headers');
      onResponseStart.apply(handler, args);
    };
    return dispatch(options, handler);
  };
}

const STAGES: readonly (readonly [string, string, string])[] = [
  ['stream: frame decode and fan-out', 'frame', 'tick'],
  ['strategy', 'tick', 'intent'],
  ['INTENT TO SIMULATE SENT (the bot, before the wire)', 'intent', 'send simulateOrder'],
  ['host, sequence note, gate (and prepare, when first)', 'intent', 'recordIntent'],
  ['  of which journal.noteSequence', 'noteSequence', 'noteSequence done'],
  ['  of which the risk snapshot', 'snapshot', 'snapshot done'],
  ['  of which gate.evaluate', 'gate', 'gate done'],
  ['  gate done to journal.recordIntent', 'gate done', 'recordIntent'],
  ['journal.recordIntent', 'recordIntent', 'recordIntent done'],
  ['wait: submit to lane task', 'recordIntent done', 'prepare placeOrder'],
  ['serialize + hash place', 'prepare placeOrder', 'prepared placeOrder'],
  ['journal.recordCommand', 'recordCommand', 'recordCommand done'],
  ['serialize + hash simulate', 'prepare simulateOrder', 'prepared simulateOrder'],
  ['journal.recordSimulation', 'recordSimulation', 'recordSimulation done'],
  ['journal.recordCommandWithStep', 'recordCommandWithStep', 'recordCommandWithStep done'],
  ['simulate: send to sign (limiter, timestamp)', 'send simulateOrder', 'sign simulateOrder'],
  ['simulate: sign', 'sign simulateOrder', 'signed simulateOrder'],
  ['simulate: HTTP to headers', 'http simulateOrder', 'headers simulateOrder'],
  ['simulate: body, parse, back to executor', 'headers simulateOrder', 'sent simulateOrder'],
  ['simulate: whole send', 'send simulateOrder', 'sent simulateOrder'],
  ['wait: simulate answer to send attempt', 'sent simulateOrder', 'recordSendAttempt'],
  ['journal.recordSendAttempt', 'recordSendAttempt', 'recordSendAttempt done'],
  ['wait: to place send', 'recordSendAttempt done', 'send placeOrder'],
  ['TICK TO PLACE SENT (the headline)', 'tick', 'send placeOrder'],
  ['frame to place sent', 'frame', 'send placeOrder'],
  ['place: sign', 'sign placeOrder', 'signed placeOrder'],
  ['place: HTTP to headers', 'http placeOrder', 'headers placeOrder'],
  ['place: whole send', 'send placeOrder', 'sent placeOrder'],
  ['FRAME TO PLACE ANSWERED', 'frame', 'sent placeOrder'],
  ['journal.recordAccepted', 'recordAccepted', 'recordAccepted done'],
];

function printBreakdown(title: string, traces: readonly Trace[]): void {
  const quantile = (values: number[], q: number) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  };
  const rows = STAGES.map(([stage, from, to]) => {
    const wall: number[] = [];
    const cpu: number[] = [];
    for (const trace of traces) {
      const start = trace.marks.get(from);
      const end = trace.marks.get(to);
      if (start === undefined || end === undefined) continue;
      wall.push((end.wall - start.wall) * 1000);
      cpu.push((end.cpu - start.cpu) * 1000);
    }
    return {
      stage,
      n: wall.length,
      'p50 wall (us)': quantile(wall, 0.5).toFixed(0),
      'p99 wall (us)': quantile(wall, 0.99).toFixed(0),
      'p50 CPU (us)': quantile(cpu, 0.5).toFixed(0),
      'p99 CPU (us)': quantile(cpu, 0.99).toFixed(0),
    };
  });
  console.log(`\nbreakdown: ${title} (${traces.length} placements)`);
  console.table(rows);
  const phases: Phase[] = ['before simulate', 'before place', 'after place'];
  console.table(
    phases.map((phase) => ({
      'journal, per placement': phase,
      'statements p50': quantile(
        traces.map((trace) => trace.statements[phase]),
        0.5,
      ),
      'commits p50 (each an fsync at full)': quantile(
        traces.map((trace) => trace.commits[phase]),
        0.5,
      ),
    })),
  );
}

function bidder(onIntent: (tag: string) => void = () => {}): StrategyDefinition<unknown> {
  return defineStrategy({
    name: 'bidder',
    description: 'a resting bid on every Nth ticker, tagged with the ticker time',
    params: z.strictObject({}),
    create: (context) => {
      let count = 0;
      return context.ticker$('BTC-PERP').pipe(
        mergeMap((ticker): OrderIntent[] => {
          count += 1;
          if (count % PLACE_EVERY !== 0 || ticker.mark_price === null) return [];
          const bid = Math.floor(Number(ticker.mark_price) * 0.98);
          onIntent(ticker.occurred_at);
          return [
            {
              kind: 'place',
              marketId: 'BTC-PERP',
              side: 'buy',
              type: 'limit',
              quantity: '0.001',
              price: String(bid),
              postOnly: true,
              tag: ticker.occurred_at,
            },
          ];
        }),
      );
    },
  }) as StrategyDefinition<unknown>;
}

async function listening(server: Server): Promise<number> {
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return (server.address() as AddressInfo).port;
}

/**
 * The operator's views as the bot attaches them: the dashboard (with a page reading its event
 * stream) and a webhook notifier posting to a receiver on loopback. Resolves to their teardown.
 */
async function attachOperatorViews(
  kernel: Kernel,
  stream: StreamClient,
  live: Awaited<ReturnType<typeof createLiveVenue>>,
): Promise<() => void> {
  const logger = pino({ level: 'silent' });
  const dashboard = createBotDashboard({
    clock: systemClock,
    logger,
    section: DashboardSection.parse({ update_ms: 200 }),
    killFile: null,
    strategies: [{ id: 'bidder', name: 'bidder', params: {} }],
    status: () => ({
      ...kernel.status(),
      bot: {
        pid: process.pid,
        startedAt: null,
        journal: 'bench',
        venue: { baseUrl: '', embedded: true, accountId: '' },
      },
      pnl: { session: null, unrealized: null },
    }),
    kernel: () => kernel,
  });
  dashboard.attach(kernel, stream, live);
  const server = createServer((request, response) => {
    void dashboard.server.handle(request, response);
  });
  const page = httpGet(`http://127.0.0.1:${await listening(server)}/dashboard/events`, (answer) =>
    answer.resume(),
  );
  const receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.end('ok'));
  });
  const url = `http://127.0.0.1:${await listening(receiver)}/hook`;
  const notifier = new Notifier({
    section: NotificationsSection.parse({ webhooks: [{ url }], batch_ms: 200 }),
    clock: systemClock,
    logger: fromPino(logger),
  });
  notifier.attach(kernel, stream.state$);
  return () => {
    page.destroy();
    notifier.close();
    dashboard.close();
    server.close();
    receiver.close();
  };
}

/** Where the emulator runs: its own process (as the real service, the headline) or this one. */
type EmulatorPlace = 'own process' | 'in process';

async function tickToPlace(
  durability: 'full' | 'normal',
  where: EmulatorPlace,
  operatorViews = false,
  breakdown = false,
): Promise<void> {
  const trace = breakdown ? new PipelineTrace() : null;
  const folder = mkdtempSync(join(tmpdir(), 'paperbot-bench-'));
  const emulator =
    where === 'own process'
      ? await startEmulatorProcess(folder)
      : await startEmulator(benchEmulatorOptions());
  const credential = 'credential' in emulator ? emulator.credential : emulator.createKey();
  const emulatorCpuMs = async () => ('cpuMs' in emulator ? emulator.cpuMs() : 0);
  const rest = new RestClient({ credential });
  const stream = new StreamClient({ rest });
  const tickAt = new Map<string, number>();
  // Subscribed first, so this is the first observer each frame reaches.
  const ticks = stream.ticker$('BTC-PERP').subscribe((frame) => {
    tickAt.set(frame.occurred_at, performance.now());
    trace?.ticked(frame.occurred_at);
  });
  const live = createLiveVenue({
    rest,
    stream,
    clock: systemClock,
    logger: quiet,
    marketIds: ['BTC-PERP'],
  });
  await live.start();
  const journal = Journal.open(join(folder, 'journal.sqlite'), {
    now: () => systemClock.now(),
    durability,
  });
  if (trace !== null) {
    traceJournal(journal, trace);
    traceRest(rest, trace);
    const socket = (
      stream as unknown as { socket: { prependListener: (e: string, f: () => void) => void } }
    ).socket;
    socket.prependListener('message', () => trace.frameArrived());
  }
  const sentAt = new Map<string, number>();
  const kernel = Kernel.create({
    clock: systemClock,
    venue: timedVenue(live.venue, sentAt, trace),
    marketData: live.marketData,
    journal,
    strategies: [
      {
        id: 'bidder',
        definition: bidder((tag) => trace?.decided(tag)),
        params: {},
      },
    ],
    risk: openRisk,
    routeReady$: live.routeReady$,
    logger: silentLogger,
  });
  if (trace !== null) traceGate(kernel, trace);
  const samples: number[] = [];
  const kernelSamples: number[] = [];
  let failures = 0;
  // CPU over the measured placements: this process's (the bot, and the emulator when it runs
  // here) and the emulator process's, when it has its own.
  let cpuFrom = process.cpuUsage();
  let cpuUsed = { user: 0, system: 0 };
  let emulatorCpuFrom: Promise<number> = Promise.resolve(0);
  let emulatorCpuTo: Promise<number> = Promise.resolve(0);
  const done = new Promise<void>((resolve) => {
    kernel.intentLatency$.subscribe((latency) => {
      if (latency.tickToPlaceMs !== null) kernelSamples.push(latency.tickToPlaceMs);
    });
    kernel.outcomes$.subscribe((outcome) => {
      if (outcome.status !== 'accepted') {
        if (outcome.status !== 'filled') failures += 1;
        return;
      }
      const intent = outcome.intent.intent;
      const tick = intent.kind === 'place' && intent.tag ? tickAt.get(intent.tag) : undefined;
      const sent = sentAt.get(outcome.intent.requestId);
      if (tick !== undefined && sent !== undefined) samples.push(sent - tick);
      if (samples.length === WARMUP_SAMPLES) {
        cpuFrom = process.cpuUsage();
        emulatorCpuFrom = emulatorCpuMs();
      }
      if (samples.length === SAMPLES + WARMUP_SAMPLES) {
        cpuUsed = process.cpuUsage(cpuFrom);
        emulatorCpuTo = emulatorCpuMs();
        resolve();
      }
    });
  });
  const detach = operatorViews ? await attachOperatorViews(kernel, stream, live) : () => {};
  await kernel.start();
  await done;
  const emulatorCpu = (await emulatorCpuTo) - (await emulatorCpuFrom);
  await kernel.stop('bench over');
  detach();
  ticks.unsubscribe();
  await live.stop();
  await stream.close();
  await rest.close();
  journal.close();
  await emulator.close();
  rmSync(folder, { recursive: true, force: true });
  const views = operatorViews ? ', dashboard and webhooks attached' : '';
  const name = `tick to place, emulator ${where}, journal ${durability}${views}${breakdown ? ', traced' : ''}`;
  const cpuMs = (cpuUsed.user + cpuUsed.system) / 1000;
  if (trace !== null) printBreakdown(name, trace.finished.slice(WARMUP_SAMPLES));
  printLatency(name, samples.slice(WARMUP_SAMPLES), {
    'kernel p50 (ms, clock)': String(
      [...kernelSamples].sort((a, b) => a - b)[Math.floor(kernelSamples.length / 2)] ?? '',
    ),
    'not accepted': String(failures),
    'CPU/placement, this process (ms)': (cpuMs / SAMPLES).toFixed(3),
    'CPU/placement, emulator process (ms)':
      where === 'own process' ? (emulatorCpu / SAMPLES).toFixed(3) : '-',
    'load avg': loadavg()[0]!.toFixed(1),
  });
}

/**
 * The floor under the simulation's round trip on this machine, at the placements' cadence (one
 * every 40 ms, so both ends are as cold as on the pipeline's path), in two rows:
 * - a bare POST (about the size of a simulation, no signing) through an undici Pool, as the REST
 *   client sends, to a node:http server in the emulator's process that answers at once;
 * - the same bytes written on a raw TCP socket to a TCP server in that process that writes a
 *   whole HTTP response back at once: no HTTP library at either end, the machine's own floor.
 */
async function loopbackFloor(): Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), 'paperbot-bench-'));
  const emulator = await startEmulatorProcess(folder);
  const body = JSON.stringify({ request_id: 'r'.repeat(40), padding: 'x'.repeat(200) });
  const pool = new Pool(emulator.floorUrl, { connections: 16 });
  await timeFloor(
    'loopback floor: bare POST round trip to another process, every 40 ms',
    async () => {
      const answer = await pool.request({
        path: '/floor',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      await answer.body.text();
    },
  );
  await pool.close();
  const socket = await new Promise<Socket>((done, fail) => {
    const opened = connectTcp(emulator.tcpFloorPort, '127.0.0.1', () => done(opened));
    opened.once('error', fail);
  });
  socket.setNoDelay(true);
  const request =
    `POST /floor HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  await timeFloor('TCP floor: the same bytes on a raw socket, no HTTP library, every 40 ms', () =>
    rawExchange(socket, request),
  );
  socket.destroy();
  await emulator.close();
  rmSync(folder, { recursive: true, force: true });
}

/** Writes a request and resolves once the whole answer (headers and content-length) is in. */
function rawExchange(socket: Socket, request: string): Promise<void> {
  return new Promise((done, fail) => {
    let received = '';
    const onData = (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const headerEnd = received.indexOf('\r\n\r\n');
      if (headerEnd === -1) return;
      const length = /content-length: *(\d+)/i.exec(received.slice(0, headerEnd));
      if (length === null) {
        finish(new Error('TCP floor: answer without content-length'));
      } else if (received.length >= headerEnd + 4 + Number(length[1])) {
        finish(undefined);
      }
    };
    const onClose = () => finish(new Error('TCP floor: socket closed'));
    const finish = (error: Error | undefined) => {
      socket.off('data', onData);
      socket.off('close', onClose);
      if (error === undefined) done();
      else fail(error);
    };
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.write(request);
  });
}

/** Times `exchange` once every 40 ms: wall time per exchange and this process's CPU. */
async function timeFloor(name: string, exchange: () => Promise<void>): Promise<void> {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let index = 0; index < SAMPLES + WARMUP_SAMPLES; index++) {
    await new Promise((done) => setTimeout(done, PLACE_EVERY * 10));
    const cpuFrom = process.cpuUsage();
    const from = performance.now();
    await exchange();
    const used = process.cpuUsage(cpuFrom);
    if (index < WARMUP_SAMPLES) continue;
    wall.push(performance.now() - from);
    cpu.push((used.user + used.system) / 1000);
  }
  const sorted = cpu.sort((a, b) => a - b);
  printLatency(name, wall, {
    'CPU/request p50, this process (ms)': (sorted[Math.floor(sorted.length / 2)] ?? 0).toFixed(3),
    'load avg': loadavg()[0]!.toFixed(1),
  });
}

// (b): in-process, no venue I/O

const BATCH = 1_000;

class SubjectMarketData implements MarketDataVenue {
  readonly ticker = new Subject<Ticker>();
  private readonly list = [testMarket({ market_id: 'BTC-PERP' })];

  private readonly arrivals = new TickerArrivals(() => this.ticker$());

  tickerArrivals$(marketId: string): Observable<string> {
    return this.arrivals.arrivals$(marketId);
  }

  latestTicker(marketId: string): Ticker | undefined {
    return this.arrivals.latestTicker(marketId);
  }

  markets() {
    return this.list;
  }

  ticker$(): Observable<Ticker> {
    return this.ticker;
  }

  book$(): Observable<never> {
    return EMPTY;
  }

  trades$(): Observable<never> {
    return EMPTY;
  }
}

function environmentOf(clock: VirtualClock, marketData: SubjectMarketData): StrategyEnvironment {
  return {
    clock,
    logger: quiet,
    markets: () => marketData.markets(),
    ticker$: () => marketData.ticker$(),
    book$: () => EMPTY,
    trades$: () => EMPTY,
    orders$: new Subject<Order>(),
    fills$: new Subject<Fill>(),
    positions$: new Subject<Position>(),
    account$: new Subject<Account>(),
  };
}

function readerOnly(): StrategyDefinition<unknown> {
  return defineStrategy({
    name: 'reader',
    description: 'reads tickers, emits nothing',
    params: z.strictObject({}),
    create: (context) =>
      context.ticker$('BTC-PERP').pipe(
        filter((ticker) => ticker.mark_price === 'never'),
        map(() => ({ kind: 'cancel_all' }) as OrderIntent),
      ),
  }) as StrategyDefinition<unknown>;
}

function eachTick(): StrategyDefinition<unknown> {
  return defineStrategy({
    name: 'each-tick',
    description: 'one resting bid per ticker',
    params: z.strictObject({}),
    create: (context) =>
      context.ticker$('BTC-PERP').pipe(
        map((ticker): OrderIntent => ({
          kind: 'place',
          marketId: 'BTC-PERP',
          side: 'buy',
          type: 'limit',
          quantity: '0.010',
          price: String(Math.floor(Number(ticker.mark_price) * 0.99)),
        })),
      ),
  }) as StrategyDefinition<unknown>;
}

const marks = Array.from({ length: BATCH }, (_, index) => String(60_000 + (index % 50)));

function hostAndGate(definition: StrategyDefinition<unknown>) {
  const clock = new VirtualClock(Date.UTC(2026, 0, 5));
  const marketData = new SubjectMarketData();
  const host = new StrategyHost({ environment: environmentOf(clock, marketData), epoch: 'bench' });
  const gate = new RiskGate({
    config: parseRiskConfig({ kill_switch: { file: null, signal: null } }),
    clock,
  });
  const snapshots = new RiskSnapshotBuilder({
    markets: () => marketData.markets(),
    positions: () => [],
    openOrders: () => [],
  });
  snapshots.setPermitted(true);
  let allowed = 0;
  let denied = 0;
  marketData.ticker.subscribe((ticker) => snapshots.onTicker(ticker));
  host.intents$.subscribe((stamped) => {
    const decision = gate.evaluate(stamped, snapshots.snapshot());
    if (decision.allowed) {
      allowed += 1;
      // No executor here: answer at once, so the strategy's own-order book does not grow.
      host.deliverOutcome({ status: 'rejected', intent: stamped, code: 'BENCH', message: 'kept' });
    } else {
      denied += 1;
      host.deliverOutcome({ status: 'denied', intent: stamped, denials: decision.denials });
    }
  });
  host.add({ strategyId: 's', definition });
  host.start();
  return {
    push(): void {
      for (const mark of marks) {
        // 600 ms apart: 100 orders a minute stay under the default rate limits (5/s, 120/min).
        clock.advanceBy(600);
        marketData.ticker.next(
          testTicker({ market_id: 'BTC-PERP', mark_price: mark }, clock.now()),
        );
      }
    },
    counts: () => ({ allowed, denied }),
  };
}

async function haltedKernel() {
  const folder = mkdtempSync(join(tmpdir(), 'paperbot-bench-'));
  const clock = new VirtualClock(Date.UTC(2026, 0, 5));
  const marketData = new SubjectMarketData();
  const journal = Journal.open(join(folder, 'journal.sqlite'), {
    now: () => clock.now(),
    durability: 'normal',
  });
  const never = new Subject<never>();
  const venue = {
    privateStream: { items$: never },
    riskEvents$: never,
    resync$: never,
    listOpenOrders: async () => [],
    listPositions: async () => [],
    getAccount: async () => account(),
  } as unknown as ExecutionVenue;
  const kernel = Kernel.create({
    clock,
    venue,
    marketData,
    journal,
    strategies: [{ id: 's', definition: eachTick(), params: {} }],
    risk: parseRiskConfig({ kill_switch: { file: null, signal: null } }),
    deadman: false,
    logger: silentLogger,
  });
  let denied = 0;
  kernel.outcomes$.subscribe(() => {
    denied += 1;
  });
  await kernel.start();
  kernel.halt('bench: every intent is denied, nothing reaches the executor');
  return {
    push(): void {
      for (const mark of marks) {
        clock.advanceBy(600);
        marketData.ticker.next(
          testTicker({ market_id: 'BTC-PERP', mark_price: mark }, clock.now()),
        );
      }
    },
    denied: () => denied,
    close: () => {
      kernel.dispose();
      journal.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

async function inProcess(): Promise<void> {
  const reader = hostAndGate(readerOnly());
  const gated = hostAndGate(eachTick());
  const kernel = await haltedKernel();
  const bench = new Bench({ name: 'pipeline in process', time: 2_000, warmupTime: 300 });
  bench
    .add(`${BATCH} tickers -> strategy (no intent)`, () => reader.push())
    .add(`${BATCH} tickers -> strategy -> intent -> gate (allowed) -> outcome`, () => gated.push())
    .add(`${BATCH} tickers -> kernel (halted: journaled sequence, denied, answered)`, () =>
      kernel.push(),
    );
  await bench.run();
  const rows = bench.tasks.map((task) => {
    const result = task.result;
    if (!result || result.state !== 'completed') return { task: task.name, 'events/s': 'failed' };
    const perEventNs = (result.latency.mean * 1e6) / BATCH;
    return {
      task: task.name,
      'events/s': Math.round(1e9 / perEventNs).toLocaleString('en-US'),
      'ns/event': perEventNs.toFixed(0),
      'p99 batch (ms)': result.latency.p99.toFixed(3),
    };
  });
  console.table(rows);
  const counts = gated.counts();
  if (counts.denied > 0 || counts.allowed === 0) {
    console.log(`note: gate allowed ${counts.allowed}, denied ${counts.denied}`);
  }
  if (kernel.denied() === 0) console.log('note: the halted kernel denied nothing');
  kernel.close();
}

function option(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
}

export default async function (): Promise<void> {
  // `--durability normal` (or `full`) runs only that one of the two; `--emulator process` (or
  // `inline`) only that row of each.
  const durabilities = (['normal', 'full'] as const).filter(
    (durability) => option('--durability') === undefined || durability === option('--durability'),
  );
  const places = (['own process', 'in process'] as const).filter(
    (where) =>
      option('--emulator') === undefined ||
      (option('--emulator') === 'process') === (where === 'own process'),
  );
  if (process.argv.includes('--breakdown')) {
    for (const durability of durabilities) {
      for (const where of places) await tickToPlace(durability, where, false, true);
    }
    return;
  }
  if (process.argv.includes('--tick-to-place')) {
    if (option('--emulator') !== 'inline') await loopbackFloor();
    for (const durability of durabilities) {
      for (const where of places) await tickToPlace(durability, where);
    }
    return;
  }
  await loopbackFloor();
  for (const where of places) await tickToPlace('full', where);
  for (const where of places) await tickToPlace('normal', where);
  await tickToPlace('normal', 'own process', true);
  await inProcess();
}
