/**
 * `npm test` runs scripts/ensure-system-packages.mjs first: nothing to do when chromium and
 * redis-server are there; on Debian as root, `apt-get update` once then the install, as
 * .ci/run does; anywhere else, a stop naming the one command to run.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain JavaScript script, without declarations.
import * as script from '../../scripts/ensure-system-packages.mjs';

interface Plan {
  readonly action: 'ok' | 'install' | 'stop';
  readonly missing?: readonly string[];
  readonly commands?: readonly (readonly [string, readonly string[]])[];
  readonly message?: string;
}
const plan = (script as { plan: (found: Record<string, boolean>) => Plan }).plan;
const ROOT = join(import.meta.dirname, '../..');

describe('ensure-system-packages', () => {
  it('does nothing when both are there', () => {
    expect(plan({ chromium: true, redis: true, debian: false, root: false })).toEqual({
      action: 'ok',
    });
  });

  it('on Debian as root, updates once and installs both packages', () => {
    const decided = plan({ chromium: false, redis: true, debian: true, root: true });
    expect(decided.action).toBe('install');
    expect(decided.commands).toEqual([
      ['apt-get', ['update', '-qq']],
      ['apt-get', ['install', '-y', '-qq', 'chromium', 'redis-server']],
    ]);
  });

  it('elsewhere, stops with the one command to run', () => {
    for (const found of [
      { chromium: false, redis: false, debian: true, root: false },
      { chromium: true, redis: false, debian: false, root: true },
    ]) {
      const decided = plan(found);
      expect(decided.action).toBe('stop');
      expect(decided.message).toContain(
        'sudo apt-get update && sudo apt-get install -y chromium redis-server',
      );
    }
    expect(plan({ chromium: true, redis: false, debian: false, root: false }).message).toMatch(
      /^npm test needs redis-server,/,
    );
  });

  it('runs before everything else in `npm test`, silently when nothing is missing', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(manifest.scripts.test).toMatch(/^node scripts\/ensure-system-packages\.mjs && /);
    const run = spawnSync(process.execPath, ['scripts/ensure-system-packages.mjs'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('');
  });
});
