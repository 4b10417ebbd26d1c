/** A tiny sweep module for the pool tests: TypeScript (loaded through tsx in the worker). */
import { parseDecimal, toWire } from '../../../src/core/decimal.ts';

export interface ComputeInput {
  readonly base: string;
}

export interface ComputeResult {
  readonly product: string;
  readonly label: string;
}

/** base × a + b, with decimals, so the test can check every cell's arithmetic. */
export function compute(
  parameters: Readonly<Record<string, unknown>>,
  input: ComputeInput,
): ComputeResult {
  const a = parseDecimal(String(parameters.a));
  const b = parseDecimal(String(parameters.b));
  if (a.eq(13)) {
    throw Object.assign(new Error('thirteen is refused'), { code: 'UNLUCKY' });
  }
  return {
    product: toWire(parseDecimal(input.base).times(a).plus(b)),
    label: `${parameters.a}/${parameters.b}`,
  };
}

export async function slowCompute(
  parameters: Readonly<Record<string, unknown>>,
  input: ComputeInput,
): Promise<ComputeResult> {
  await Promise.resolve();
  return compute(parameters, input);
}

/** Kills its worker thread on a = 2: the pool must fail that cell only. */
export function exitOnTwo(
  parameters: Readonly<Record<string, unknown>>,
  input: ComputeInput,
): ComputeResult {
  if (String(parameters.a) === '2') process.exit(3);
  return compute(parameters, input);
}

/** Returns something that cannot cross threads. */
export function notCloneable(): unknown {
  return { callback: () => 1 };
}

export const notAFunction = 42;

/** The worker thread a cell ran on, to count the threads the pool used. */
export async function threadOf(): Promise<number> {
  const { threadId } = await import('node:worker_threads');
  return threadId;
}
