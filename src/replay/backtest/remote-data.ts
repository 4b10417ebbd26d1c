/**
 * Sessions given by URL (an object store's HTTP(S) address of a session folder) for queued
 * sweeps: `manifest.json` and the events file it names are fetched into a local cache folder
 * named by the URL's hash, then used like any session. The manifest is fetched every time and
 * the events file again only when the manifest changed. Reads are bounded in time and size; a
 * folder is complete or absent (downloads land in a temporary file, then are renamed).
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request } from 'undici';
import { boundedReadFailure, deadlineOf, readAtMost } from '../../core/bounded-read.ts';
import { systemClock } from '../../core/clock.ts';
import { PaperbotError } from '../../core/errors.ts';
import { MANIFEST_FILE, readManifest } from '../format/index.ts';

export const DEFAULT_DATA_CACHE = join('.paperbot', 'data-cache');
const MANIFEST_LIMIT = { timeoutMs: 30_000, maxBytes: 1024 * 1024 };
const EVENTS_LIMIT = { timeoutMs: 30 * 60_000, maxBytes: 8 * 1024 ** 3 };

export function isDataUrl(entry: string): boolean {
  return /^https?:\/\//i.test(entry);
}

function fileUrl(base: string, name: string): string {
  return `${base.replace(/\/+$/, '')}/${name}`;
}

async function download(url: string, target: string, limits: typeof EVENTS_LIMIT): Promise<void> {
  const deadline = deadlineOf(systemClock, limits.timeoutMs);
  const temporary = `${target}.download`;
  try {
    const response = await request(url, { method: 'GET', signal: deadline.signal });
    if (response.statusCode !== 200) {
      const text = await readAtMost(response.body, 4096);
      throw new PaperbotError(
        'DATA_FETCH_FAILED',
        `GET ${url}: HTTP ${response.statusCode} ${text.slice(0, 200)}`,
      );
    }
    const out = createWriteStream(temporary);
    let size = 0;
    try {
      for await (const chunk of response.body) {
        size += (chunk as Buffer).byteLength;
        if (size > limits.maxBytes) {
          response.body.destroy();
          throw new PaperbotError(
            'RESPONSE_TOO_LARGE',
            `GET ${url}: larger than ${limits.maxBytes} bytes`,
          );
        }
        if (!out.write(chunk))
          await new Promise<void>((resolve) => out.once('drain', () => resolve()));
      }
    } finally {
      await new Promise<void>((resolve, reject) =>
        out.end((error?: Error | null) => (error ? reject(error) : resolve())),
      );
    }
    await rename(temporary, target);
  } catch (error) {
    await rm(temporary, { force: true });
    const failure = boundedReadFailure(error, deadline, limits.timeoutMs);
    if (failure instanceof PaperbotError) throw failure;
    throw new PaperbotError('DATA_FETCH_FAILED', `GET ${url}: ${(failure as Error).message}`, {
      cause: failure,
    });
  } finally {
    deadline.dispose();
  }
}

/** The local folder of a data entry: itself for a path, the fetched copy for a URL. */
export async function localDataDirectory(
  entry: string,
  cacheRoot: string = DEFAULT_DATA_CACHE,
): Promise<string> {
  if (!isDataUrl(entry)) return entry;
  const directory = join(cacheRoot, createHash('sha256').update(entry).digest('hex').slice(0, 32));
  await mkdir(directory, { recursive: true });
  const manifestPath = join(directory, MANIFEST_FILE);
  const previous = await readFile(manifestPath).catch(() => null);
  const fresh = join(directory, `${MANIFEST_FILE}.new`);
  await download(fileUrl(entry, MANIFEST_FILE), fresh, MANIFEST_LIMIT);
  const next = await readFile(fresh);
  const changed = previous === null || !previous.equals(next);
  // Written under its own name first: a manifest is in place only beside its events file.
  const staging = join(directory, 'staging');
  await mkdir(staging, { recursive: true });
  await writeFile(join(staging, MANIFEST_FILE), next);
  const manifest = await readManifest(staging);
  await rm(staging, { recursive: true, force: true });
  const eventsPath = join(directory, manifest.events_file);
  const present = await stat(eventsPath).then(
    () => true,
    () => false,
  );
  if (changed || !present) {
    await rm(manifestPath, { force: true });
    await download(fileUrl(entry, manifest.events_file), eventsPath, EVENTS_LIMIT);
  }
  await rename(fresh, manifestPath);
  return directory;
}

export function localDataDirectories(
  entries: readonly string[],
  cacheRoot?: string,
): Promise<string[]> {
  return Promise.all(entries.map((entry) => localDataDirectory(entry, cacheRoot)));
}
