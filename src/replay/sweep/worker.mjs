/**
 * The sweep's worker entry, run by piscina in each worker thread. Plain JavaScript, so Node can
 * start it without a loader; it registers tsx itself, then imports the module that runs one grid
 * cell (TypeScript or JavaScript) once per thread and calls its export for each cell.
 *
 * It never throws for a cell: a cell's error comes back as data, so its `code` survives the
 * thread boundary (an Error crossing threads keeps only its message). A module that cannot be
 * loaded comes back as `fatal`, and the pool fails every cell at once.
 *
 * workerData: { moduleUrl, exportName, input }
 * Task in:    the cell's parameters
 * Result out: { ok: true, value } | { ok: false, fatal?: true, error: { code, message } }
 */
/* global structuredClone */
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();

const { moduleUrl, exportName, input } = workerData;

function describe(error, fallbackCode) {
  if (error !== null && typeof error === 'object') {
    const code = typeof error.code === 'string' ? error.code : fallbackCode;
    const message = typeof error.message === 'string' ? error.message : String(error);
    return { code, message };
  }
  return { code: fallbackCode, message: String(error) };
}

let loading;

function loadRun() {
  loading ??= import(moduleUrl).then((module) => {
    const run = module[exportName];
    if (typeof run !== 'function') {
      throw Object.assign(
        new Error(`${moduleUrl} does not export a function named ${exportName}`),
        { code: 'SWEEP_MODULE_INVALID' },
      );
    }
    return run;
  });
  return loading;
}

export default async function runCell(parameters) {
  let run;
  try {
    run = await loadRun();
  } catch (error) {
    return { ok: false, fatal: true, error: describe(error, 'SWEEP_MODULE_LOAD_FAILED') };
  }
  let value;
  try {
    value = await run(parameters, input);
  } catch (error) {
    return { ok: false, error: describe(error, 'SWEEP_CELL_FAILED') };
  }
  try {
    // The pool would fail posting it and lose the thread; one more copy of a result row is cheap.
    structuredClone(value);
  } catch (error) {
    return {
      ok: false,
      error: { code: 'SWEEP_RESULT_NOT_CLONEABLE', message: describe(error, '').message },
    };
  }
  return { ok: true, value };
}
