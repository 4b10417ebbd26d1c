/**
 * Every file a user names is opened one way (src/core/user-file.ts): a FIFO or a device is
 * refused at once, never waited on; a file past its cap is refused before it is read; the
 * refusal names the file and its path.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { PaperbotError } from '../../src/core/errors.ts';
import {
  type GzipEnd,
  gunzipAtMost,
  openUserFile,
  readSmallUserFileSync,
  readUserFile,
  withinTime,
} from '../../src/core/user-file.ts';
import { VirtualClock } from '../../src/core/clock.ts';

const directory = mkdtempSync(join(tmpdir(), 'paperbot-user-file-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const options = { what: 'test file', maxBytes: 1024 } as const;

function fifo(name: string): string {
  const path = join(directory, name);
  execFileSync('mkfifo', ['-m', '600', path]);
  return path;
}

async function* chunksOf(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

async function drain(source: AsyncIterable<Buffer>): Promise<number> {
  let total = 0;
  for await (const chunk of source) total += chunk.length;
  return total;
}

describe('openUserFile', () => {
  it('reads a regular file within its cap', async () => {
    const path = join(directory, 'small.txt');
    writeFileSync(path, 'hello\n');
    expect((await readUserFile(path, options)).toString()).toBe('hello\n');
    expect(readSmallUserFileSync(path, options).toString()).toBe('hello\n');
  });

  it('refuses a FIFO at once, naming it (async and sync), with no writer ever coming', async () => {
    const path = fifo('pipe');
    await expect(readUserFile(path, options)).rejects.toMatchObject({
      code: 'USER_FILE_NOT_REGULAR',
      message: `test file ${path} is not a regular file`,
    });
    expect(() => readSmallUserFileSync(path, options)).toThrow(
      `test file ${path} is not a regular file`,
    );
  });

  it('refuses /dev/zero at once instead of reading forever', async () => {
    await expect(openUserFile('/dev/zero', options)).rejects.toMatchObject({
      code: 'USER_FILE_NOT_REGULAR',
    });
  });

  it('refuses a file past its cap before reading it (a sparse 3 GiB file)', async () => {
    const path = join(directory, 'sparse');
    writeFileSync(path, '');
    truncateSync(path, 3 * 1024 ** 3);
    await expect(readUserFile(path, options)).rejects.toMatchObject({
      code: 'USER_FILE_TOO_LARGE',
      message: `test file ${path} is larger than 1024 bytes`,
    });
    expect(() => readSmallUserFileSync(path, options)).toThrow('is larger than 1024 bytes');
  });

  it('names a missing file with its own code, or the caller’s', async () => {
    const path = join(directory, 'absent');
    await expect(readUserFile(path, options)).rejects.toMatchObject({
      code: 'USER_FILE_NOT_FOUND',
    });
    await expect(
      readUserFile(path, { ...options, codes: { notFound: 'KEY_FILE_NOT_FOUND' } }),
    ).rejects.toMatchObject({
      code: 'KEY_FILE_NOT_FOUND',
      message: `test file ${path} does not exist`,
    });
  });
});

describe('the time bound of each open and read', () => {
  it('refuses an operation that does not finish in time, on the clock seam', async () => {
    const clock = new VirtualClock(0);
    const never = new Promise<never>(() => undefined);
    const bounded = withinTime(
      never,
      clock,
      30_000,
      () => new PaperbotError('USER_FILE_TIMEOUT', 'late'),
    );
    clock.advanceBy(29_999);
    let settled = false;
    void bounded.catch(() => {
      settled = true;
    });
    await Promise.resolve();
    expect(settled).toBe(false);
    clock.advanceBy(1);
    await expect(bounded).rejects.toMatchObject({ code: 'USER_FILE_TIMEOUT' });
  });

  it('hands on the result of one that does, and leaves no timer behind', async () => {
    const clock = new VirtualClock(0);
    expect(
      await withinTime(Promise.resolve(7), clock, 10, () => new PaperbotError('X', 'late')),
    ).toBe(7);
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe('gunzipAtMost', () => {
  const text = Buffer.from('a,b\n'.repeat(10_000));
  const gzip = gzipSync(text);

  it('decompresses a whole stream and says it was complete', async () => {
    const end: { value: GzipEnd } = { value: 'complete' };
    const total = await drain(
      gunzipAtMost(
        chunksOf(gzip, 100),
        { maxBytes: 1 << 20, tooLarge: () => new PaperbotError('TEST', 'big') },
        end,
      ),
    );
    expect(total).toBe(text.length);
    expect(end.value).toBe('complete');
  });

  it('tells a cut stream (truncated) and a damaged one apart, without throwing', async () => {
    const cut: { value: GzipEnd } = { value: 'complete' };
    await drain(
      gunzipAtMost(
        chunksOf(gzip.subarray(0, gzip.length - 4), 100),
        { maxBytes: 1 << 20, tooLarge: () => new PaperbotError('TEST', 'big') },
        cut,
      ),
    );
    expect(cut.value).toBe('truncated');
    const damaged = Buffer.from(gzip);
    damaged.fill(0x55, 20, 60);
    const broken: { value: GzipEnd } = { value: 'complete' };
    await drain(
      gunzipAtMost(
        chunksOf(damaged, 100),
        { maxBytes: 1 << 20, tooLarge: () => new PaperbotError('TEST', 'big') },
        broken,
      ),
    );
    expect(broken.value).toBe('damaged');
  });

  it('refuses past the decompressed cap (a gzip bomb)', async () => {
    const bomb = gzipSync(Buffer.alloc(8 << 20));
    expect(bomb.length).toBeLessThan(16_384);
    const end: { value: GzipEnd } = { value: 'complete' };
    await expect(
      drain(
        gunzipAtMost(
          chunksOf(bomb, 1024),
          { maxBytes: 1 << 20, tooLarge: () => new PaperbotError('TEST', 'bomb refused') },
          end,
        ),
      ),
    ).rejects.toThrow('bomb refused');
  });
});
