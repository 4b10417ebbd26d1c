/**
 * The child process of the intent-cost bench: `paperbot <args>` from the sources of the tree
 * named first, as `bin/paperbot.js` runs an unbuilt checkout (tsx, the `paperbot-source`
 * condition, both given on the node command line). Run from source in both trees, so neither
 * side runs the built `dist/` the other lacks.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [tree, ...args] = process.argv.slice(2);
if (tree === undefined) throw new Error('usage: cli.ts TREE_ROOT paperbot-arguments...');
const { main } = (await import(pathToFileURL(join(tree, 'src/cli/main.ts')).href)) as {
  main: (argv: readonly string[]) => Promise<number>;
};
process.exitCode = await main(['node', 'paperbot', ...args]);
