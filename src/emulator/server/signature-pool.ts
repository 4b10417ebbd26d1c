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

const PUBLIC_KEY_LENGTH = 32;
const SIGNATURE_LENGTH = 64;
/** Per check in a batch: the message length (4 bytes), the public key, the signature. */
const JOB_HEADER_LENGTH = 4 + PUBLIC_KEY_LENGTH + SIGNATURE_LENGTH;

// Plain JavaScript evaluated in the worker, so it loads without the TypeScript loader. A batch
// arrives as one transferred buffer of checks laid out as `JOB_HEADER_LENGTH` describes, and
// the verdicts go back as one transferred byte per check, in order. Imported public keys are
// cached as src/signing/native.ts does.
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createPublicKey, verify } = require('node:crypto');
const spkiPrefix = Buffer.from('302a300506032b6570032100', 'hex');
const keys = new Map();
function keyObject(bytes, offset) {
  const cacheKey = bytes.toString('latin1', offset, offset + ${PUBLIC_KEY_LENGTH});
  let key = keys.get(cacheKey);
  if (key === undefined) {
    key = createPublicKey({
      key: Buffer.concat([spkiPrefix, bytes.subarray(offset, offset + ${PUBLIC_KEY_LENGTH})]),
      format: 'der',
      type: 'spki',
    });
    if (keys.size >= 1024) keys.delete(keys.keys().next().value);
    keys.set(cacheKey, key);
  }
  return key;
}
parentPort.on('message', ({ count, buffer }) => {
  const bytes = Buffer.from(buffer);
  const verdicts = new Uint8Array(count);
  let offset = 0;
  for (let index = 0; index < count; index += 1) {
    const length = bytes.readUInt32LE(offset);
    const keyAt = offset + 4;
    const signatureAt = keyAt + ${PUBLIC_KEY_LENGTH};
    const messageAt = signatureAt + ${SIGNATURE_LENGTH};
    let holds = false;
    try {
      holds = verify(
        null,
        bytes.subarray(messageAt, messageAt + length),
        keyObject(bytes, keyAt),
        bytes.subarray(signatureAt, messageAt),
      );
    } catch {
      holds = false;
    }
    verdicts[index] = holds ? 1 : 0;
    offset = messageAt + length;
  }
  parentPort.postMessage(verdicts, [verdicts.buffer]);
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
  /** Batches posted and not yet answered, oldest first: the worker answers them in order. */
  readonly posted: Job[][];
  /** Checks not yet posted. */
  queued: Job[];
  failed: boolean;
}

export interface SignaturePool {
  readonly size: number;
  verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean>;
}

function verifyHere(job: Job): void {
  job.resolve(nativeVerifySignature(job.publicKey, job.message, job.signature));
}

/**
 * Copies a batch into one buffer that is transferred, not cloned: structured cloning a byte view
 * copies its whole backing store, and decoded keys and signatures are views into Node's shared
 * 8 KiB pool, so posting the views themselves cost several kilobytes of copying per check.
 */
function packBatch(jobs: readonly Job[]): ArrayBuffer {
  let size = 0;
  for (const job of jobs) size += JOB_HEADER_LENGTH + job.message.byteLength;
  const bytes = new Uint8Array(size);
  const view = new DataView(bytes.buffer);
  let offset = 0;
  for (const job of jobs) {
    view.setUint32(offset, job.message.byteLength, true);
    bytes.set(job.publicKey, offset + 4);
    bytes.set(job.signature, offset + 4 + PUBLIC_KEY_LENGTH);
    bytes.set(job.message, offset + JOB_HEADER_LENGTH);
    offset += JOB_HEADER_LENGTH + job.message.byteLength;
  }
  return bytes.buffer;
}

export function createSignaturePool(size: number): SignaturePool {
  const slots: WorkerSlot[] = [];
  let nextSlot = 0;
  let flushScheduled = false;

  // Checks queued during one turn of the event loop (every socket read in it) go to a worker as
  // one message, so a busy server wakes its workers once per turn rather than once per request.
  const flush = () => {
    flushScheduled = false;
    for (const slot of slots) {
      if (slot.queued.length === 0 || slot.failed) continue;
      const jobs = slot.queued;
      slot.queued = [];
      if (slot.posted.length === 0) slot.worker.ref();
      slot.posted.push(jobs);
      const buffer = packBatch(jobs);
      slot.worker.postMessage({ count: jobs.length, buffer }, [buffer]);
    }
  };

  for (let index = 0; index < size; index += 1) {
    // The worker needs no loader flags of the parent (tsx, say): it is plain JavaScript.
    const worker = new Worker(WORKER_SOURCE, { eval: true, execArgv: [] });
    const slot: WorkerSlot = { worker, posted: [], queued: [], failed: false };
    worker.on('message', (verdicts: Uint8Array) => {
      const jobs = slot.posted.shift() ?? [];
      for (const [position, job] of jobs.entries()) job.resolve(verdicts[position] === 1);
      if (slot.posted.length === 0) worker.unref();
    });
    const fail = () => {
      if (slot.failed) return;
      slot.failed = true;
      for (const jobs of slot.posted) for (const job of jobs) verifyHere(job);
      for (const job of slot.queued) verifyHere(job);
      slot.posted.length = 0;
      slot.queued = [];
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
        if (
          slot === undefined ||
          slot.failed ||
          publicKey.byteLength !== PUBLIC_KEY_LENGTH ||
          signature.byteLength !== SIGNATURE_LENGTH
        ) {
          // Wrong lengths are refused by the native check at once; they never reach a worker.
          verifyHere(job);
          return;
        }
        slot.queued.push(job);
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
