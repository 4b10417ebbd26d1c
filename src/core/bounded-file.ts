/**
 * A local file read whole but bounded (a CA bundle, a TLS certificate or key): refused when it
 * is larger than the caller allows, with an error naming the path and what the file is for.
 */
import { open } from 'node:fs/promises';
import { PaperbotError } from './errors.ts';

export async function readFileAtMost(
  path: string,
  maxBytes: number,
  what: string,
  code = 'FILE_UNREADABLE',
): Promise<string> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new PaperbotError(code, `${what} ${path} cannot be read (${reason})`, {
      details: { path },
      cause: error,
    });
  }
  try {
    // One byte more than allowed tells a file at the limit from one beyond it.
    const buffer = Buffer.alloc(maxBytes + 1);
    let filled = 0;
    while (filled < buffer.byteLength) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.byteLength - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    if (filled > maxBytes) {
      throw new PaperbotError(code, `${what} ${path} is larger than ${maxBytes} bytes`, {
        details: { path, limit_bytes: maxBytes },
      });
    }
    return buffer.subarray(0, filled).toString('utf8');
  } finally {
    await handle.close();
  }
}
