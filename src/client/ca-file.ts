/**
 * `venue.ca_file`: the certificates to trust for the service, read bounded and checked before
 * anything connects. The file's certificates are added to Node's roots and to those of
 * `NODE_EXTRA_CA_CERTS`, so a private CA does not cut the public ones off.
 */
import { rootCertificates } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { readFileAtMost } from '../core/bounded-file.ts';
import { PaperbotError } from '../core/errors.ts';

/** A CA bundle larger than this is refused (a system bundle is about 200 KiB). */
export const MAX_CA_FILE_BYTES = 1024 * 1024;

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

function caError(path: string, problem: string, cause?: unknown): PaperbotError {
  return new PaperbotError('CA_FILE_INVALID', `CA file ${path}: ${problem}`, {
    details: { path },
    ...(cause === undefined ? {} : { cause }),
  });
}

/** The PEM certificates of a file; throws CA_FILE_INVALID naming the path and the problem. */
export async function readCertificates(path: string): Promise<string[]> {
  const text = await readFileAtMost(path, MAX_CA_FILE_BYTES, 'CA file', 'CA_FILE_INVALID');
  const blocks = text.match(PEM_BLOCK) ?? [];
  if (blocks.length === 0) throw caError(path, 'holds no PEM certificate (BEGIN CERTIFICATE)');
  blocks.forEach((block, index) => {
    try {
      new X509Certificate(block);
    } catch (error) {
      throw caError(path, `certificate ${index + 1} does not parse`, error);
    }
  });
  return blocks;
}

/** What to trust with `venue.ca_file`: Node's roots, NODE_EXTRA_CA_CERTS's, and the file's. */
export async function readCaFile(
  path: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<string[]> {
  const own = await readCertificates(path);
  const extraPath = env.NODE_EXTRA_CA_CERTS;
  // Node warns about an unreadable NODE_EXTRA_CA_CERTS itself at start; it is skipped here too.
  const extra =
    extraPath === undefined || extraPath === ''
      ? []
      : await readCertificates(extraPath).catch(() => []);
  return [...rootCertificates, ...extra, ...own];
}
