/**
 * Loads strategy plugins by name from a strategies directory. A plugin is TypeScript, loaded
 * with a dynamic `import()`. When the runtime itself runs as built JavaScript (the installed
 * package, `paperbot` from dist/), tsx is registered on the first TypeScript plugin, so user
 * strategies still need no build step.
 *
 * `<directory>/<name>/index.ts` (a folder with code, README and test) is tried first, then
 * `<directory>/<name>.ts` (a single file). The module exports the `defineStrategy` result as
 * its default export or as `strategy`.
 */
import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PaperbotError } from '../../core/errors.ts';
import { isStrategyDefinition } from './define.ts';
import { parseStrategyParams } from './params.ts';
import type { StrategyDefinition } from './types.ts';

/** Names that can only ever name a file inside the directory: no separators, no dots. */
export const PLUGIN_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

export interface StrategyLoaderOptions {
  /** Where plugins live; relative paths resolve against the working directory. */
  readonly strategiesDirectory: string;
}

export interface LoadedStrategyDefinition {
  readonly definition: StrategyDefinition<unknown>;
  /** Absolute path of the module that was imported. */
  readonly file: string;
}

export interface LoadedStrategy extends LoadedStrategyDefinition {
  readonly params: unknown;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** Plugin names available in a directory (folders with an index.ts, and .ts files). */
export async function listStrategies(strategiesDirectory: string): Promise<string[]> {
  const directory = resolve(strategiesDirectory);
  let entries: Dirent[];
  try {
    entries = await readdir(directory, { withFileTypes: true });
  } catch {
    return [];
  }
  const names: string[] = [];
  for (const entry of entries) {
    if (entry.isDirectory() && (await isFile(join(directory, entry.name, 'index.ts')))) {
      names.push(entry.name);
    } else if (
      entry.isFile() &&
      entry.name.endsWith('.ts') &&
      !entry.name.endsWith('.test.ts') &&
      !entry.name.endsWith('.d.ts')
    ) {
      names.push(entry.name.slice(0, -'.ts'.length));
    }
  }
  return [...new Set(names)].filter((name) => PLUGIN_NAME_PATTERN.test(name)).sort();
}

/** The module file of a plugin; throws `STRATEGY_NOT_FOUND` naming the paths tried. */
export async function resolveStrategyFile(
  name: string,
  options: StrategyLoaderOptions,
): Promise<string> {
  if (!PLUGIN_NAME_PATTERN.test(name)) {
    throw new PaperbotError(
      'STRATEGY_INVALID_NAME',
      `strategy name ${JSON.stringify(name)} must match ${PLUGIN_NAME_PATTERN}`,
    );
  }
  const directory = resolve(options.strategiesDirectory);
  const candidates = [join(directory, name, 'index.ts'), join(directory, `${name}.ts`)];
  for (const candidate of candidates) {
    if (await isFile(candidate)) return candidate;
  }
  const available = await listStrategies(directory);
  throw new PaperbotError(
    'STRATEGY_NOT_FOUND',
    `no strategy named ${name} in ${directory} (tried ${candidates.join(', ')}); available: ${
      available.length === 0 ? 'none' : available.join(', ')
    }`,
    { details: { name, directory, tried: candidates, available } },
  );
}

let typeScriptLoader: Promise<void> | undefined;

/** Registers tsx once, for a process that runs as plain JavaScript. */
function registerTypeScriptLoader(): Promise<void> {
  typeScriptLoader ??= import('tsx/esm/api').then(({ register }) => {
    register();
  });
  return typeScriptLoader;
}

/** `import()` of a TypeScript module, registering tsx first when Node cannot load it alone. */
async function importTypeScript(url: string): Promise<Record<string, unknown>> {
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw error;
    await registerTypeScriptLoader();
    // Node remembers the failed load of `url`; the query makes it a fresh module.
    return (await import(`${url}?typescript`)) as Record<string, unknown>;
  }
}

/** Imports a plugin and checks that it exports a strategy definition. */
export async function loadStrategyDefinition(
  name: string,
  options: StrategyLoaderOptions,
): Promise<LoadedStrategyDefinition> {
  const file = await resolveStrategyFile(name, options);
  let module: Record<string, unknown>;
  try {
    module = await importTypeScript(pathToFileURL(file).href);
  } catch (error) {
    throw new PaperbotError(
      'STRATEGY_LOAD_FAILED',
      `strategy ${name} could not be loaded from ${file}: ${
        error instanceof Error ? error.message : String(error)
      }`,
      { cause: error, details: { name, file } },
    );
  }
  const exported = module.default ?? module.strategy;
  if (!isStrategyDefinition(exported)) {
    throw new PaperbotError(
      'STRATEGY_INVALID_MODULE',
      `${file} must export a defineStrategy(...) result as its default export or as "strategy"`,
      { details: { name, file } },
    );
  }
  return { definition: exported, file };
}

/**
 * Loads a plugin and validates raw params with its schema; throws `STRATEGY_PARAMS_INVALID`
 * listing every problem with its path.
 */
export async function loadStrategy(
  name: string,
  rawParams: unknown,
  options: StrategyLoaderOptions,
): Promise<LoadedStrategy> {
  const loaded = await loadStrategyDefinition(name, options);
  return { ...loaded, params: parseStrategyParams(loaded.definition, rawParams, name) };
}
