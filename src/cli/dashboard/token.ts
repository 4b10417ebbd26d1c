/**
 * The dashboard's control token: 32 random bytes, base64url. Kept in a file of mode 0600 when
 * the config names one (required when the endpoint is bound off loopback), otherwise made
 * fresh at each start and held only in memory. It is never logged: only its file's path is.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { dirname } from 'node:path';
import { PaperbotError } from '../../core/errors.ts';

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{32,256}$/;

export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

/** `127.0.0.1` and the rest of 127/8, `::1` and `localhost`: reachable from this machine only. */
export function isLoopbackHost(host: string): boolean {
  if (host === 'localhost' || host === '::1' || host === '[::1]') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

/**
 * Reads the token at `path`, or writes a new one there (mode 0600) when there is none. A file
 * that others may read, or whose content is not a token, is refused.
 */
export function loadOrCreateToken(path: string): string {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat === undefined) {
    mkdirSync(dirname(path), { recursive: true });
    const token = generateToken();
    writeFileSync(path, `${token}\n`, { mode: 0o600, flag: 'wx' });
    chmodSync(path, 0o600);
    return token;
  }
  if ((stat.mode & 0o077) !== 0) {
    throw new PaperbotError(
      'DASHBOARD_TOKEN_FILE_MODE',
      `the dashboard token file ${path} may be read by others (mode ${(stat.mode & 0o777).toString(8)}); make it 0600`,
    );
  }
  const token = readFileSync(path, 'utf8').trim();
  if (!TOKEN_PATTERN.test(token)) {
    throw new PaperbotError(
      'DASHBOARD_TOKEN_FILE_INVALID',
      `the dashboard token file ${path} does not hold a token (32 to 256 characters of A-Z a-z 0-9 _ -)`,
    );
  }
  return token;
}

/** Compares in constant time, so the answer's timing says nothing about the token. */
export function tokensEqual(expected: string, given: string | undefined): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
