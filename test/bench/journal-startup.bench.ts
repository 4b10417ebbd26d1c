/**
 * Start-up against a month of history (`npm run bench -- journal-startup`, run only when named):
 * the real bot (`paperbot run`, its own process, the embedded emulator) started on an empty
 * journal and on one holding 10,000,000 settled intents (with 1,000,000 fills and order events),
 * three times each; the time from spawn to the kernel's "kernel started" line and the bot's RSS
 * then. Start-up reads indexed, bounded sets only, so the two must be within 1.2x.
 *
 * The big journal is synthetic and deterministic (request ids, order ids and times from the
 * sequence), written by batched inserts in one transaction onto the journal's own schema, and
 * kept in the temporary folder between runs (`--rebuild` writes it again); each start adds a
 * few rows to it (the dead-man's commands). `--intents N`
 * changes its size. The bot's retention is set to an hour's interval, so no pass runs while
 * it is measured.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { stringify as stringifyYaml } from 'yaml';
import { Journal } from '../../src/runtime/journal/journal.ts';

const root = resolve(import.meta.dirname, '../..');

function option(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? undefined : process.argv[index + 1];
}

const INTENTS = Number(option('intents') ?? 10_000_000);
const RUNS = Number(option('runs') ?? 3);
const START = 1_700_000_000_000;
const ROWS_PER_INSERT = 100;

/** Writes the synthetic journal (settled placements, a fill and an event every tenth). */
function buildJournal(path: string, intents: number): void {
  rmSync(path, { force: true });
  rmSync(`${path}-wal`, { force: true });
  Journal.open(path, { now: () => START, epoch: 'benchepoch' }).close();
  const database = new Database(path);
  database.pragma('synchronous = OFF');
  const columns = `(request_id, strategy_id, sequence, kind, client_order_id, market_id,
    intent_json, emitted_at, state, order_id, outcome_json, created_at, updated_at)`;
  const rowSql = `(?, 'mm-btc', ?, 'place', ?, 'BTC-PERP', ?, ?, 'accepted', ?, '{"status":"accepted"}', ?, ?)`;
  const insertMany = database.prepare(
    `INSERT INTO intents ${columns} VALUES ${Array(ROWS_PER_INSERT).fill(rowSql).join(', ')}`,
  );
  const fill = database.prepare(
    `INSERT INTO seen_fills (fill_id, order_id, seen_at, sequence, source, fill_json)
       VALUES (?, ?, ?, ?, 'stream', ?)`,
  );
  const event = database.prepare(
    `INSERT INTO order_events (sequence, event_id, order_id, from_state, to_state, occurred_at,
       applied_at) VALUES (?, ?, ?, 'OPEN', 'FILLED', '2023-11-14T22:13:20.000Z', ?)`,
  );
  const intentJson = JSON.stringify({
    kind: 'place',
    marketId: 'BTC-PERP',
    side: 'buy',
    type: 'limit',
    quantity: '0.002',
    price: '42000',
  });
  const started = performance.now();
  database.transaction(() => {
    const values: unknown[] = [];
    let privateSequence = 0;
    for (let sequence = 1; sequence <= intents; sequence++) {
      const id = sequence.toString().padStart(10, '0');
      const at = START + sequence * 100;
      values.push(`bench-${id}`, sequence, `c-${id}`, intentJson, at, `o-${id}`, at, at);
      if (values.length === ROWS_PER_INSERT * 8) {
        insertMany.run(values);
        values.length = 0;
      }
      if (sequence % 10 === 0) {
        privateSequence += 1;
        event.run(privateSequence, `e-${id}`, `o-${id}`, at);
        privateSequence += 1;
        fill.run(`f-${id}`, `o-${id}`, at, privateSequence, `{"fill_id":"f-${id}"}`);
      }
    }
    if (values.length > 0) throw new Error('intents must be a multiple of 100');
    database
      .prepare(
        `INSERT INTO private_cursor (id, last_sequence, last_event_at, updated_at)
           VALUES (1, ?, '2023-11-14T22:13:20.000Z', ?)`,
      )
      .run(privateSequence, START);
  })();
  database.pragma('wal_checkpoint(TRUNCATE)');
  database.close();
  process.stdout.write(
    `built ${INTENTS.toLocaleString('en')} intents in ${((performance.now() - started) / 1000).toFixed(0)} s: ${(statSync(path).size / 1e9).toFixed(2)} GB\n`,
  );
}

/** Spawns the bot on `journal`; resolves with ms from spawn to "kernel started" and RSS (MB). */
async function startOnce(folder: string, journal: string): Promise<{ ms: number; rssMb: number }> {
  const config = join(folder, 'bot.yaml');
  writeFileSync(
    config,
    stringifyYaml({
      venue: { emulator: { data_dir: null } },
      strategies_dir: join(root, 'strategies'),
      strategies: [{ id: 'mm-btc', name: 'market-maker', params: { markets: ['BTC-PERP'] } }],
      risk: { kill_switch: { file: null, signal: null } },
      journal: { path: journal, retention: { interval: '1h' } },
      metrics: { enabled: false },
      logging: { level: 'info', format: 'json' },
    }),
  );
  const spawnedAt = performance.now();
  const child = spawn(
    process.execPath,
    [join(root, 'bin/paperbot.js'), 'run', '--config', config],
    {
      cwd: folder,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  try {
    const ms = await new Promise<number>((resolveStart, reject) => {
      const timer = setTimeout(() => reject(new Error(`no start in 120 s: ${errors}`)), 120_000);
      child.once('exit', (code) => reject(new Error(`the bot exited (${code}): ${errors}`)));
      createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
        if (line.includes('"kernel started"')) {
          clearTimeout(timer);
          resolveStart(performance.now() - spawnedAt);
        }
      });
    });
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    return { ms, rssMb: rssKb / 1024 };
  } finally {
    await stop(child);
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}

const median = (values: readonly number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

export default async function journalStartup(): Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), 'paperbot-bench-startup-'));
  const cached = join(tmpdir(), `paperbot-bench-journal-${INTENTS}.sqlite`);
  try {
    if (!existsSync(cached) || process.argv.includes('--rebuild')) buildJournal(cached, INTENTS);
    const results: Record<'empty' | 'big', { ms: number; rssMb: number }[]> = {
      empty: [],
      big: [],
    };
    for (let run = 0; run < RUNS; run++) {
      // Alternating, so a busy spell of the shared machine hits both alike.
      const empty = join(folder, `empty-${run}.sqlite`);
      results.empty.push(await startOnce(folder, empty));
      // The cached file itself: a start adds a few rows (the dead-man's commands), no more.
      results.big.push(await startOnce(folder, cached));
    }
    const empty = median(results.empty.map((result) => result.ms));
    const big = median(results.big.map((result) => result.ms));
    process.stdout.write(
      `| journal | start-up to "kernel started" (median of ${RUNS}) | RSS then |\n| --- | ---: | ---: |\n` +
        `| empty | ${empty.toFixed(0)} ms | ${median(results.empty.map((r) => r.rssMb)).toFixed(0)} MB |\n` +
        `| ${INTENTS.toLocaleString('en')} settled intents | ${big.toFixed(0)} ms | ${median(results.big.map((r) => r.rssMb)).toFixed(0)} MB |\n` +
        `ratio ${(big / empty).toFixed(2)} (bound 1.2); every run: empty ${results.empty.map((r) => r.ms.toFixed(0)).join(', ')} ms; big ${results.big.map((r) => r.ms.toFixed(0)).join(', ')} ms\n`,
    );
    if (big > empty * 1.2) process.exitCode = 1;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
