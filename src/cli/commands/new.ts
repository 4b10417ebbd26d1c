/**
 * `paperbot new strategy NAME`: scaffolds `strategies/NAME/` with a working plugin, its README
 * and a passing test, from the templates below. The generated code imports the strategy API
 * and the test harness from the package (`paperbot/strategy`, `paperbot/testing`), so it works
 * the same inside this checkout and in a project of its own that installed paperbot.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { PaperbotError } from '../../core/errors.ts';
import { printToStdout } from './terminal.ts';
import { defineCommand } from './define-command.ts';

/** Lower case letters, digits and '-', starting with a letter or digit (also a valid plugin name). */
export const SCAFFOLD_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,63}$/;

export interface ScaffoldOptions {
  readonly strategiesDirectory: string;
}

export interface ScaffoldResult {
  readonly directory: string;
  readonly files: readonly string[];
}

function indexTemplate(name: string): string {
  return `/**
 * ${name}: keeps one post-only limit bid \`offsetTicks\` ticks below the mark of each market.
 * A starting point: replace \`bidBelowMark\` with your own logic.
 */
import { filter, merge, mergeMap, type Observable } from 'rxjs';
import { z } from 'zod';
import {
  defineStrategy,
  limitOrder,
  type OrderIntent,
  offsetByTicks,
  parseDecimal,
  priceOnTick,
  type StrategyContext,
  smallestOrderQuantity,
} from 'paperbot/strategy';

export const TAG = '${name}-bid';

export const params = z.strictObject({
  /** Markets to trade; empty means every market the runtime knows. */
  markets: z.array(z.string().min(1)).default([]),
  /** How far below the mark the bid rests, in ticks. */
  offsetTicks: z.int().min(1).default(5),
});

export type Params = z.output<typeof params>;

function bidBelowMark(
  ctx: StrategyContext<Params>,
  settings: Params,
  marketId: string,
): Observable<OrderIntent> {
  const market = ctx.market(marketId);
  return ctx.ticker$(marketId).pipe(
    filter((ticker) => ticker.data_status === 'live' && ticker.mark_price !== null),
    // Only when no bid of ours is open or in flight.
    filter(() => ctx.openOrders(marketId).every((order) => order.tag !== TAG)),
    mergeMap((ticker) => {
      const mark = parseDecimal(ticker.mark_price ?? '0');
      const below = offsetByTicks(market, mark, -settings.offsetTicks);
      const price = priceOnTick(market, below, 'buy');
      if (price.lte(0)) return [];
      const quantity = smallestOrderQuantity(market, price);
      return [limitOrder({ marketId, side: 'buy', quantity, price, postOnly: true, tag: TAG })];
    }),
  );
}

export default defineStrategy({
  name: '${name}',
  description: 'Keeps one post-only bid below the mark.',
  params,
  create: (ctx, settings) => {
    const markets = settings.markets.length > 0 ? settings.markets : ctx.marketIds();
    return merge(...markets.map((marketId) => bidBelowMark(ctx, settings, marketId)));
  },
});
`;
}

function testTemplate(name: string): string {
  return `import { describe, expect, it } from 'vitest';
import { createStrategyHarness } from 'paperbot/testing';
import strategy, { TAG } from './index.ts';

const MARKET = 'BTC-PERP';

describe('${name}', () => {
  it('places one post-only bid below the mark, on the tick grid', () => {
    const harness = createStrategyHarness({ strategy, params: {} });
    harness.mark(MARKET, '100.3');
    expect(harness.take().map((stamped) => stamped.intent)).toEqual([
      {
        kind: 'place',
        marketId: MARKET,
        side: 'buy',
        type: 'limit',
        quantity: '0.103',
        price: '97.5',
        postOnly: true,
        tag: TAG,
      },
    ]);
  });

  it('does not add a second bid while the first is open', () => {
    const harness = createStrategyHarness({ strategy, params: {}, respond: 'accept' });
    harness.mark(MARKET, '100');
    harness.advanceBy(1_000).mark(MARKET, '101');
    expect(harness.intents).toHaveLength(1);
  });
});
`;
}

function readmeTemplate(name: string): string {
  return `# ${name}

Keeps one post-only limit bid \`offsetTicks\` ticks below the mark of each market (a starting
point made by \`paperbot new strategy ${name}\`).

## Params

| Name          | Default | Meaning                                                      |
| ------------- | ------- | ------------------------------------------------------------ |
| \`markets\`     | \`[]\`    | markets to trade; empty means every market the runtime knows |
| \`offsetTicks\` | \`5\`     | distance of the bid below the mark, in ticks                 |

## Test

\`\`\`
npx vitest run strategies/${name}
\`\`\`

See docs/strategies.md for the context, intents, outcomes and the test harness.
`;
}

/** Writes `<strategiesDirectory>/<name>/` with index.ts, README.md and <name>.test.ts. */
export async function scaffoldStrategy(
  name: string,
  options: ScaffoldOptions,
): Promise<ScaffoldResult> {
  if (!SCAFFOLD_NAME_PATTERN.test(name)) {
    throw new PaperbotError(
      'SCAFFOLD_INVALID_NAME',
      `strategy name ${JSON.stringify(name)} must be 1 to 64 lower case letters, digits and '-', starting with a letter or digit`,
    );
  }
  const root = resolve(options.strategiesDirectory);
  const directory = join(root, name);
  await mkdir(root, { recursive: true });
  try {
    // Not recursive: fails when the folder exists, even if another process just made it.
    await mkdir(directory);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new PaperbotError('SCAFFOLD_EXISTS', `${directory} already exists; nothing written`, {
        details: { directory },
      });
    }
    throw error;
  }
  const files = [
    [join(directory, 'index.ts'), indexTemplate(name)],
    [join(directory, `${name}.test.ts`), testTemplate(name)],
    [join(directory, 'README.md'), readmeTemplate(name)],
  ] as const;
  for (const [file, text] of files) await writeFile(file, text, { flag: 'wx' });
  return { directory, files: files.map(([file]) => file) };
}

export interface NewCommandDependencies {
  readonly print: (text: string) => void;
}

interface NewStrategyOptions {
  readonly dir: string;
}

export function registerNewCommands(
  program: Command,
  dependencies: Partial<NewCommandDependencies> = {},
): Command {
  const {
    command: create,
    dependencies: { print },
  } = defineCommand(
    program,
    'new',
    'Create project files from templates',
    { print: printToStdout },
    dependencies,
  );
  create
    .command('strategy')
    .description('Scaffold a strategy plugin: index.ts, README.md and a passing test')
    .argument('<name>', "plugin name: lower case letters, digits and '-'")
    .option('--dir <directory>', 'strategies directory', 'strategies')
    .action(async (name: string, options: NewStrategyOptions) => {
      const result = await scaffoldStrategy(name, { strategiesDirectory: options.dir });
      print(
        `Created ${result.directory}\n${result.files.map((file) => `  ${file}\n`).join('')}` +
          `Run its test: npx vitest run ${relative(process.cwd(), result.directory) || '.'}\n`,
      );
    });
  return create;
}
