/**
 * `paperbot emulator --tls-cert FILE --tls-key FILE`: HTTPS and WSS on the one port, with a
 * certificate made at test time; the flags go together, and a file that is not a certificate
 * is refused before anything listens.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCaFile, RestClient } from '../../../src/client/index.ts';
import { makeCertificates, type TestCertificates } from '../../support/tls.ts';

const directory = mkdtempSync(join(tmpdir(), 'paperbot-emulator-tls-'));
let certificates: TestCertificates;

beforeAll(() => {
  certificates = makeCertificates(directory);
});

afterAll(() => rmSync(directory, { recursive: true, force: true }));

function emulator(args: readonly string[]) {
  const child = spawn(
    process.execPath,
    ['bin/paperbot.js', 'emulator', '--port', '0', '--data', join(directory, 'data'), ...args],
    { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += String(chunk);
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  return { child, exited, stderr: () => stderr };
}

describe('paperbot emulator over TLS', () => {
  it('serves https on its one port with --tls-cert and --tls-key', async () => {
    const { child, exited } = emulator([
      '--tls-cert',
      certificates.certFile,
      '--tls-key',
      certificates.keyFile,
    ]);
    const lines = createInterface({ input: child.stdout });
    const first = await new Promise<string>((resolve) => lines.once('line', resolve));
    const match = /^paperbot emulator listening on (https:\/\/127\.0\.0\.1:\d+)$/.exec(first);
    expect(match).not.toBeNull();
    const rest = new RestClient({
      baseUrl: match![1]!,
      transport: { ca: await readCaFile(certificates.caFile), env: {} },
    });
    try {
      expect(await rest.health()).toMatchObject({ status: 'ok' });
    } finally {
      await rest.close();
    }
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 30_000);

  it('refuses --tls-cert without --tls-key, and a key file given as the certificate', async () => {
    const alone = emulator(['--tls-cert', certificates.certFile]);
    expect(await alone.exited).toBe(1);
    expect(alone.stderr()).toContain('--tls-cert and --tls-key go together');
    const swapped = emulator([
      '--tls-cert',
      certificates.keyFile,
      '--tls-key',
      certificates.keyFile,
    ]);
    expect(await swapped.exited).not.toBe(0);
    expect(swapped.stderr()).toContain('the TLS certificate and key cannot be used');
  }, 30_000);
});
