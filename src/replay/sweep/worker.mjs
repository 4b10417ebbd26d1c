/**
 * A sweep worker thread. Plain JavaScript, so Node can start it without a loader; it registers
 * tsx itself, then imports the module that runs one grid cell (TypeScript or JavaScript) and
 * runs the cells the pool sends, one at a time.
 *
 * Messages in:  { type: 'run', index, parameters }
 * Messages out: { type: 'ready' } | { type: 'load-failed', error } |
 *               { type: 'result', index, ok: true, value } | { type: 'result', index, ok: false, error }
 */
import { parentPort, workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();

function describe(error) {
  if (error !== null && typeof error === 'object') {
    const code = typeof error.code === 'string' ? error.code : 'SWEEP_CELL_FAILED';
    const message = typeof error.message === 'string' ? error.message : String(error);
    return { code, message };
  }
  return { code: 'SWEEP_CELL_FAILED', message: String(error) };
}

const { moduleUrl, exportName, input } = workerData;
let run;
try {
  const module = await import(moduleUrl);
  run = module[exportName];
  if (typeof run !== 'function') {
    throw Object.assign(new Error(`${moduleUrl} does not export a function named ${exportName}`), {
      code: 'SWEEP_MODULE_INVALID',
    });
  }
} catch (error) {
  const described = describe(error);
  parentPort.postMessage({
    type: 'load-failed',
    error: {
      code: described.code === 'SWEEP_CELL_FAILED' ? 'SWEEP_MODULE_LOAD_FAILED' : described.code,
      message: described.message,
    },
  });
  run = undefined;
}

if (run) {
  parentPort.on('message', async (message) => {
    if (message.type !== 'run') return;
    try {
      const value = await run(message.parameters, input);
      try {
        parentPort.postMessage({
          type: 'result',
          index: message.index,
          ok: true,
          value,
        });
      } catch (error) {
        parentPort.postMessage({
          type: 'result',
          index: message.index,
          ok: false,
          error: {
            code: 'SWEEP_RESULT_NOT_CLONEABLE',
            message: describe(error).message,
          },
        });
      }
    } catch (error) {
      parentPort.postMessage({
        type: 'result',
        index: message.index,
        ok: false,
        error: describe(error),
      });
    }
  });
  parentPort.postMessage({ type: 'ready' });
}
