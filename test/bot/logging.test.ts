import { formatPrettyLine, PRETTY_LINE_WIDTH } from '../../src/cli/log-line.ts';
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/clock.ts';
import { fromPino } from '../../src/core/logger.ts';
import { createBotLogger, redactPaths } from '../../src/cli/bot/logging.ts';
import { Credential, encodeBase64, generateKeyPair } from '../../src/signing/index.ts';
import { LineCollector } from './helpers.ts';

function logger(level = 'debug') {
  const lines = new LineCollector();
  const clock = new VirtualClock(Date.UTC(2030, 0, 2, 3, 4, 5));
  return { lines, clock, log: createBotLogger({ level, clock, destination: lines }) };
}

function credential(): { credential: Credential; seedBase64: string } {
  const { privateKey } = generateKeyPair();
  const credential = Credential.create({
    keyId: 'key_test_1',
    accountId: 'acct_1',
    apiBaseUrl: 'http://127.0.0.1:8787',
    wsUrl: 'ws://127.0.0.1:8787/v1/ws',
    scopes: ['account:read'],
    createdAt: '2030-01-01T00:00:00Z',
    expiresAt: null,
    privateKey,
  });
  return { credential, seedBase64: privateKey.revealSeedBase64() };
}

describe('bot logging', () => {
  it('writes one JSON object per line with the time from the clock and a level label', () => {
    const { lines, log } = logger();
    log.info({ event: 'x' }, 'hello');
    expect(lines.records()[0]).toMatchObject({
      level: 'info',
      time: '2030-01-02T03:04:05.000Z',
      name: 'paperbot',
      event: 'x',
      msg: 'hello',
    });
  });

  it('never prints a credential or a raw seed, however they are nested', () => {
    const { lines, log } = logger();
    const { credential: key, seedBase64 } = credential();
    const rawSeed = key.privateKey.revealSeed();
    log.info({ credential: key }, 'a credential');
    log.info({ key: key.privateKey }, 'a private key object');
    log.info({ private_key: seedBase64, seed: rawSeed }, 'raw values at the top');
    log.info(
      { request: { headers: { 'SVC-SIGNATURE': 'c2lnbmF0dXJl', authorization: 'Bearer t0ken' } } },
      'headers',
    );
    log.info({ a: { b: { c: { privateKey: seedBase64, admin_token: 'adm1n-t0ken' } } } }, 'deep');
    log.warn({ emulator: { adminToken: 'adm1n-t0ken' } }, 'admin');
    fromPino(log).error('through the runtime shape', { config: { seed: seedBase64 } });

    const text = lines.text;
    expect(lines.lines).toHaveLength(7);
    expect(text).not.toContain(seedBase64);
    expect(text).not.toContain(Buffer.from(rawSeed).toString('hex'));
    expect(text).not.toContain(`"seed":{"0":`);
    expect(text).not.toContain('c2lnbmF0dXJl');
    expect(text).not.toContain('t0ken');
    expect(text).not.toContain('adm1n');
    // What is left is useful: the credential's public parts, the redaction markers.
    const [first] = lines.records();
    expect(first?.credential).toMatchObject({ key_id: 'key_test_1', private_key: '[redacted]' });
    expect(first?.credential).toMatchObject({ public_key: encodeBase64(key.privateKey.publicKey) });
    expect(lines.records()[2]).toMatchObject({ private_key: '[redacted]', seed: '[redacted]' });
    expect(lines.records()[4]).toMatchObject({
      a: { b: { c: { privateKey: '[redacted]', admin_token: '[redacted]' } } },
    });
  });

  it('covers each secret name at depths 0 to 3', () => {
    const paths = redactPaths();
    for (const path of [
      'private_key',
      '*.seed',
      '*.*.signature',
      '*.*.*.authorization',
      '*["SVC-SIGNATURE"]',
    ]) {
      expect(paths).toContain(path);
    }
  });

  it('adapts pino to the runtime (message, fields) shape and honours the level', () => {
    const { lines, log } = logger('warn');
    const runtime = fromPino(log);
    runtime.info('dropped', { a: 1 });
    runtime.warn('kept', { a: 2 });
    runtime.error('no fields');
    expect(lines.records().map((record) => [record.level, record.msg, record.a])).toEqual([
      ['warn', 'kept', 2],
      ['error', 'no fields', undefined],
    ]);
  });
});

describe('readable line', () => {
  const base = { level: 'info', time: '2030-01-02T03:04:05.006Z', pid: 1, name: 'paperbot' };

  it('keeps a long event to one line of 120 columns, the order first, a report left to JSON', () => {
    const line = formatPrettyLine(
      JSON.stringify({
        ...base,
        component: 'bot',
        event: 'intent.accepted',
        strategy: 'mm',
        request_id: 'mm:0f8403e38a01:1',
        client_order_id: 'mm:0f8403e38a01:1',
        kind: 'place',
        market: 'BTC-PERP',
        side: 'buy',
        type: 'limit',
        price: '63997.5',
        quantity: '0.001',
        tag: 'mm-bid',
        order_id: '55f0ffbd-5b5b-4230-b4f4-c5996979229e',
        report: { missingLocally: [], foreignOrders: [], settlement: { resolved: [] }, ok: true },
        error: null,
        msg: 'intent submitted',
      }),
    );
    expect(line.endsWith('\n')).toBe(true);
    expect(line.split('\n')).toHaveLength(2);
    expect([...line.trimEnd()].length).toBeLessThanOrEqual(PRETTY_LINE_WIDTH);
    expect(line).toMatch(
      /^2030-01-02 03:04:05\.006 INFO {2}bot: intent submitted mm place buy limit 0\.001 BTC-PERP @ 63997\.5 #mm-bid request_id=/,
    );
    expect(line).not.toContain('error');
    expect(line).not.toContain('missingLocally');
  });

  it('shows an error by its code and message, and a message on one line', () => {
    const line = formatPrettyLine(
      JSON.stringify({
        ...base,
        level: 'error',
        component: 'reconciler',
        error: {
          type: 'Error',
          code: 'TRANSPORT_FAILURE',
          message: 'socket\nclosed',
          stack: 'at x',
        },
        msg: 'reconciliation\nfailed',
      }),
    );
    expect(line).toBe(
      '2030-01-02 03:04:05.006 ERROR reconciler: reconciliation failed error="TRANSPORT_FAILURE: socket closed"\n',
    );
  });
});
