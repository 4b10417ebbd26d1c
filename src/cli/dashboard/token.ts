/**
 * The dashboard's control token: 32 random bytes, base64url. Kept in a file of mode 0600 when
 * the config names one (required when the endpoint is bound off loopback), otherwise made
 * fresh at each start and held only in memory. It is never logged: only its file's path is.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { dirname } from 'node:path';
import { isPaperbotError, PaperbotError } from '../../core/errors.ts';
import { readSmallUserFileSync } from '../../core/user-file.ts';

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{32,256}$/;
/** A token and its newline, with room for a CRLF or stray spaces: anything larger is not one. */
export const TOKEN_FILE_MAX_BYTES = 1024;

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
 * that others may read, one that is not a regular file (a FIFO would block start-up), one larger
 * than `TOKEN_FILE_MAX_BYTES`, or one whose content is not a token, is refused naming the path.
 */
export function loadOrCreateToken(path: string): string {
  let bytes: Buffer;
  try {
    // A FIFO or a device is refused at once, and a huge file before it is read.
    bytes = readSmallUserFileSync(path, {
      what: 'the dashboard token file',
      maxBytes: TOKEN_FILE_MAX_BYTES,
      codes: {
        notRegular: 'DASHBOARD_TOKEN_FILE_INVALID',
        tooLarge: 'DASHBOARD_TOKEN_FILE_INVALID',
        unreadable: 'DASHBOARD_TOKEN_FILE_INVALID',
      },
      inspect: (stats) => {
        if ((stats.mode & 0o077) !== 0) {
          throw new PaperbotError(
            'DASHBOARD_TOKEN_FILE_MODE',
            `the dashboard token file ${path} may be read by others (mode ${(stats.mode & 0o777).toString(8)}); make it 0600`,
          );
        }
      },
    });
  } catch (error) {
    if (!isPaperbotError(error) || error.code !== 'USER_FILE_NOT_FOUND') throw error;
    mkdirSync(dirname(path), { recursive: true });
    const token = generateToken();
    writeFileSync(path, `${token}\n`, { mode: 0o600, flag: 'wx' });
    chmodSync(path, 0o600);
    return token;
  }
  const token = bytes.toString('utf8').trim();
  bytes.fill(0);
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
