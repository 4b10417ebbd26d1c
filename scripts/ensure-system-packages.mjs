// Run first by `npm test`: the browser tests drive Debian's chromium at /usr/bin/chromium and
// the queue tests start redis-server, neither of which npm installs. Present: nothing to do. On
// Debian as root: `apt-get update` once and `apt-get install -y chromium redis-server`, as
// .ci/run does. Anywhere else: stop at once with the one command to run.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CHROMIUM_PATH = '/usr/bin/chromium';
export const PACKAGES = ['chromium', 'redis-server'];
export const INSTALL_COMMAND = `sudo apt-get update && sudo apt-get install -y ${PACKAGES.join(' ')}`;

function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name, path = process.env.PATH ?? '') {
  return path.split(delimiter).some((folder) => folder !== '' && executable(join(folder, name)));
}

/** What is there: chromium, redis-server, a Debian system, root. */
export function survey() {
  return {
    chromium: executable(CHROMIUM_PATH),
    redis: onPath('redis-server'),
    debian: existsSync('/etc/debian_version'),
    root: typeof process.getuid === 'function' && process.getuid() === 0,
  };
}

/**
 * What to do about it: `ok` (nothing missing), `install` (the apt-get commands to run) or
 * `stop` (the message naming the one command to run).
 */
export function plan(found) {
  const missing = [
    ...(found.chromium ? [] : [`chromium (${CHROMIUM_PATH})`]),
    ...(found.redis ? [] : ['redis-server']),
  ];
  if (missing.length === 0) return { action: 'ok' };
  if (found.debian && found.root) {
    return {
      action: 'install',
      missing,
      commands: [
        ['apt-get', ['update', '-qq']],
        ['apt-get', ['install', '-y', '-qq', ...PACKAGES]],
      ],
    };
  }
  return {
    action: 'stop',
    missing,
    message: `npm test needs ${missing.join(' and ')}, which npm does not install. Run:\n  ${INSTALL_COMMAND}\n(on Debian or Ubuntu; the browser tests expect ${CHROMIUM_PATH}).`,
  };
}

function main() {
  const decided = plan(survey());
  if (decided.action === 'ok') return 0;
  if (decided.action === 'stop') {
    process.stderr.write(`${decided.message}\n`);
    return 1;
  }
  process.stderr.write(`npm test: installing ${decided.missing.join(' and ')} with apt-get\n`);
  for (const [command, args] of decided.commands) {
    const result = spawnSync(command, args, {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (result.status !== 0) {
      process.stderr.write(`${command} ${args.join(' ')} failed; run: ${INSTALL_COMMAND}\n`);
      return 1;
    }
  }
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = main();
