/**
 * Emulator server throughput over loopback HTTP: signed order placements accepted per second
 * and public book reads per second. The emulator runs as users run it, `paperbot emulator` in
 * its own process on the system clock (so orders progress and rest in the book), with a
 * rate-limit quota high enough never to bind. This process sends over keep-alive connections
 * in three ways: through an undici Pool, several requests in flight and none pipelined, as
 * paperbot's client works; and through a lean load generator on raw sockets (load-generator.ts,
 * in the manner of wrk), one request at a time per connection and four pipelined. The load
 * generator shares the two cores with the server, so the lean one leaves the server more of
 * the machine: its rows are the server's capacity, the Pool's row what one client process
 * reaches.
 *
 * What is measured is the server's capacity, so the client's signing is not charged to it:
 * requests are signed ahead, a chunk at a time, and only the sending of each chunk is timed.
 * Every request still carries its own fresh nonce, a timestamp well inside the server's 10 s
 * window (a chunk is sent within a few seconds of being signed) and a signature that the
 * server verifies in full. Beside requests per second, the table gives the emulator process's
 * CPU time per request (user plus system time of all its threads, from /proc, over the timed
 * sends only), which stays meaningful when other work shares the machine, and this process's
 * own CPU time per request.
 *
 * A last section sends signed simulations and placements one at a time, as the bot's executor
 * does, to a second emulator that checks signatures on its main thread (as one in the bot's
 * process does), and gives the server's CPU per request; `--one-at-a-time` runs it alone.
 *
 * The emulator inherits the environment, so `PAPERBOT_EMULATOR_SIGNATURE_THREADS=0` compares
 * against verification on its main thread; `PAPERBOT_BENCH_EMULATOR_NODE_ARGS` passes flags to
 * its node (for example `--cpu-prof --cpu-prof-dir=/tmp/profiles`).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';
import { stringify } from 'yaml';
import { systemClock } from '../../src/core/clock.ts';
import { AdminClient, DEFAULT_EMULATOR_CONFIG_INPUT } from '../../src/emulator/index.ts';
import {
  Credential,
  encodeBase64,
  generateKeyPair,
  type SignedRequestHeaders,
  signRequest,
} from '../../src/signing/index.ts';
import { sendAll, serializeRequest } from './load-generator.ts';
import { printLatency } from './report.ts';

const CONNECTIONS = 8;
/** Requests in flight at once over the undici Pool. */
const IN_FLIGHT = 32;
const ORDERS = 20_000;
const BOOK_READS = 20_000;
const WARM_UP = 1_000;
/** Keys (each with its own account) taking turns; see where they are created. */
const KEYS = 4;
/** Requests signed ahead and then sent: well within the 10 s window at a thousand a second. */
const CHUNK = 4_000;
/** Linux reports process times in clock ticks; 100 per second on every common configuration. */
const CLOCK_TICKS_PER_SECOND = 100;

/** User plus system CPU time of a process (all its threads) in ms, or null off Linux. */
function processCpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

interface SignedOrder {
  readonly index: number;
  readonly body: Buffer;
  readonly headers: SignedRequestHeaders & { readonly 'content-type': string };
}

/**
 * How requests reach the server: undici's Pool, as paperbot's client sends them (several in
 * flight, one at a time per connection), or the lean load generator (load-generator.ts), with
 * 1 or 4 requests pipelined per connection, which leaves more of the machine to the server.
 */
interface Sender {
  readonly name: string;
  readonly connections: number;
  readonly inFlight: number;
  /** Sends every request and resolves when all are answered; throws on an unexpected status. */
  send(
    requests: readonly {
      method: string;
      path: string;
      headers: Record<string, string>;
      body: Buffer | null;
    }[],
    expectedStatus: number,
  ): Promise<{ seconds: number; latencies: number[] }>;
}

function poolSender(baseUrl: string): Sender & { close(): Promise<void> } {
  const pool = new Pool(baseUrl, { connections: CONNECTIONS, pipelining: 1 });
  return {
    name: 'undici Pool',
    connections: CONNECTIONS,
    inFlight: IN_FLIGHT,
    send: (requests, expectedStatus) =>
      run(requests.length, async (index) => {
        const request = requests[index]!;
        const response = await pool.request({
          method: request.method as 'GET' | 'POST',
          path: request.path,
          headers: request.headers,
          body: request.body,
        });
        const text = await response.body.text();
        if (response.statusCode !== expectedStatus) {
          throw new Error(`${request.method} ${request.path}: ${response.statusCode} ${text}`);
        }
      }),
    close: () => pool.close(),
  };
}

