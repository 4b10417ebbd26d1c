/**
 * The pipeline bench's emulator in a process of its own, as the real service is: another
 * process (or machine) with its own event loop and heap. The bench starts this file with
 * `startEmulatorProcess` (child_process.fork). The child starts the emulator with the bench's
 * settings (`benchEmulatorOptions`, also used by the bench's in-process row), creates a key,
 * writes it as a key file (mode 0600) in the folder it is given and reports the file over IPC;
 * the bench loads the key from there, so the private key never travels over IPC or a log. The
 * child answers `cpu` with its own CPU time and `close` by closing the emulator and exiting;
 * it also exits when the bench goes away (IPC disconnect). `PAPERBOT_BENCH_EMULATOR_NODE_ARGS`
 * passes flags to the child's node (for example `--cpu-prof --cpu-prof-dir=/tmp/profiles`).
 */
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultEmulatorConfig } from '../../src/emulator/config.ts';
import { type StartEmulatorOptions, startEmulator } from '../../src/emulator/start.ts';
import { loadKeyFile, writeKeyFile, type Credential } from '../../src/signing/index.ts';

/** The emulator the bench drives: a 10 ms market step, a quota that never binds. */
export function benchEmulatorOptions(): StartEmulatorOptions {
  const defaults = defaultEmulatorConfig();
  return {
    seed: 3,
    config: {
      ...defaults,
      starting_balance: '100000000',
      simulation: { ...defaults.simulation, step_ms: 10 },
    },
    rateLimit: { quota: 100_000_000, windowMs: 60_000 },
  };
}

type ToChild = { readonly type: 'cpu' } | { readonly type: 'close' };
type FromChild =
  | {
      readonly type: 'ready';
      readonly keyFile: string;
      readonly floorUrl: string;
      readonly tcpFloorPort: number;
    }
  | { readonly type: 'cpu'; readonly cpuMs: number }
  | { readonly type: 'failed'; readonly message: string };

export interface EmulatorProcess {
  readonly credential: Credential;
  /**
   * A bare node:http server in the same child, answering every request with a fixed small JSON
   * body at once: the round trip's floor on this machine, with no signing, parsing or engine.
   */
  readonly floorUrl: string;
  /**
   * A TCP server in the same child that writes the same fixed answer, as a whole HTTP/1.1
   * response, for every chunk it receives: the floor with no HTTP library at either end.
   */
  readonly tcpFloorPort: number;
  readonly pid: number;
  /** The child's CPU time so far (user + system, ms). */
  cpuMs(): Promise<number>;
  close(): Promise<void>;
}

/** How long the child may take to start (tsx compiles the emulator on first load). */
const START_TIMEOUT_MS = 60_000;

/** Forks this file and resolves once its emulator listens and its key file is written. */
export async function startEmulatorProcess(keyFolder: string): Promise<EmulatorProcess> {
  const child = fork(fileURLToPath(import.meta.url), [keyFolder], {
    execArgv: [
      ...(process.env.PAPERBOT_BENCH_EMULATOR_NODE_ARGS ?? '').split(' ').filter(Boolean),
      '--conditions=paperbot-source',
      '--import',
      'tsx',
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const next = (type: FromChild['type']) =>
    new Promise<FromChild>((resolve, reject) => {
      if (child.exitCode !== null || child.signalCode !== null) {
        reject(new Error('emulator process exited'));
        return;
      }
      const onMessage = (message: FromChild) => {
        if (message.type !== type && message.type !== 'failed') return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        if (message.type === 'failed') reject(new Error(`emulator process: ${message.message}`));
        else resolve(message);
      };
      const onExit = () => {
        child.off('message', onMessage);
        reject(new Error('emulator process exited'));
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  const ready = next('ready');
  const timer = setTimeout(() => child.kill(), START_TIMEOUT_MS);
  let started: Extract<FromChild, { type: 'ready' }>;
  try {
    started = (await ready) as Extract<FromChild, { type: 'ready' }>;
  } finally {
    clearTimeout(timer);
  }
  const credential = await loadKeyFile(started.keyFile);
  const send = (message: ToChild) => child.send(message);
  return {
    credential,
    floorUrl: started.floorUrl,
    tcpFloorPort: started.tcpFloorPort,
    pid: child.pid!,
    async cpuMs() {
      const answer = next('cpu');
      send({ type: 'cpu' });
      return ((await answer) as { cpuMs: number }).cpuMs;
    },
    async close() {
      if (child.exitCode === null && child.signalCode === null) send({ type: 'close' });
      await exited;
    },
  };
}

/** About the size of a simulation's answer. */
const FLOOR_ANSWER = JSON.stringify({ floor: true, padding: 'x'.repeat(400) });
const TCP_FLOOR_RESPONSE =
  `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n` +
  `content-length: ${Buffer.byteLength(FLOOR_ANSWER)}\r\n\r\n${FLOOR_ANSWER}`;

async function runChild(keyFolder: string): Promise<void> {
  const reply = (message: FromChild) => process.send!(message);
  try {
    const emulator = await startEmulator(benchEmulatorOptions());
    const keyFile = join(keyFolder, 'bench-key.json');
    await writeKeyFile(keyFile, emulator.createKey());
    const floor = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(FLOOR_ANSWER);
      });
    });
    await new Promise<void>((done) => floor.listen(0, '127.0.0.1', done));
    const floorUrl = `http://127.0.0.1:${(floor.address() as AddressInfo).port}`;
    // The bench sends each request in one write and waits for the answer: one chunk, one answer.
    const sockets = new Set<Socket>();
    const tcpFloor = createTcpServer((socket) => {
      sockets.add(socket);
      socket.setNoDelay(true);
      socket.on('data', () => socket.write(TCP_FLOOR_RESPONSE));
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => socket.destroy());
    });
    await new Promise<void>((done) => tcpFloor.listen(0, '127.0.0.1', done));
    const tcpFloorPort = (tcpFloor.address() as AddressInfo).port;
    const closeFloors = () => {
      floor.closeAllConnections();
      floor.close();
      for (const socket of sockets) socket.destroy();
      tcpFloor.close();
    };
    const close = async () => {
      closeFloors();
      await emulator.close();
      process.disconnect();
    };
    process.on('message', (message: ToChild) => {
      if (message.type === 'cpu') {
        const usage = process.cpuUsage();
        reply({ type: 'cpu', cpuMs: (usage.user + usage.system) / 1000 });
      } else if (message.type === 'close') {
        void close();
      }
    });
    process.once('disconnect', () => {
      closeFloors();
      void emulator.close();
    });
    reply({ type: 'ready', keyFile, floorUrl, tcpFloorPort });
  } catch (error) {
    reply({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
    process.disconnect();
  }
}

if (process.send !== undefined && process.argv[1] === fileURLToPath(import.meta.url)) {
  await runChild(process.argv[2]!);
}
