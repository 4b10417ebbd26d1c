/**
 * What the dashboard page loads, all served by the bot (nothing from the network):
 * - `app.js`: the page (Preact), bundled by esbuild. A package build writes it to
 *   `dist/dashboard/app.js` (`npm run build:dashboard`); in a checkout without it (or with one
 *   older than the page's source), the first request bundles the sources in memory with
 *   esbuild (a devDependency) and keeps the result.
 *   Nothing is bundled at start, so start-up never waits for it.
 * - `charts.js`: lightweight-charts' standalone build and the report's chart setup, so the
 *   dashboard's charts are drawn by the same code as the backtest report's.
 * - `style.css`: the report's stylesheet and the dashboard's additions.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type * as Esbuild from 'esbuild';
import { PaperbotError } from '../../core/errors.ts';
import { CHART_SETUP_SCRIPT, loadChartLibrary } from '../../replay/report/charts.ts';
import { firstPaintHtml, jsonDataBlock } from './first-paint.ts';
import { DASHBOARD_STYLE } from './style.ts';

/** `/favicon.ico`: a small icon (SVG, which browsers take under that name too). */
export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1565c0"/><path d="M3 12 L6.5 7.5 L9 10 L13 4" stroke="#fff" stroke-width="1.8" fill="none" stroke-linecap="round" stroke-linejoin="round"/></svg>\n';

export const PAGE_ENTRY = resolve(import.meta.dirname, 'page', 'app.js');

/** The folder holding this package's package.json. */
function packageRoot(): string {
  let directory = import.meta.dirname;
  for (let depth = 0; depth < 8; depth++) {
    if (existsSync(join(directory, 'package.json'))) return directory;
    directory = dirname(directory);
  }
  return resolve(import.meta.dirname, '..', '..', '..');
}

export const BUILT_BUNDLE = join(packageRoot(), 'dist', 'dashboard', 'app.js');

/** Bundles the page with esbuild, minified, into one script. */
export async function bundlePage(): Promise<string> {
  let esbuild: typeof Esbuild;
  try {
    esbuild = await import('esbuild');
  } catch (error) {
    throw new PaperbotError(
      'DASHBOARD_NOT_BUILT',
      `the dashboard is not built (${BUILT_BUNDLE}) and esbuild is not installed to bundle it: run npm run build:dashboard`,
      { cause: error },
    );
  }
  const result = await esbuild.build({
    entryPoints: [PAGE_ENTRY],
    bundle: true,
    minify: true,
    format: 'iife',
    target: 'es2020',
    write: false,
    legalComments: 'none',
    logLevel: 'silent',
    // node_modules may be a link (a worktree's); resolve inside this package, not the link's target.
    preserveSymlinks: true,
  });
  const output = result.outputFiles[0];
  if (output === undefined)
    throw new PaperbotError('DASHBOARD_BUNDLE_FAILED', 'esbuild wrote nothing');
  return output.text;
}

/**
 * The built bundle is used when it exists and is not older than the page's source (a checkout
 * where someone edited the page after a build bundles afresh).
 */
function builtBundleIsCurrent(): boolean {
  const built = statSync(BUILT_BUNDLE, { throwIfNoEntry: false });
  if (built === undefined) return false;
  const source = statSync(PAGE_ENTRY, { throwIfNoEntry: false });
  return source === undefined || source.mtimeMs <= built.mtimeMs;
}

export interface DashboardAssets {
  script(): Promise<string>;
  charts(): string;
  style(): string;
}

export function createDashboardAssets(): DashboardAssets {
  let script: Promise<string> | null = null;
  let charts: string | null = null;
  return {
    script() {
      script ??= builtBundleIsCurrent()
        ? Promise.resolve(readFileSync(BUILT_BUNDLE, 'utf8'))
        : bundlePage();
      // A failed bundle is tried again at the next request.
      script.catch(() => {
        script = null;
      });
      return script;
    },
    charts() {
      charts ??= `${loadChartLibrary()}\n${CHART_SETUP_SCRIPT}`;
      return charts;
    },
    style() {
      return DASHBOARD_STYLE;
    },
  };
}

function escapeAttribute(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;');
}

/**
 * The page's HTML: the first snapshot drawn in short and handed to the script as data, which
 * then draws the whole page. The token is there only when controls are on.
 */
export function pageHtml(token: string | null, snapshot: unknown = null): string {
  const tokenMeta =
    token === null ? '' : `<meta name="paperbot-token" content="${escapeAttribute(token)}">\n`;
  const data =
    snapshot === null
      ? ''
      : `<script type="application/json" id="paperbot-snapshot">${jsonDataBlock(snapshot)}</script>\n`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${tokenMeta}<title>paperbot</title>
<link rel="icon" href="/favicon.ico" type="image/svg+xml">
<link rel="stylesheet" href="/dashboard/style.css">
</head>
<body>
<div id="app">${firstPaintHtml(snapshot)}</div>
${data}<script src="/dashboard/charts.js"></script>
<script src="/dashboard/app.js"></script>
</body>
</html>
`;
}
