/**
 * Emulator server throughput over loopback HTTP: signed order placements accepted per second
 * and public book reads per second. The emulator runs as users run it, `paperbot emulator` in
 * its own process on the system clock (so orders progress and rest in the book), with a
 * rate-limit quota high enough never to bind; this process signs and sends through an undici
 * Pool of keep-alive connections, several requests in flight, without pipelining (as the
 * client works) and with four requests pipelined per connection (fewer loopback wake-ups).
 * The emulator inherits the environment, so `PAPERBOT_EMULATOR_SIGNATURE_THREADS=0` compares
 * against verification on its main thread; `PAPERBOT_BENCH_EMULATOR_NODE_ARGS` passes flags to
 * its node (for example `--cpu-prof --cpu-prof-dir=/tmp/profiles`).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';
import { stringify } from 'yaml';
import { systemClock } from '../../src/core/clock.ts';
import { AdminClient, DEFAULT_EMULATOR_CONFIG_INPUT } from '../../src/emulator/index.ts';
import { Credential, encodeBase64, generateKeyPair, signRequest } from '../../src/signing/index.ts';
import { printLatency } from './report.ts';

const CONNECTIONS = 8;
const IN_FLIGHT = 32;
/** Requests sent on a connection before its first answer: 1 is how the client works. */
const PIPELINING = [1, 4];
const ORDERS = 20_000;
const BOOK_READS = 20_000;
const WARM_UP = 1_000;

async function run(
  total: number,
  task: (index: number) => Promise<void>,
): Promise<{ seconds: number; latencies: number[] }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    for (;;) {
      const index = next++;
      if (index >= total) return;
      const begin = performance.now();
      await task(index);
      latencies.push(performance.now() - begin);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return { seconds: (performance.now() - started) / 1000, latencies };
}

async function startEmulatorProcess(folder: string) {
  const configPath = join(folder, 'emulator.yaml');
  await writeFile(
    configPath,
    stringify({
      ...DEFAULT_EMULATOR_CONFIG_INPUT,
      starting_balance: '1000000000',
    }),
  );
  const child = spawn(
    process.execPath,
    [
      ...(process.env.PAPERBOT_BENCH_EMULATOR_NODE_ARGS ?? '').split(' ').filter(Boolean),
      'bin/paperbot.js',
      'emulator',
      '--port',
      '0',
      '--config',
      configPath,
      '--rate-limit-quota',
      '100000000',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout });
  let token = '';
  const baseUrl = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the emulator exited with ${code}`)));
    lines.on('line', (line) => {
      const tokenMatch = /admin token .*: (\S+)$/.exec(line);
      if (tokenMatch !== null) token = tokenMatch[1]!;
      const listening = /^paperbot emulator listening on (\S+)$/.exec(line);
      if (listening !== null) resolve(listening[1]!);
    });
  });
  const stopped = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    baseUrl,
    token,
    stop: async () => {
      child.kill('SIGTERM');
      await stopped;
    },
  };
}

export default async function benchmark(): Promise<void> {
  const folder = await mkdtemp(join(tmpdir(), 'paperbot-bench-emulator-'));
  const emulator = await startEmulatorProcess(folder);
  const pools = PIPELINING.map(
    (pipelining) => new Pool(emulator.baseUrl, { connections: CONNECTIONS, pipelining }),
  );
  try {
    // Registered like `paperbot keys create`: only the public key leaves this process.
    const { privateKey, publicKey } = generateKeyPair();
    const created = await new AdminClient({
      baseUrl: emulator.baseUrl,
      token: emulator.token,
    }).createKey({
      public_key: encodeBase64(publicKey),
    });
    const credential = Credential.create({
      keyId: created.key_id,
      accountId: created.account_id,
      apiBaseUrl: created.api_base_url,
      wsUrl: created.ws_url,
      scopes: ['orders:write'],
      createdAt: created.created_at,
      expiresAt: null,
      privateKey,
    });
    const signer = credential.createSigner();
    const prefix = Math.floor(systemClock.now() / 1000).toString(36);

    const place = (pool: Pool) => async (index: number) => {
      const body = Buffer.from(
        JSON.stringify({
          request_id: `bench-${prefix}-${index}`,
          client_order_id: `bench-${prefix}-${index}`,
          market_id: 'BTC-PERP',
          side: index % 2 === 0 ? 'buy' : 'sell',
          type: 'limit',
          quantity: '0.001',
          // Far from the market on either side, so orders rest rather than trade.
          price: index % 2 === 0 ? String(30_000 + (index % 500)) : String(98_000 + (index % 500)),
          leverage: 10,
        }),
      );
      const headers = signRequest({
        signer,
        keyId: credential.keyId,
        method: 'POST',
        target: '/v1/orders',
        body,
        timestampMs: systemClock.now(),
      });
      const response = await pool.request({
        method: 'POST',
        path: '/v1/orders',
        headers: { ...headers, 'content-type': 'application/json' },
        body,
      });
      const text = await response.body.text();
      if (response.statusCode !== 202) {
        throw new Error(`placement ${index}: ${response.statusCode} ${text}`);
      }
    };
    let offset = 0;
    for (const [position, pool] of pools.entries()) {
      const send = place(pool);
      await run(WARM_UP, (index) => send(offset + index));
      offset += WARM_UP;
      const start = offset;
      const orders = await run(ORDERS, (index) => send(start + index));
      offset += ORDERS;
      printLatency(
        `signed POST /v1/orders (202), pipelining ${PIPELINING[position]}`,
        orders.latencies,
        {
          'per second': Math.round(ORDERS / orders.seconds).toLocaleString('en-US'),
          connections: String(CONNECTIONS),
          'in flight': String(IN_FLIGHT),
        },
      );
    }

    for (const [position, pool] of pools.entries()) {
      const read = async () => {
        const response = await pool.request({
          method: 'GET',
          path: '/v1/markets/BTC-PERP/book?depth=20',
        });
        await response.body.text();
        if (response.statusCode !== 200) throw new Error(`book read: ${response.statusCode}`);
      };
      await run(WARM_UP, read);
      const books = await run(BOOK_READS, read);
      printLatency(
        `GET /v1/markets/{id}/book?depth=20, pipelining ${PIPELINING[position]}`,
        books.latencies,
        {
          'per second': Math.round(BOOK_READS / books.seconds).toLocaleString('en-US'),
          connections: String(CONNECTIONS),
          'in flight': String(IN_FLIGHT),
        },
      );
    }
  } finally {
    await Promise.all(pools.map((pool) => pool.close()));
    await emulator.stop();
    await rm(folder, { recursive: true, force: true });
  }
}
