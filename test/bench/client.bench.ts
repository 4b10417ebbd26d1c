/**
 * Client speed against the emulator in this process, over loopback: requests per second and
 * p50/p99 latency of a public book read and of a signed order placement (checked, serialized,
 * hashed, signed, sent, answered and parsed), one at a time and with 16 in flight.
 */
import { performance } from 'node:perf_hooks';
import { Bench } from 'tinybench';
import { RestClient } from '../../src/client/index.ts';
import { defaultEmulatorConfig } from '../../src/emulator/config.ts';
import { startEmulator } from '../../src/emulator/start.ts';
import { printBench, printLatency } from './report.ts';

const CONCURRENCY = 16;
const CONCURRENT_RUN_MS = 2_000;

export default async function (): Promise<void> {
  const emulator = await startEmulator({
    seed: 1,
    config: { ...defaultEmulatorConfig(), starting_balance: '1000000000' },
    rateLimit: { quota: 100_000_000, windowMs: 60_000 },
    // The simulation moves prices; orders far below the market rest without filling.
    heartbeatIntervalMs: 10_000,
  });
  const credential = emulator.createKey();
  const client = new RestClient({ credential, connections: CONCURRENCY });
  await client.syncClock();

  let counter = 0;
  const placeOrder = () => {
    counter += 1;
    const id = `bench-${counter.toString(36).padStart(8, '0')}`;
    return client.placeOrder({
      request_id: id,
      client_order_id: id,
      market_id: 'BTC-PERP',
      side: 'buy',
      type: 'limit',
      quantity: '0.001',
      price: '30000',
      leverage: 50,
    });
  };
  const readBook = () => client.getBook({ market_id: 'BTC-PERP' }, { depth: 20 });

  try {
    const bench = new Bench({ name: 'client', time: 2_000, warmupTime: 300 });
    bench
      .add('public book read (GET /v1/markets/BTC-PERP/book)', async () => {
        await readBook();
      })
      .add('signed order placement (POST /v1/orders)', async () => {
        await placeOrder();
      });
    await bench.run();
    printBench(bench);

    for (const [name, call] of [
      ['public book read', readBook],
      ['signed order placement', placeOrder],
    ] as const) {
      const samples: number[] = [];
      const started = performance.now();
      const worker = async () => {
        while (performance.now() - started < CONCURRENT_RUN_MS) {
          const begin = performance.now();
          await call();
          samples.push(performance.now() - begin);
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      const seconds = (performance.now() - started) / 1_000;
      printLatency(`${name}, ${CONCURRENCY} in flight`, samples, {
        'requests/s': Math.round(samples.length / seconds).toLocaleString('en-US'),
      });
    }
  } finally {
    await client.close();
    await emulator.close();
  }
}
