// Copies the files the TypeScript build does not emit (plain JavaScript modules loaded by URL)
// from src/ into dist/, beside the modules that load them.
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

const assets = ['replay/sweep/worker.mjs'];
for (const asset of assets) {
  const target = new URL(`../dist/${asset}`, import.meta.url);
  mkdirSync(dirname(target.pathname), { recursive: true });
  copyFileSync(new URL(`../src/${asset}`, import.meta.url), target);
}
