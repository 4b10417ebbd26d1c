// Prepares a project to install paperbot's packed tarball with no network:
//   node scripts/offline-app.mjs ../paperbot-0.1.0.tgz ../my-bot
//   cd ../my-bot && npm ci --offline
// `npm install <tarball> --offline` fails with ENOTCACHED: it asks the registry what each
// dependency's range resolves to, and npm's cache holds the packages this checkout's `npm ci`
// fetched, not those answers. So the project gets a lockfile instead: paperbot from the tarball
// (copied beside package.json), its production dependencies exactly as this checkout pins them,
// which `npm ci --offline` installs from the cache without asking anything.
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const checkout = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const [tarballArgument, appArgument] = process.argv.slice(2);
if (tarballArgument === undefined || appArgument === undefined) {
  console.error('usage: node scripts/offline-app.mjs PAPERBOT.tgz APP_DIRECTORY');
  process.exit(2);
}
const tarball = resolve(tarballArgument);
if (!existsSync(tarball)) {
  console.error(`no such tarball: ${tarball} (run npm pack in the checkout first)`);
  process.exit(2);
}
const app = resolve(appArgument);
mkdirSync(app, { recursive: true });
const filename = basename(tarball);
if (resolve(join(app, filename)) !== tarball) copyFileSync(tarball, join(app, filename));

const manifestPath = join(app, 'package.json');
const manifest = existsSync(manifestPath)
  ? JSON.parse(readFileSync(manifestPath, 'utf8'))
  : {
      name:
        basename(app)
          .toLowerCase()
          .replace(/[^a-z0-9-]/g, '-') || 'my-bot',
      private: true,
    };
manifest.type ??= 'module';
manifest.dependencies = { ...manifest.dependencies, paperbot: `file:${filename}` };
writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);

const lock = JSON.parse(readFileSync(join(checkout, 'package-lock.json'), 'utf8'));
const self = lock.packages[''];
const packages = {
  '': { name: manifest.name, dependencies: manifest.dependencies },
  'node_modules/paperbot': {
    version: self.version,
    resolved: `file:${filename}`,
    dependencies: self.dependencies,
    bin: self.bin,
    engines: self.engines,
  },
};
for (const [path, entry] of Object.entries(lock.packages)) {
  if (!path.startsWith('node_modules/') || entry.dev === true) continue;
  if (entry.link === true) {
    // A package this checkout vendors (vendor/...) ships inside the tarball: link to that copy.
    const target = `node_modules/paperbot/${entry.resolved}`;
    packages[path] = { resolved: target, link: true };
    packages[target] = lock.packages[entry.resolved];
  } else {
    packages[path] = entry;
  }
}
const appLock = { name: manifest.name, lockfileVersion: 3, requires: true, packages };
writeFileSync(join(app, 'package-lock.json'), `${JSON.stringify(appLock, null, 2)}\n`);
console.log(`wrote ${manifestPath} and package-lock.json; now: cd ${app} && npm ci --offline`);
