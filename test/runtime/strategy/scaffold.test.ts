import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerNewCommands, scaffoldStrategy } from '../../../src/cli/commands/new.ts';
import { loadStrategy } from '../../../src/runtime/strategy/index.ts';
import { createStrategyHarness } from '../../../src/runtime/testing/index.ts';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
let directory = '';

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'paperbot-scaffold-'));
  // A project of its own outside the checkout, with paperbot installed (here: linked).
  await mkdir(join(directory, 'node_modules'));
  await symlink(projectRoot, join(directory, 'node_modules', 'paperbot'), 'dir');
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('paperbot new strategy', () => {
  it('writes index.ts, README.md and a test, and the plugin loads and runs in the harness', async () => {
    const strategies = join(directory, 'strategies');
    const result = await scaffoldStrategy('my-quoter', { strategiesDirectory: strategies });
    expect(result.files).toEqual([
      join(strategies, 'my-quoter', 'index.ts'),
      join(strategies, 'my-quoter', 'my-quoter.test.ts'),
      join(strategies, 'my-quoter', 'README.md'),
    ]);
    expect(await readFile(join(strategies, 'my-quoter', 'README.md'), 'utf8')).toContain(
      '# my-quoter',
    );

    // The generated test's scenario, run on the generated plugin, loaded as the runtime would.
    const loaded = await loadStrategy('my-quoter', {}, { strategiesDirectory: strategies });
    expect(loaded.definition.name).toBe('my-quoter');
    expect(loaded.params).toEqual({ markets: [], offsetTicks: 5 });
    const harness = createStrategyHarness({ strategy: loaded.definition, params: {} });
    harness.mark('BTC-PERP', '100.3');
    expect(harness.take().map((stamped) => stamped.intent)).toEqual([
      {
        kind: 'place',
        marketId: 'BTC-PERP',
        side: 'buy',
        type: 'limit',
        quantity: '0.103',
        price: '97.5',
        postOnly: true,
        tag: 'my-quoter-bid',
      },
    ]);
    const generatedTest = await readFile(
      join(strategies, 'my-quoter', 'my-quoter.test.ts'),
      'utf8',
    );
    expect(generatedTest).toContain("quantity: '0.103'");
    expect(generatedTest).toContain("price: '97.5'");
  });

  it('generates exactly the committed example, which the type check and the suite cover', async () => {
    // test/runtime/strategy/scaffolded/example-strategy was made by this command; tsc checks
    // it with the project and vitest runs its test, so the templates stay compiling and green.
    const golden = join(projectRoot, 'test/runtime/strategy/scaffolded/example-strategy');
    const strategies = join(directory, 'golden');
    const result = await scaffoldStrategy('example-strategy', { strategiesDirectory: strategies });
    for (const file of result.files) {
      const generated = await readFile(file, 'utf8');
      expect(generated, basename(file)).toBe(await readFile(join(golden, basename(file)), 'utf8'));
      if (file.endsWith('.ts')) expect(generated).toMatch(/from 'paperbot\/(strategy|testing)'/);
    }
  });

  it('refuses an existing folder and writes nothing into it', async () => {
    const strategies = join(directory, 'existing');
    await mkdir(join(strategies, 'taken'), { recursive: true });
    await writeFile(join(strategies, 'taken', 'index.ts'), '// mine\n');
    await expect(
      scaffoldStrategy('taken', { strategiesDirectory: strategies }),
    ).rejects.toMatchObject({ code: 'SCAFFOLD_EXISTS' });
    expect(await readFile(join(strategies, 'taken', 'index.ts'), 'utf8')).toBe('// mine\n');
  });

  it.each(['My-Strategy', 'under_score', '../escape', 'a/b', '-leading', '', 'x'.repeat(65)])(
    'refuses the name %j',
    async (name) => {
      await expect(
        scaffoldStrategy(name, { strategiesDirectory: join(directory, 'names') }),
      ).rejects.toMatchObject({ code: 'SCAFFOLD_INVALID_NAME' });
    },
  );

  it('is reachable as a command and prints what it made', async () => {
    const printed: string[] = [];
    const program = new Command('paperbot').exitOverride();
    registerNewCommands(program, { print: (text) => printed.push(text) });
    const strategies = join(directory, 'cli');
    await program.parseAsync([
      'node',
      'paperbot',
      'new',
      'strategy',
      'from-cli',
      '--dir',
      strategies,
    ]);
    expect(printed.join('')).toContain(join(strategies, 'from-cli', 'index.ts'));
    await expect(
      program.parseAsync(['node', 'paperbot', 'new', 'strategy', 'from-cli', '--dir', strategies]),
    ).rejects.toMatchObject({ code: 'SCAFFOLD_EXISTS' });
  });
});