function rawSender(baseUrl: string, pipelining: number): Sender {
  const { host, port } = new URL(baseUrl);
  return {
    name: `raw sockets, pipelining ${pipelining}`,
    connections: CONNECTIONS,
    inFlight: CONNECTIONS * pipelining,
    async send(requests, expectedStatus) {
      // Serialized before the timed run, as the pool's requests are built before it.
      const bytes = requests.map((request) =>
        serializeRequest(request.method, request.path, host, request.headers, request.body),
      );
      const result = await sendAll(Number(port), bytes, { connections: CONNECTIONS, pipelining });
      const wrong = result.statuses.findIndex((status) => status !== expectedStatus);
      if (wrong >= 0) throw new Error(`request ${wrong}: status ${result.statuses[wrong]}`);
      return result;
    },
  };
}

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

async function startEmulatorProcess(folder: string, env: Record<string, string> = {}) {
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
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } },
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
    pid: child.pid,
    stop: async () => {
      child.kill('SIGTERM');
      await stopped;
    },
  };
}

/** Registers a new key (and account) like `paperbot keys create`, with every scope. */
async function registerKey(admin: AdminClient) {
  const { privateKey, publicKey } = generateKeyPair();
  const created = await admin.createKey({ public_key: encodeBase64(publicKey) });
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
  return { keyId: credential.keyId, signer: credential.createSigner() };
}

/** Requests per kind in the one-at-a-time section, and how many go before CPU is counted. */
const SEQUENTIAL = 1_500;
const SEQUENTIAL_WARM_UP = 300;
const SEQUENTIAL_BLOCK = 100;

/**
 * The server's CPU per signed order request when requests come one at a time, as the bot's
 * executor sends its simulation and then its placement: what a request costs the emulator when
 * nothing is batched and caches go cold between requests. Signatures are checked on the main
 * thread, as in an emulator started in the bot's process (the tick-to-place bench); the section
 * runs its own emulator for that. Simulations and placements alternate in blocks, so both see
 * the same machine; signing happens in this process, just before each send.
 */
async function oneAtATime(folder: string): Promise<void> {
  const emulator = await startEmulatorProcess(folder, {
    PAPERBOT_EMULATOR_SIGNATURE_THREADS: '0',
  });
  const pool = new Pool(emulator.baseUrl, { connections: 1, pipelining: 1 });
  try {
    const admin = new AdminClient({ baseUrl: emulator.baseUrl, token: emulator.token });
    const key = await registerKey(admin);
    const prefix = `one-${Math.floor(systemClock.now() / 1000).toString(36)}`;
    let sent = 0;
    const send = async (path: '/v1/orders/simulate' | '/v1/orders', expectedStatus: number) => {
      sent += 1;
      const body = Buffer.from(
        JSON.stringify({
          request_id: `${prefix}-${sent}`,
          client_order_id: `${prefix}-${sent}`,
          market_id: 'BTC-PERP',
          side: 'buy',
          type: 'limit',
          quantity: '0.001',
          price: String(30_000 + (sent % 500)),
          leverage: 10,
          post_only: true,
        }),
      );
      const headers = signRequest({
        signer: key.signer,
        keyId: key.keyId,
        method: 'POST',
        target: path,
        body,
        timestampMs: systemClock.now(),
      });
      const begin = performance.now();
      const response = await pool.request({
        method: 'POST',
        path,
        headers: { ...headers, 'content-type': 'application/json' },
        body,
      });
      const text = await response.body.text();
      if (response.statusCode !== expectedStatus) {
        throw new Error(`POST ${path}: ${response.statusCode} ${text}`);
      }
      return performance.now() - begin;
    };
    const kinds = [
      { name: 'signed POST /v1/orders/simulate (200)', path: '/v1/orders/simulate', status: 200 },
      { name: 'signed POST /v1/orders (202)', path: '/v1/orders', status: 202 },
    ] as const;
    const measured = kinds.map(() => ({ latencies: [] as number[], cpuMs: 0 as number | null }));
    for (let done = 0; done < SEQUENTIAL_WARM_UP + SEQUENTIAL; done += SEQUENTIAL_BLOCK) {
      for (const [index, kind] of kinds.entries()) {
        const before = processCpuMs(emulator.pid);
        const latencies: number[] = [];
        for (let count = 0; count < SEQUENTIAL_BLOCK; count += 1) {
          latencies.push(await send(kind.path, kind.status));
        }
        const after = processCpuMs(emulator.pid);
        if (done < SEQUENTIAL_WARM_UP) continue;
        const result = measured[index]!;
        result.latencies.push(...latencies);
        result.cpuMs =
          result.cpuMs === null || before === null || after === null
            ? null
            : result.cpuMs + after - before;
      }
    }
    for (const [index, kind] of kinds.entries()) {
      const { latencies, cpuMs } = measured[index]!;
      printLatency(`${kind.name}, one at a time`, latencies, {
        'server CPU (us)': cpuMs === null ? 'n/a' : ((cpuMs * 1000) / latencies.length).toFixed(0),
        connections: '1',
        'in flight': '1',
      });
    }
  } finally {
    await pool.close();
    await emulator.stop();
  }
}

