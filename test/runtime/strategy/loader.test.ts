import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  listStrategies,
  loadStrategy,
  loadStrategyDefinition,
} from '../../../src/runtime/strategy/index.ts';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const strategyApi = join(projectRoot, 'src/runtime/strategy/index.ts');

let directory = '';

function plugin(file: string, name: string, exportForm: 'default' | 'named'): string {
  const api = relative(dirname(file), strategyApi).replaceAll('\\', '/');
  const body = `defineStrategy({
  name: '${name}',
  description: 'loader fixture',
  params: z.strictObject({
    markets: z.array(z.string()).default(['BTC-PERP']),
    size: z.string().regex(/^\\d+(\\.\\d+)?$/).default('1'),
    levels: z.int().min(1).default(3),
  }),
  create: () => EMPTY,
})`;
  return [
    `import { EMPTY } from 'rxjs';`,
    `import { z } from 'zod';`,
    `import { defineStrategy } from '${api.startsWith('.') ? api : `./${api}`}';`,
    exportForm === 'default' ? `export default ${body};` : `export const strategy = ${body};`,
    '',
  ].join('\n');
}

async function write(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
}

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'paperbot-loader-'));
  const folder = join(directory, 'in-folder', 'index.ts');
  await write(folder, plugin(folder, 'in-folder', 'default'));
  const file = join(directory, 'single-file.ts');
  await write(file, plugin(file, 'single-file', 'named'));
  // When both forms exist the folder wins.
  const both = join(directory, 'both', 'index.ts');
  await write(both, plugin(both, 'both', 'default'));
  await write(join(directory, 'both.ts'), 'export default 42;\n');
  await write(join(directory, 'not-a-strategy.ts'), 'export default { name: "x" };\n');
  await write(join(directory, 'broken.ts'), 'export default (;\n');
  await write(join(directory, 'helper.test.ts'), 'export {};\n');
  await mkdir(join(directory, 'empty-folder'));
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('strategy loader', () => {
  it('loads a plugin folder by name (strategies/<name>/index.ts)', async () => {
    const loaded = await loadStrategyDefinition('in-folder', { strategiesDirectory: directory });
    expect(loaded.definition.name).toBe('in-folder');
    expect(loaded.file).toBe(join(directory, 'in-folder', 'index.ts'));
  });

  it('loads a single-file plugin exported as "strategy" (strategies/<name>.ts)', async () => {
    const loaded = await loadStrategyDefinition('single-file', { strategiesDirectory: directory });
    expect(loaded.definition.name).toBe('single-file');
    expect(loaded.file).toBe(join(directory, 'single-file.ts'));
  });

  it('prefers the folder when both forms exist', async () => {
    const loaded = await loadStrategyDefinition('both', { strategiesDirectory: directory });
    expect(loaded.file).toBe(join(directory, 'both', 'index.ts'));
  });

  it('applies the params schema: {} gets the defaults', async () => {
    const loaded = await loadStrategy('in-folder', {}, { strategiesDirectory: directory });
    expect(loaded.params).toEqual({ markets: ['BTC-PERP'], size: '1', levels: 3 });
    const fromUndefined = await loadStrategy('in-folder', undefined, {
      strategiesDirectory: directory,
    });
    expect(fromUndefined.params).toEqual(loaded.params);
  });

  it('reports every params problem with its path, at once', async () => {
    const failure = await loadStrategy(
      'in-folder',
      { markets: ['BTC-PERP', 7], size: '1e3', levels: 0, colour: 'red' },
      { strategiesDirectory: directory },
    ).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'STRATEGY_PARAMS_INVALID' });
    const { details, message } = failure as {
      message: string;
      details: { issues: { path: (string | number)[] }[] };
    };
    expect(details.issues.map((issue) => issue.path)).toEqual([
      ['markets', 1],
      ['size'],
      ['levels'],
      ['colour'],
    ]);
    expect(message).toContain('4 problems');
    expect(message).toContain('markets[1]:');
    expect(message).toContain('levels:');
    expect(message).toContain('colour');
  });

  it('names the paths it tried and what is available when the name is unknown', async () => {
    const failure = await loadStrategyDefinition('missing', {
      strategiesDirectory: directory,
    }).catch((error: unknown) => error);
    expect(failure).toMatchObject({
      code: 'STRATEGY_NOT_FOUND',
      details: {
        tried: [join(directory, 'missing', 'index.ts'), join(directory, 'missing.ts')],
        available: ['both', 'broken', 'in-folder', 'not-a-strategy', 'single-file'],
      },
    });
  });

  it('refuses names that could leave the strategies directory', async () => {
    for (const name of ['../in-folder', 'in-folder/index', '.hidden', '']) {
      await expect(
        loadStrategyDefinition(name, { strategiesDirectory: directory }),
      ).rejects.toMatchObject({ code: 'STRATEGY_INVALID_NAME' });
    }
  });

  it('refuses a module that does not export a strategy definition', async () => {
    await expect(
      loadStrategyDefinition('not-a-strategy', { strategiesDirectory: directory }),
    ).rejects.toMatchObject({ code: 'STRATEGY_INVALID_MODULE' });
  });

  it('reports a module that fails to load', async () => {
    await expect(
      loadStrategyDefinition('broken', { strategiesDirectory: directory }),
    ).rejects.toMatchObject({ code: 'STRATEGY_LOAD_FAILED' });
  });

  it('lists plugins, leaving out tests and folders without index.ts', async () => {
    expect(await listStrategies(directory)).toEqual([
      'both',
      'broken',
      'in-folder',
      'not-a-strategy',
      'single-file',
    ]);
  });

  it('loads the example strategies of the repository by name', async () => {
    const options = { strategiesDirectory: join(projectRoot, 'strategies') };
    for (const name of ['market-maker', 'trend-follower', 'grid']) {
      const loaded = await loadStrategy(name, {}, options);
      expect(loaded.definition.name).toBe(name);
    }
  });
});
