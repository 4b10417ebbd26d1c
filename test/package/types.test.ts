/**
 * The package's types as a TypeScript user gets them: `npm pack`'s tarball installed offline
 * into a fresh project with the commands docs/strategies.md gives (`node scripts/offline-app.mjs
 * TARBALL APP`, then `npm ci --offline`), and a strategy compiled against it by tsc with
 * `strict: true` and `skipLibCheck: false`, so paperbot's own declarations are checked too.
 * Decimals must stay decimals: a decimal used as a number must not compile.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const tsc = join(projectRoot, 'node_modules/typescript/bin/tsc');
const INSTALL_TIMEOUT_MS = 400_000;
/** tsc over paperbot's declarations without skipLibCheck: seconds alone, more on a busy machine. */
const COMPILE_TIMEOUT_MS = 180_000;

let workspace = '';
let app = '';

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    skipLibCheck: false,
    noEmit: true,
  },
};

const STRATEGY = `
import { map } from 'rxjs';
import { z } from 'zod';
import { RestClient, startEmulator, type Decimal } from 'paperbot';
import { defineStrategy, limitOrder, parseDecimal, priceOnTick } from 'paperbot/strategy';
import { createStrategyHarness } from 'paperbot/testing';

export const strategy = defineStrategy({
  name: 'typed-bid',
  params: z.strictObject({ market: z.string().default('BTC-PERP'), ticks: z.int().default(3) }),
  create: (ctx, params) =>
    ctx.ticker$(params.market).pipe(
      map((ticker) => {
        const mark: Decimal = parseDecimal(ticker.mark_price ?? '0');
        const market = ctx.market(params.market);
        const below = mark.minus(market.priceTick?.times(params.ticks) ?? 0);
        return limitOrder({
          marketId: params.market,
          side: 'buy',
          quantity: '0.001',
          price: priceOnTick(market, below, 'buy'),
          postOnly: true,
        });
      }),
    ),
});

export const harness = createStrategyHarness({ strategy, params: {} });
export const text: string = parseDecimal('1.5').plus('2').toFixed(2);
export type Client = RestClient;
export const start: typeof startEmulator = startEmulator;
`;

async function compile(files: Record<string, string>): Promise<{ code: number; output: string }> {
  const directory = join(app, `check-${Object.keys(files).join('-').replace(/\W/g, '')}`);
  await mkdir(directory, { recursive: true });
  await writeFile(join(directory, 'tsconfig.json'), JSON.stringify(TSCONFIG));
  for (const [name, text] of Object.entries(files)) await writeFile(join(directory, name), text);
  try {
    const { stdout } = await run(process.execPath, [tsc, '-p', directory], {
      cwd: app,
      timeout: COMPILE_TIMEOUT_MS,
    });
    return { code: 0, output: stdout };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string };
    return { code: failed.code ?? -1, output: failed.stdout ?? String(error) };
  }
}

beforeAll(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'paperbot-types-'));
  await run('npm', ['pack', '--silent', '--pack-destination', workspace], {
    cwd: projectRoot,
    timeout: INSTALL_TIMEOUT_MS,
    maxBuffer: 64 * 1024 * 1024,
  });
  const tarballs = (await readdir(workspace)).filter((name) => name.endsWith('.tgz'));
  expect(tarballs).toHaveLength(1);
  app = join(workspace, 'my-bot');
  // The documented commands, as written in docs/strategies.md.
  await run(
    process.execPath,
    [join(projectRoot, 'scripts/offline-app.mjs'), join(workspace, tarballs[0]!), app],
    { cwd: workspace, timeout: 30_000 },
  );
  await run('npm', ['ci', '--offline', '--no-audit', '--no-fund'], {
    cwd: app,
    timeout: INSTALL_TIMEOUT_MS,
  });
}, INSTALL_TIMEOUT_MS * 2);

afterAll(async () => {
  if (workspace !== '') await rm(workspace, { recursive: true, force: true });
});

describe('the packed package for a TypeScript project', () => {
  it('installs offline with the documented commands, native addon included', async () => {
    const manifest = JSON.parse(await readFile(join(app, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(manifest.dependencies.paperbot).toMatch(/^file:paperbot-.*\.tgz$/);
    const { stdout } = await run(join(app, 'node_modules/.bin/paperbot'), ['--version'], {
      cwd: app,
      timeout: 30_000,
    });
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    const sqlite = await run(
      process.execPath,
      ['-e', "const D=require('better-sqlite3');new D(':memory:').close();console.log('ok')"],
      { cwd: app, timeout: 30_000 },
    );
    expect(sqlite.stdout.trim()).toBe('ok');
  });

  it(
    'compiles a strategy with strict: true and skipLibCheck: false',
    async () => {
      const result = await compile({ 'strategy.ts': STRATEGY });
      expect(result.output).not.toContain('TS7016');
      expect(result).toEqual({ code: 0, output: '' });
    },
    COMPILE_TIMEOUT_MS,
  );

  it(
    'refuses a decimal used as a number',
    async () => {
      const result = await compile({
        'misuse.ts': `import { parseDecimal } from 'paperbot';\nexport const n: number = parseDecimal('1');\n`,
      });
      expect(result.code).not.toBe(0);
      expect(result.output).toMatch(
        /misuse\.ts\(2,14\): error TS2322: Type 'Big' is not assignable to type 'number'/,
      );
    },
    COMPILE_TIMEOUT_MS,
  );
});
