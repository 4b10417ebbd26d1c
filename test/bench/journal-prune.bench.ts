/**
 * Pruning under load (`npm run bench -- journal-prune`): the journal's write path of a
 * placement (the intent with its command and first step, then its acceptance: what the executor
 * commits between a tick and the place) timed at a steady rate, first alone, then while the
 * retention runner archives a backlog of old settled intents (300,000 by default, `--backlog N`)
 * in its batches. Each write is timed from when it was due, so a stall of the event loop by a
 * retention step counts in full. The bound: pruning raises the write path's p99 by at most 2x
 * (docs/development/journal-benchmarks.md).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { systemClock } from '../../src/core/clock.ts';
import { prepareCommand } from '../../src/signing/index.ts';
import type { StampedIntent } from '../../src/runtime/intents.ts';
import { Journal } from '../../src/runtime/journal/journal.ts';
import { RetentionRunner } from '../../src/runtime/journal/retention-runner.ts';

function option(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? undefined : process.argv[index + 1];
}

const BACKLOG = Number(option('backlog') ?? 300_000);
const SECONDS = Number(option('seconds') ?? 10);
/** One placement every this many ms (50 a second: the soak's rate). */
const EVERY_MS = 20;
const HOUR = 3_600_000;

function backlog(path: string, count: number, at: number): void {
  const database = new Database(path);
  const insert = database.prepare(
    `INSERT INTO intents (request_id, strategy_id, sequence, kind, client_order_id, market_id,
       intent_json, emitted_at, state, order_id, outcome_json, created_at, updated_at)
     VALUES (?, 'old', ?, 'place', ?, 'BTC-PERP', '{"kind":"place"}', ?, 'accepted', ?,
       '{"status":"accepted"}', ?, ?)`,
  );
  database.transaction(() => {
    for (let sequence = 1; sequence <= count; sequence++) {
      const id = sequence.toString().padStart(10, '0');
      insert.run(`old-${id}`, sequence, `c-old-${id}`, at, `o-old-${id}`, at, at);
    }
  })();
  database.close();
}

let sequence = 0;
function placement(journal: Journal): void {
  sequence += 1;
  const requestId = `bench:e:${sequence}`;
  const stamped: StampedIntent = {
    strategyId: 'bench',
    sequence,
    requestId,
    clientOrderId: requestId,
    intent: {
      kind: 'place',
      marketId: 'BTC-PERP',
      side: 'buy',
      type: 'limit',
      quantity: '0.01',
      price: '42000',
    },
    emittedAt: systemClock.now(),
  };
  const command = prepareCommand({
    endpoint: 'placeOrder',
    body: {
      request_id: requestId,
      client_order_id: requestId,
      market_id: 'BTC-PERP',
      side: 'buy',
      type: 'limit',
      quantity: '0.01',
      price: '42000',
      leverage: 1,
    },
  });
  journal.recordIntent(stamped, { command, context: {}, step: 'sending' });
  journal.recordAccepted(requestId, `o-${sequence}`, { status: 'accepted' });
}

/**
 * Placements every EVERY_MS for `seconds`; each one's time from when it was due until written,
 * in ms. A placement that ends late moves the next one's due time (no backlog builds up), so a
 * sample is one stall plus one write.
 */
async function load(journal: Journal, seconds: number): Promise<number[]> {
  const latencies: number[] = [];
  const start = performance.now();
  let due = start;
  while (performance.now() - start < seconds * 1_000) {
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    placement(journal);
    const done = performance.now();
    latencies.push(done - due);
    due = Math.max(due + EVERY_MS, done);
  }
  return latencies;
}

const quantile = (values: readonly number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))] ??
  0;

export default async function journalPrune(): Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), 'paperbot-bench-prune-'));
  try {
    const path = join(folder, 'journal.sqlite');
    Journal.open(path, { now: () => systemClock.now() }).close();
    backlog(path, BACKLOG, systemClock.now() - 2 * HOUR);
    const journal = Journal.open(path, { now: () => systemClock.now() });
    try {
      const alone = await load(journal, SECONDS);
      const runner = new RetentionRunner({
        journal,
        clock: systemClock,
        policy: { windowMs: HOUR, mode: 'archive', archiveDir: `${path}.archive`, batchRows: 200 },
        intervalMs: HOUR,
        pauseMs: 20,
        liveOrderIds: () => new Set(),
      });
      const pass = runner.runPass();
      const pruning = await load(journal, SECONDS);
      const report = await pass;
      const row = (name: string, values: number[]) =>
        `| ${name} | ${values.length} | ${quantile(values, 0.5).toFixed(2)} | ${quantile(values, 0.99).toFixed(2)} | ${Math.max(...values).toFixed(1)} |`;
      process.stdout.write(
        `placements every ${EVERY_MS} ms for ${SECONDS} s each; backlog ${BACKLOG.toLocaleString('en')} old settled intents, archived in batches of 200 (${report.steps} steps, ${report.intents} intents moved)\n` +
          '| write path | placements | p50 ms | p99 ms | max ms |\n| --- | ---: | ---: | ---: | ---: |\n' +
          `${row('alone', alone)}\n${row('while pruning', pruning)}\n` +
          `p99 factor ${(quantile(pruning, 0.99) / Math.max(0.01, quantile(alone, 0.99))).toFixed(2)} (bound 2)\n`,
      );
    } finally {
      journal.close();
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
