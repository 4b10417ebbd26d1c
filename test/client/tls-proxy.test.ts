/**
 * The client over TLS and through an HTTP proxy, against the emulator serving HTTPS and WSS on
 * loopback with a certificate made at test time: REST and the stream trust the CA given to
 * them, a wrong CA is a TLS failure that says so, and with HTTPS_PROXY both go through CONNECT
 * tunnels (counted by the proxy) unless NO_PROXY names the host.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  proxyFor,
  proxySettingsOf,
  readCaFile,
  RestClient,
  StreamClient,
  type TransportOptions,
  VenueError,
} from '../../src/client/index.ts';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.ts';
import {
  type CountingProxy,
  makeCertificates,
  startCountingProxy,
  type TestCertificates,
} from '../support/tls.ts';

const directory = mkdtempSync(join(tmpdir(), 'paperbot-tls-'));
let certificates: TestCertificates;
let emulator: RunningEmulator;
let proxy: CountingProxy;

beforeAll(async () => {
  certificates = makeCertificates(directory);
  emulator = await startEmulator({
    seed: 'tls',
    tls: { cert: certificates.cert, key: certificates.key },
  });
  proxy = await startCountingProxy();
});

afterAll(async () => {
  await proxy?.close();
  await emulator?.close();
  rmSync(directory, { recursive: true, force: true });
});

async function tradeOnce(transport: TransportOptions): Promise<void> {
  const rest = new RestClient({
    credential: emulator.createKey(),
    transport,
    requestTimeoutMs: 5_000,
  });
  const stream = new StreamClient({ rest, connectTimeoutMs: 5_000 });
  try {
    expect((await rest.getAccount()).account_id).toMatch(/\S/);
    await stream.connect();
    expect(stream.state).toBe('live');
  } finally {
    await stream.close();
    await rest.close();
  }
}

describe('TLS and proxies', () => {
  it('serves https and wss URLs when given a certificate', () => {
    expect(emulator.baseUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(emulator.wsUrl).toMatch(/^wss:\/\/127\.0\.0\.1:\d+\/v1\/ws$/);
  });

  it('reads and signs over TLS with the CA of venue.ca_file, REST and stream', async () => {
    await tradeOnce({ ca: await readCaFile(certificates.caFile), env: {} });
  });

  it('fails with a TLS error naming the fix when the CA is not the one that signed', async () => {
    const rest = new RestClient({
      baseUrl: emulator.baseUrl,
      transport: { ca: await readCaFile(certificates.otherCaFile), env: {} },
      retry: { maxAttempts: 1 },
    });
    try {
      const error = await rest.getTime().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(VenueError);
      expect((error as VenueError).message).toMatch(/TLS failed \(\w+\).*venue\.ca_file/);
      expect((error as VenueError).retryable).toBe(false);
    } finally {
      await rest.close();
    }
  });

  it('refuses a CA file without a certificate, naming the path', async () => {
    await expect(readCaFile(certificates.keyFile)).rejects.toMatchObject({
      code: 'CA_FILE_INVALID',
      message: expect.stringContaining(certificates.keyFile),
    });
  });

  it('sends REST and the WebSocket through HTTPS_PROXY as CONNECT tunnels', async () => {
    const before = proxy.tunnels.length;
    await tradeOnce({
      ca: await readCaFile(certificates.caFile),
      env: { HTTPS_PROXY: proxy.url },
    });
    const opened = proxy.tunnels.slice(before);
    // At least one for REST (undici) and one for the stream (ws), all to the emulator.
    expect(opened.length).toBeGreaterThanOrEqual(2);
    expect(new Set(opened)).toEqual(new Set([`127.0.0.1:${emulator.port}`]));
  });

  it('goes direct when NO_PROXY names the host', async () => {
    const before = proxy.tunnels.length;
    await tradeOnce({
      ca: await readCaFile(certificates.caFile),
      env: { HTTPS_PROXY: proxy.url, NO_PROXY: 'localhost,127.0.0.1' },
    });
    expect(proxy.tunnels.length).toBe(before);
  });

  it('matches NO_PROXY as undici does and refuses a proxy variable that is not a URL', () => {
    const settings = proxySettingsOf({
      https_proxy: 'http://proxy:3128',
      NO_PROXY: '.corp,db:5432',
    });
    expect(proxyFor(new URL('wss://svc.example/v1/ws'), settings)?.host).toBe('proxy:3128');
    expect(proxyFor(new URL('https://api.corp/'), settings)).toBeNull();
    expect(proxyFor(new URL('https://db:5432/'), settings)).toBeNull();
    expect(proxyFor(new URL('https://db:443/'), settings)?.host).toBe('proxy:3128');
    expect(proxyFor(new URL('http://plain/'), settings)).toBeNull();
    expect(() => proxySettingsOf({ HTTPS_PROXY: 'user:secret@nowhere' })).toThrow(
      /HTTPS_PROXY must be an http/,
    );
  });
});
