#!/usr/bin/env node
// The `paperbot` command. It runs the built JavaScript in dist/ (`npm run build`, done by
// `npm ci` and `npm pack`). In a checkout whose sources changed since the last build, or that
// was never built, it runs the TypeScript sources through tsx instead, so it is never stale.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { register } from 'node:module';

const root = new URL('../', import.meta.url);
const built = new URL('dist/cli/main.js', root);
const buildInfo = new URL('dist/.tsbuildinfo', root);
const sources = new URL('src/', root);

function newestSourceChange() {
  let newest = 0;
  for (const entry of readdirSync(sources, { recursive: true, withFileTypes: true })) {
    if (entry.isFile())
      newest = Math.max(newest, statSync(`${entry.parentPath}/${entry.name}`).mtimeMs);
  }
  return newest;
}

function builtIsCurrent() {
  if (!existsSync(built)) return false;
  if (!existsSync(sources)) return true; // an installed package: dist/ is all there is
  return existsSync(buildInfo) && statSync(buildInfo).mtimeMs >= newestSourceChange();
}

let main;
if (builtIsCurrent()) {
  ({ main } = await import(built.href));
} else {
  const { register: registerTsx } = await import('tsx/esm/api');
  registerTsx();
  // `import ... from 'paperbot'` in strategies resolves to the sources too, as under vitest.
  register(
    'data:text/javascript,' +
      encodeURIComponent(
        "export function resolve(specifier, context, next) { return next(specifier, { ...context, conditions: [...context.conditions, 'paperbot-source'] }); }",
      ),
  );
  ({ main } = await import(new URL('src/cli/main.ts', root).href));
}
process.exitCode = await main(process.argv);
