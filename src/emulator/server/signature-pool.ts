/**
 * Ed25519 verification on worker threads. A signed request costs the server about 110-150 µs of
 * verification, which is most of its CPU time per order; on a machine with a second core the
 * main thread keeps parsing, validating and answering while a worker verifies. The worker only
 * says whether a signature holds: every other check, the nonce memory included, stays on the main
 * thread (src/signing's `verifyAsync`). If a worker fails, its pending and later checks run on
 * the main thread with the same native verification, so the verdicts never change.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { nativeVerifySignature } from '../../signing/index.ts';

// Plain JavaScript evaluated in the worker, so it loads without the TypeScript loader. It caches
// imported public keys as src/signing/native.ts does.
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createPublicKey, verify } = require('node:crypto');
const spkiPrefix = Buffer.from('302a300506032b6570032100', 'hex');
const keys = new Map();
function keyObject(publicKey) {
  const cacheKey = Buffer.from(publicKey.buffer, publicKey.byteOffset, publicKey.byteLength)
    .toString('base64');
  let key = keys.get(cacheKey);
  if (key === undefined) {
    key = createPublicKey({ key: Buffer.concat([spkiPrefix, publicKey]), format: 'der', type: 'spki' });
    if (keys.size >= 1024) keys.delete(keys.keys().next().value);
    keys.set(cacheKey, key);
  }
  return key;
}
parentPort.on('message', (jobs) => {
  const verdicts = new Uint8Array(jobs.length / 4);
  for (let index = 0; index < verdicts.length; index += 1) {
    const id = jobs[index * 4];
    const publicKey = jobs[index * 4 + 1];
    const message = jobs[index * 4 + 2];
    const signature = jobs[index * 4 + 3];
    let holds = false;
    try {
      holds = publicKey.byteLength === 32 && signature.byteLength === 64 &&
        verify(null, message, keyObject(publicKey), signature);
    } catch {
      holds = false;
    }
    verdicts[index] = holds ? 1 : 0;
  }
  const ids = [];
  for (let index = 0; index < verdicts.length; index += 1) ids.push(jobs[index * 4]);
  parentPort.postMessage({ ids, verdicts });
});
`;

interface Job {
  readonly publicKey: Uint8Array;
  readonly message: Uint8Array;
  readonly signature: Uint8Array;
  readonly resolve: (holds: boolean) => void;
}

interface WorkerSlot {
  readonly worker: Worker;
  readonly pending: Map<number, Job>;
  /** Checks not yet posted: id, public key, message, signature, four entries each. */
  queued: unknown[];
  failed: boolean;
}

export interface SignaturePool {
  readonly size: number;
  verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean>;
}

function verifyHere(job: Job): void {
  job.resolve(nativeVerifySignature(job.publicKey, job.message, job.signature));
}

export function createSignaturePool(size: number): SignaturePool {
  const slots: WorkerSlot[] = [];
  let nextId = 0;
  let nextSlot = 0;
  let flushScheduled = false;

  // Checks queued during one turn of the event loop (every socket read in it) go to a worker as
  // one message, so a busy server wakes its workers once per turn rather than once per request.
  const flush = () => {
    flushScheduled = false;
    for (const slot of slots) {
      if (slot.queued.length === 0) continue;
      const jobs = slot.queued;
      slot.queued = [];
      if (!slot.failed) slot.worker.postMessage(jobs);
    }
  };

  for (let index = 0; index < size; index += 1) {
    // The worker needs no loader flags of the parent (tsx, say): it is plain JavaScript.
    const worker = new Worker(WORKER_SOURCE, { eval: true, execArgv: [] });
    const slot: WorkerSlot = { worker, pending: new Map(), queued: [], failed: false };
    worker.on('message', (answer: { ids: number[]; verdicts: Uint8Array }) => {
      for (const [position, id] of answer.ids.entries()) {
        const job = slot.pending.get(id);
        if (job === undefined) continue;
        slot.pending.delete(id);
        job.resolve(answer.verdicts[position] === 1);
      }
      if (slot.pending.size === 0) worker.unref();
    });
    const fail = () => {
      if (slot.failed) return;
      slot.failed = true;
      slot.queued = [];
      for (const job of slot.pending.values()) verifyHere(job);
      slot.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', fail);
    // Kept alive only while it holds checks, so an idle pool never holds a process open.
    worker.unref();
    slots.push(slot);
  }
  return {
    size,
    verify(publicKey, message, signature) {
      return new Promise<boolean>((resolve) => {
        const job: Job = { publicKey, message, signature, resolve };
        const slot = slots[nextSlot++ % slots.length];
        if (slot === undefined || slot.failed) {
          verifyHere(job);
          return;
        }
        const id = nextId++;
        if (slot.pending.size === 0) slot.worker.ref();
        slot.pending.set(id, job);
        slot.queued.push(id, publicKey, message, signature);
        if (!flushScheduled) {
          flushScheduled = true;
          setImmediate(flush);
        }
      });
    },
  };
}

let shared: SignaturePool | null | undefined;

/** Environment variable overriding the number of verification workers (0: the main thread). */
export const SIGNATURE_THREADS_VARIABLE = 'PAPERBOT_EMULATOR_SIGNATURE_THREADS';

/**
 * One pool for the process, created on first use: one worker per core beyond the first (at most
 * two), none on a single core, where a worker could only take time from the main thread.
 * `PAPERBOT_EMULATOR_SIGNATURE_THREADS` sets the count instead (0 to 4), for comparisons.
 */
export function sharedSignaturePool(): SignaturePool | null {
  if (shared === undefined) {
    const configured = Number.parseInt(process.env[SIGNATURE_THREADS_VARIABLE] ?? '', 10);
    const size =
      Number.isSafeInteger(configured) && configured >= 0
        ? Math.min(4, configured)
        : Math.min(2, availableParallelism() - 1);
    shared = size > 0 ? createSignaturePool(size) : null;
  }
  return shared;
}
