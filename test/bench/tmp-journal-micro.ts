import { Journal } from '../../src/runtime/journal/journal.ts';
import { limitBuy, placeCommand, stamp, tempJournalPath } from '../runtime/execution/fixtures.ts';
const temp = tempJournalPath();
const journal = Journal.open(temp.path, { now: () => Date.now(), durability: 'normal' });
const sqlT: number[] = []; let last = 0;
const sql = (journal as unknown as { sql: Record<string, { run: (...a: unknown[]) => unknown }> }).sql;
const st = sql.insertIntentWithCommand!; const run = st.run.bind(st);
sql.insertIntentWithCommand = { run: (...a: unknown[]) => { const t = performance.now(); const r = run(...a); last = (performance.now() - t) * 1000; return r; } };
const gap = Number(process.argv[2] ?? 0);
const times: number[] = [], cpus: number[] = [];
let junk: unknown[] = [];
for (let i = 1; i <= 400; i++) {
  if (gap > 0) {
    await new Promise((r) => setTimeout(r, gap));
    if (process.argv[3] !== "nojunk") junk = Array.from({ length: 2000 }, (_, k) => ({ k, s: String(k) })); // churn between
  }
  const intent = stamp(limitBuy(), i);
  const command = placeCommand(intent.requestId);
  const c = process.cpuUsage(); const t = performance.now();
  journal.recordIntent(intent, { command, context: { a: 1 }, step: { simulateRequestId: `${intent.requestId}-s1`, attempt: 1 } });
  const dt = performance.now() - t; const dc = process.cpuUsage(c);
  if (i > 50) { const g = globalThis as any; (g.A ??= []).push([g.T1*1000, g.T2*1000, g.T3*1000]); sqlT.push(last); times.push(dt * 1000); cpus.push(dc.user + dc.system); }
}
const q = (a: number[], p: number) => [...a].sort((x, y) => x - y)[Math.floor(p * a.length)]!.toFixed(0);
console.log(`sql p50 ${q(sqlT, 0.5)} gap ${gap}ms recordIntent wall p50 ${q(times, 0.5)} p99 ${q(times, 0.99)} cpu p50 ${q(cpus, 0.5)} us`, junk.length);
const A = (globalThis as any).A as number[][]; for (const k of [0,1,2]) console.log('T'+(k+1), q(A.map((a) => a[k]!), 0.5));
journal.close(); temp.cleanup();
