/**
 * `npm run bench`: runs every `*.bench.ts` file in this folder (or those named on the command
 * line) one after another and prints their tables. Benchmarks are kept apart from the tests:
 * tests stay deterministic, speed is measured here.
 */
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
// Words name benches; `--name value` options are for the benches themselves.
const args = process.argv.slice(2);
const only = args.filter(
  (word, index) => !word.startsWith('--') && !args[index - 1]?.startsWith('--'),
);
// Long benches (minutes) run only when named in full (`replay-long`).
const LONG = ['replay-long.bench.ts', 'journal-startup.bench.ts'];
const files = readdirSync(here)
  .filter((name) => name.endsWith('.bench.ts'))
  .filter((name) =>
    LONG.includes(name)
      ? only.some((word) => name === `${word}.bench.ts`)
      : only.length === 0 || only.some((word) => name.includes(word)),
  )
  .sort();

for (const file of files) {
  const module = (await import(pathToFileURL(join(here, file)).href)) as {
    default: () => Promise<void>;
  };
  process.stdout.write(`\n## ${file}\n`);
  await module.default();
}
