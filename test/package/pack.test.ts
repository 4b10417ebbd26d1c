/**
 * The package as a user gets it: `npm pack`'s tarball installed into a fresh project, then used
 * from plain Node 20 ESM (no tsx, no TypeScript): the client, the emulator, the strategy API,
 * the test harness, and the installed CLI scaffolding a TypeScript strategy that the installed
 * runtime loads without a build step.
 *
 * The install is `npm ci --offline` from npm's cache (which this checkout's `npm ci` filled), so
 * no test traffic leaves the machine: the app's lockfile pins paperbot to the tarball and its
 * production dependencies to this checkout's lockfile entries. Install scripts are off; the one
 * native addon (better-sqlite3) is copied from this checkout's build of the same version.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const INSTALL_TIMEOUT_MS = 240_000;

let workspace = '';
let app = '';

async function node(script: string, cwd: string): Promise<string> {
  const file = join(cwd, `script-${Math.random().toString(36).slice(2)}.mjs`);
  await writeFile(file, script);
  const { stdout } = await run(process.execPath, [file], { cwd, timeout: 60_000 });
  return stdout;
}

interface LockEntry {
  readonly version?: string;
  readonly dev?: boolean;
  readonly dependencies?: Record<string, string>;
  readonly bin?: Record<string, string>;
  readonly engines?: Record<string, string>;
}

/** A lockfile for the app: paperbot from the tarball, its dependencies as this checkout pins them. */
function appLockfile(tarball: string): object {
  const lock = JSON.parse(readFileSync(join(projectRoot, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const self = lock.packages['']!;
  const packages: Record<string, object> = {
    '': { name: 'my-trading-app', dependencies: { paperbot: `file:${tarball}` } },
    'node_modules/paperbot': {
      version: self.version,
      resolved: `file:${tarball}`,
      dependencies: self.dependencies,
      bin: self.bin,
      engines: self.engines,
    },
  };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path !== '' && entry.dev !== true) packages[path] = entry;
  }
  return { name: 'my-trading-app', lockfileVersion: 3, requires: true, packages };
}

beforeAll(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'paperbot-pack-'));
  // The build scripts `npm pack` runs print to the same stdout, so the tarball is found on disk.
  await run('npm', ['pack', '--silent', '--pack-destination', workspace], {
    cwd: projectRoot,
    timeout: INSTALL_TIMEOUT_MS,
    maxBuffer: 64 * 1024 * 1024,
  });
  const tarballs = (await readdir(workspace)).filter((name) => name.endsWith('.tgz'));
  expect(tarballs).toHaveLength(1);
  const filename = tarballs[0]!;
  app = join(workspace, 'app');
  await mkdir(app);
  await cp(join(workspace, filename), join(app, filename));
  const dependencies = { paperbot: `file:${filename}` };
  await writeFile(
    join(app, 'package.json'),
    JSON.stringify({ name: 'my-trading-app', private: true, type: 'module', dependencies }),
  );
  await writeFile(join(app, 'package-lock.json'), JSON.stringify(appLockfile(filename)));
  await run('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', '--silent'], {
    cwd: app,
    timeout: INSTALL_TIMEOUT_MS,
  });
  await cp(
    join(projectRoot, 'node_modules/better-sqlite3/build'),
    join(app, 'node_modules/better-sqlite3/build'),
    { recursive: true },
  );
}, INSTALL_TIMEOUT_MS * 2);

afterAll(async () => {
  if (workspace !== '') await rm(workspace, { recursive: true, force: true });
});

describe('the packed package in a fresh project', () => {
  it('ships built JavaScript with type declarations and no sources or tests', async () => {
    const installed = join(app, 'node_modules/paperbot');
    const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as {
      exports: Record<string, unknown>;
    };
    expect(Object.keys(manifest.exports)).toEqual([
      '.',
      './strategy',
      './testing',
      './client',
      './package.json',
    ]);
    await expect(readFile(join(installed, 'dist/index.d.ts'), 'utf8')).resolves.toContain(
      'startEmulator',
    );
    await expect(readFile(join(installed, 'src/index.ts'))).rejects.toMatchObject({
      code: 'ENOENT',
    });
    await expect(readFile(join(installed, 'test/package/pack.test.ts'))).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });

  it('imports from plain Node ESM: emulator, client, strategy API and harness', async () => {
    const output = await node(
      `
import { RestClient, startEmulator, VirtualClock } from 'paperbot';
import { defineStrategy, limitOrder } from 'paperbot/strategy';
import { createStrategyHarness } from 'paperbot/testing';
import { StreamClient } from 'paperbot/client';
import { EMPTY } from 'rxjs';
import { z } from 'zod';

const emulator = await startEmulator({ clock: new VirtualClock(Date.UTC(2026, 0, 5)) });
const client = new RestClient({ baseUrl: emulator.baseUrl, clock: emulator.clock });
const markets = (await client.listMarkets()).map((market) => market.market_id);
await client.close();
await emulator.close();
const strategy = defineStrategy({ name: 'noop', params: z.strictObject({}), create: () => EMPTY });
const harness = createStrategyHarness({ strategy, params: {} });
const order = limitOrder({ marketId: 'BTC-PERP', side: 'buy', quantity: '1', price: '2' });
console.log(JSON.stringify({ markets, harness: typeof harness.take, order: order.kind, stream: typeof StreamClient }));
`,
      app,
    );
    expect(JSON.parse(output)).toEqual({
      markets: expect.arrayContaining(['BTC-PERP', 'ETH-PERP']),
      harness: 'function',
      order: 'place',
      stream: 'function',
    });
  });

  it('scaffolds a TypeScript strategy with the installed CLI, and the runtime loads it', async () => {
    const cli = join(app, 'node_modules/.bin/paperbot');
    const version = await run(cli, ['--version'], { cwd: app, timeout: 30_000 });
    expect(version.stdout.trim()).toBe(
      (JSON.parse(await readFile(join(projectRoot, 'package.json'), 'utf8')) as { version: string })
        .version,
    );
    await run(cli, ['new', 'strategy', 'my-quoter', '--dir', 'strategies'], {
      cwd: app,
      timeout: 30_000,
    });
    const code = await readFile(join(app, 'strategies/my-quoter/index.ts'), 'utf8');
    expect(code).toContain("from 'paperbot/strategy'");

    const output = await node(
      `
import { loadStrategy } from 'paperbot/strategy';
import { createStrategyHarness } from 'paperbot/testing';

const loaded = await loadStrategy('my-quoter', {}, { strategiesDirectory: 'strategies' });
const harness = createStrategyHarness({ strategy: loaded.definition, params: {} });
harness.mark('BTC-PERP', '100.3');
console.log(JSON.stringify(harness.take().map((stamped) => stamped.intent)));
`,
      app,
    );
    expect(JSON.parse(output)).toEqual([
      expect.objectContaining({ kind: 'place', side: 'buy', price: '97.5', postOnly: true }),
    ]);
  });
});
