// Bundles the dashboard page for a package build: Preact and the page, minified, into
// dist/dashboard/app.js, and its stylesheet into dist/dashboard/style.css. A bot finds the
// bundle there and serves it; without it (a checkout), the bot bundles in memory on the first
// request. Run with tsx, since the page's settings and styles live in TypeScript:
//   npm run build:dashboard
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { BUILT_BUNDLE, bundlePage } from '../src/cli/dashboard/assets.ts';
import { DASHBOARD_STYLE } from '../src/cli/dashboard/style.ts';

const script = await bundlePage();
mkdirSync(dirname(BUILT_BUNDLE), { recursive: true });
writeFileSync(BUILT_BUNDLE, script);
const stylePath = BUILT_BUNDLE.replace(/app\.js$/, 'style.css');
writeFileSync(stylePath, DASHBOARD_STYLE);
process.stderr.write(
  `wrote ${BUILT_BUNDLE} (${(script.length / 1024).toFixed(1)} KiB) and ${stylePath}\n`,
);
