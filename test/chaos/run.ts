/**
 * `npm run chaos`: every scenario of test/chaos/scenarios.ts, one after the other, one line
 * each. Exits 1 when any figure but the faults is not 0 or a bot exit code was not 0.
 *
 *   npm run chaos                      # all
 *   npm run chaos -- sigstop-past-deadman minimal-server   # some, by name
 *   npm run chaos -- --short           # the scaled-down durations of the smoke test
 *   npm run chaos -- --verbose         # notes under each line (lost fill ids, ...)
 *   npm run chaos -- soak-2m           # the 2-minute soak only (it also ends a run of all)
 */
import { runSoak } from '../soak/soak.ts';
import { formatResult, passed, runScenario } from './harness.ts';
import { allScenarios } from './scenarios.ts';

const args = process.argv.slice(2);
const short = args.includes('--short');
const verbose = args.includes('--verbose');
const names = args.filter((arg) => !arg.startsWith('--'));
const scenarios = allScenarios({ short }).filter(
  (scenario) => names.length === 0 || names.includes(scenario.name),
);
/** The 2-minute soak (test/soak), after the scenarios: when no names are given, or by name. */
const SOAK = 'soak-2m';
const unknown = names.filter(
  (name) => name !== SOAK && !allScenarios().some((scenario) => scenario.name === name),
);
if (unknown.length > 0) {
  process.stderr.write(`unknown scenario: ${unknown.join(', ')}\n`);
  process.exit(2);
}

let failures = 0;
for (const scenario of scenarios) {
  const result = await runScenario(scenario);
  if (!passed(result)) failures += 1;
  process.stdout.write(`${formatResult(result)}\n`);
  if (verbose || !passed(result)) {
    for (const note of result.notes) process.stdout.write(`    ${note}\n`);
  }
}
let soakRan = false;
if (names.length === 0 || names.includes(SOAK)) {
  soakRan = true;
  const soak = await runSoak({
    minutes: 2,
    sampleSeconds: 10,
    warmupMinutes: 0.5,
    out: (text) => {
      for (const line of text.split('\n')) process.stdout.write(`    ${line}\n`);
    },
  });
  process.stdout.write(
    `${SOAK}: ${soak.failures.length === 0 ? 'no trend' : soak.failures.join('; ')}\n`,
  );
  if (soak.failures.length > 0) failures += 1;
}
const ran = scenarios.length + (soakRan ? 1 : 0);
process.stdout.write(
  failures === 0
    ? `chaos: ${ran} scenarios, every figure 0\n`
    : `chaos: ${failures} of ${ran} scenarios with a non-zero figure\n`,
);
process.exit(failures === 0 ? 0 : 1);