/** Throughput: many requests in flight, through the Pool and the lean load generator. */
async function throughput(folder: string): Promise<void> {
  const emulator = await startEmulatorProcess(folder);
  const pool = poolSender(emulator.baseUrl);
  const senders: Sender[] = [pool, rawSender(emulator.baseUrl, 1), rawSender(emulator.baseUrl, 4)];
  try {
    // Registered like `paperbot keys create`: only the public key leaves this process. Several
    // keys take turns, as several bots would: a key remembers its nonces for twice the signature
    // window and refuses beyond 50,000 of them, which one key alone reaches at 2,500 requests/s.
    const admin = new AdminClient({ baseUrl: emulator.baseUrl, token: emulator.token });
    const signing = await Promise.all(Array.from({ length: KEYS }, () => registerKey(admin)));
    const prefix = Math.floor(systemClock.now() / 1000).toString(36);

    const sign = (index: number): SignedOrder => {
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
      const key = signing[index % KEYS]!;
      const headers = signRequest({
        signer: key.signer,
        keyId: key.keyId,
        method: 'POST',
        target: '/v1/orders',
        body,
        timestampMs: systemClock.now(),
      });
      return { index, body, headers: { ...headers, 'content-type': 'application/json' } };
    };
    /** Signs `total` orders a chunk at a time and times only the sending of each chunk. */
    const placeAll = async (sender: Sender, first: number, total: number) => {
      const latencies: number[] = [];
      let seconds = 0;
      let cpuMs: number | null = 0;
      let clientCpuMicros = 0;
      for (let done = 0; done < total; done += CHUNK) {
        const size = Math.min(CHUNK, total - done);
        const orders = Array.from({ length: size }, (_, offset) => {
          const order = sign(first + done + offset);
          return { method: 'POST', path: '/v1/orders', headers: order.headers, body: order.body };
        });
        const cpuBefore = processCpuMs(emulator.pid);
        const clientBefore = process.cpuUsage();
        const chunk = await sender.send(orders, 202);
        const clientUsed = process.cpuUsage(clientBefore);
        clientCpuMicros += clientUsed.user + clientUsed.system;
        const cpuAfter = processCpuMs(emulator.pid);
        cpuMs =
          cpuMs === null || cpuBefore === null || cpuAfter === null
            ? null
            : cpuMs + cpuAfter - cpuBefore;
        seconds += chunk.seconds;
        latencies.push(...chunk.latencies);
      }
      return { seconds, latencies, cpuMs, clientCpuMicros };
    };
    const columns = (
      sender: Sender,
      count: number,
      seconds: number,
      serverCpuMs: number | null,
      clientCpuMicros: number,
    ) => ({
      'per second': Math.round(count / seconds).toLocaleString('en-US'),
      'server CPU (us)': serverCpuMs === null ? 'n/a' : ((serverCpuMs * 1000) / count).toFixed(0),
      'client CPU (us)': (clientCpuMicros / count).toFixed(0),
      connections: String(sender.connections),
      'in flight': String(sender.inFlight),
    });

    let offset = 0;
    for (const sender of senders) {
      await placeAll(sender, offset, WARM_UP);
      offset += WARM_UP;
      const orders = await placeAll(sender, offset, ORDERS);
      offset += ORDERS;
      printLatency(
        `signed POST /v1/orders (202), ${sender.name}`,
        orders.latencies,
        columns(sender, ORDERS, orders.seconds, orders.cpuMs, orders.clientCpuMicros),
      );
    }

    const bookRead = {
      method: 'GET',
      path: '/v1/markets/BTC-PERP/book?depth=20',
      headers: {},
      body: null,
    };
    for (const sender of senders) {
      await sender.send(
        Array.from({ length: WARM_UP }, () => bookRead),
        200,
      );
      const reads = Array.from({ length: BOOK_READS }, () => bookRead);
      const cpuBefore = processCpuMs(emulator.pid);
      const clientBefore = process.cpuUsage();
      const books = await sender.send(reads, 200);
      const clientUsed = process.cpuUsage(clientBefore);
      const cpuAfter = processCpuMs(emulator.pid);
      printLatency(
        `GET /v1/markets/{id}/book?depth=20, ${sender.name}`,
        books.latencies,
        columns(
          sender,
          BOOK_READS,
          books.seconds,
          cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore,
          clientUsed.user + clientUsed.system,
        ),
      );
    }
  } finally {
    await pool.close();
    await emulator.stop();
  }
}

/** `--one-at-a-time` runs that section alone. */
export default async function benchmark(): Promise<void> {
  const folder = await mkdtemp(join(tmpdir(), 'paperbot-bench-emulator-'));
  try {
    if (!process.argv.includes('--one-at-a-time')) await throughput(folder);
    await oneAtATime(folder);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
