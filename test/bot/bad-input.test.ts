/**
 * `paperbot run` refuses bad config and key files at once, with exit code 2, the file's path,
 * and nothing from the key file quoted: a FIFO (which used to block the open, deaf to signals),
 * an unknown field whose name is the private key, service URLs the client would refuse, and a
 * YAML alias bomb. And `paperbot status` gives up on a server that trickles or floods.
 */
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { loadVenueKeyFile } from '../../src/cli/bot/venue-key.ts';
import { RUN_EXIT, registerRunCommand } from '../../src/cli/commands/run.ts';
import { RECORD_EXIT, registerRecordCommand } from '../../src/cli/commands/record.ts';
import { registerStatusCommand } from '../../src/cli/commands/status.ts';
import { systemClock, type TimerHandle } from '../../src/core/clock.ts';
import { Credential, encodeBase64, PrivateKey, writeKeyFile } from '../../src/signing/index.ts';

const directory = mkdtempSync(join(tmpdir(), 'paperbot-bad-input-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const seed = Uint8Array.from({ length: 32 }, (_, index) => (index * 53 + 7) & 0xff);
const seedBase64 = encodeBase64(seed);
const privateKey = PrivateKey.fromSeed(seed);

function file(name: string, text: string, mode = 0o644): string {
  const path = join(directory, name);
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
}

function botConfigWithKey(name: string, keyPath: string): string {
  return file(
    `${name}.yaml`,
    `venue: { key_file: ${JSON.stringify(keyPath)} }\nstrategies: [{ id: a, name: market-maker }]\njournal: { path: ${JSON.stringify(join(directory, `${name}.sqlite`))} }\nmetrics: { enabled: false }\n`,
  );
}

async function run(configPath: string): Promise<{ code: number; stderr: string }> {
  const errors: string[] = [];
  const program = new Command('paperbot').exitOverride();
  registerRunCommand(program, {
    printError: (text) => errors.push(text),
    exit: () => {},
    onSignal: () => () => {},
  });
  let code = 0;
  try {
    await program.parseAsync(['node', 'paperbot', 'run', '--config', configPath]);
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    code = error.exitCode;
  }
  return { code, stderr: errors.join('') };
}

function keyDocument(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    version: 1,
    key_id: 'key_bad_input',
    account_id: 'acct_1',
    api_base_url: 'http://127.0.0.1:8787',
    ws_url: 'ws://127.0.0.1:8787/v1/ws',
    private_key: seedBase64,
    public_key: encodeBase64(privateKey.publicKey),
    scopes: ['account:read', 'orders:read', 'fills:read', 'orders:write'],
    created_at: '2026-01-01T00:00:00.000Z',
    expires_at: null,
    ...overrides,
  };
}

describe('paperbot run with a bad key file', () => {
  it('refuses a FIFO at once with exit code 2, never waiting for a writer', async () => {
    const fifo = join(directory, 'fifo.key.json');
    execFileSync('mkfifo', ['-m', '600', fifo]);
    const config = botConfigWithKey('fifo', fifo);
    const { code, stderr } = await run(config);
    expect(code).toBe(RUN_EXIT.invalidConfig);
    expect(stderr).toContain('KEY_FILE_INVALID');
    expect(stderr).toContain(`${fifo} is not a regular file`);
    expect(existsSync(join(directory, 'fifo.sqlite'))).toBe(false);
  });

  it('never shows an unknown field whose name is the private key', async () => {
    // Unknown fields are kept with a warning that counts them; a bad URL then stops the run
    // before anything connects, and neither message quotes a field name.
    const document = keyDocument({
      [seedBase64]: true,
      [`${seedBase64}x`]: 1,
      ws_url: 'ws://127.0.0.1:8787/v1/ws?token=1',
    });
    const keyPath = file('pasted.key.json', JSON.stringify(document), 0o600);
    const warnings: string[] = [];
    await expect(loadVenueKeyFile(keyPath, (message) => warnings.push(message))).rejects.toThrow(
      /ws_url/,
    );
    expect(warnings).toEqual([
      `key file ${keyPath} has 2 fields paperbot does not know; kept, not used`,
    ]);
    const { code, stderr } = await run(botConfigWithKey('pasted', keyPath));
    expect(code).toBe(RUN_EXIT.invalidConfig);
    expect(stderr).toContain(`key file ${keyPath} is invalid: ws_url`);
    // Any ten consecutive characters of the seed count as a leak.
    for (let at = 0; at + 10 <= seedBase64.length; at += 1) {
      expect(stderr).not.toContain(seedBase64.slice(at, at + 10));
      expect(warnings.join('')).not.toContain(seedBase64.slice(at, at + 10));
    }
  });

  it.each([
    ['api_base_url', 'http://203.0.113.7:8787', 'ws://127.0.0.1:8787/v1/ws'],
    ['api_base_url', 'http://trader:hunter22@127.0.0.1:8787', 'ws://127.0.0.1:8787/v1/ws'],
    ['ws_url', 'http://127.0.0.1:8787', 'ws://127.0.0.1:8787/v1/ws?token=1'],
  ])(
    'refuses a %s the client would refuse with exit code 2 and the path',
    async (field, api, ws) => {
      const keyPath = join(
        directory,
        `url-${field}-${encodeURIComponent(api + ws).length}.key.json`,
      );
      const credential = Credential.create({
        keyId: 'key_bad_url',
        accountId: 'acct_1',
        apiBaseUrl: api,
        wsUrl: ws,
        scopes: ['account:read'],
        createdAt: '2026-01-01T00:00:00.000Z',
        expiresAt: null,
        privateKey,
      });
      await writeKeyFile(keyPath, credential);
      const { code, stderr } = await run(botConfigWithKey(`url-${field}`, keyPath));
      expect(code).toBe(RUN_EXIT.invalidConfig);
      expect(stderr).toContain(`KEY_FILE_INVALID: key file ${keyPath} is invalid: ${field}: `);
      expect(stderr).not.toContain('hunter22');
    },
  );
});

describe('paperbot record with a bad key file', () => {
  it('refuses a FIFO at once with exit code 2 and the path', async () => {
    const fifo = join(directory, 'record-fifo.key.json');
    execFileSync('mkfifo', ['-m', '600', fifo]);
    const config = file('record.yaml', `venue: { key_file: ${JSON.stringify(fifo)} }\n`);
    const errors: string[] = [];
    const program = new Command('paperbot').exitOverride();
    registerRecordCommand(program, {
      print: () => {},
      printError: (text) => errors.push(text),
      interactive: false,
    });
    let code = 0;
    try {
      await program.parseAsync([
        'node',
        'paperbot',
        'record',
        '--config',
        config,
        '--out',
        join(directory, 'record-out'),
        '--duration',
        '1s',
      ]);
    } catch (error) {
      if (!(error instanceof CommanderError)) throw error;
      code = error.exitCode;
    }
    expect(code).toBe(RECORD_EXIT.invalidArguments);
    expect(errors.join('')).toContain(`${fifo} is not a regular file`);
  });
});

describe('paperbot run with a YAML alias bomb', () => {
  it('exits 2 naming the file, without expanding the aliases', async () => {
    let text = 'a: &a [x, x, x, x, x, x, x, x, x]\n';
    let previous = 'a';
    for (const name of 'bcdefghi') {
      text += `${name}: &${name} [${Array(9).fill(`*${previous}`).join(', ')}]\n`;
      previous = name;
    }
    const path = file('bomb.yaml', text);
    const { code, stderr } = await run(path);
    expect(code).toBe(RUN_EXIT.invalidConfig);
    expect(stderr).toContain(`invalid config ${path} (1 problem)`);
    expect(stderr).toContain('(yaml): Excessive alias count');
  });
});

describe('paperbot emulator with a bad config', () => {
  it('exits 2 naming the file for an alias bomb', async () => {
    let text = 'a: &a [x, x, x, x, x, x, x, x, x]\n';
    let previous = 'a';
    for (const name of 'bcdefghi') {
      text += `${name}: &${name} [${Array(9).fill(`*${previous}`).join(', ')}]\n`;
      previous = name;
    }
    const path = file('emulator-bomb.yaml', text);
    const written: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    let code: number;
    try {
      code = await main(['node', 'paperbot', 'emulator', '--port', '0', '--config', path]);
    } finally {
      spy.mockRestore();
    }
    expect(code).toBe(2);
    expect(written.join('')).toContain(
      `emulator config ${path} is not valid YAML: Excessive alias count`,
    );
  });
});

describe('paperbot status against a misbehaving server', () => {
  const servers: Server[] = [];
  afterAll(async () => {
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
    const server = createServer(handler);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async function status(url: string): Promise<{ code: string; message: string }> {
    const program = new Command('paperbot').exitOverride();
    registerStatusCommand(program, {
      print: () => {},
      limits: { timeoutMs: 300, maxBytes: 1024 * 1024 },
    });
    try {
      await program.parseAsync(['node', 'paperbot', 'status', '--url', url]);
    } catch (error) {
      return error as { code: string; message: string };
    }
    throw new Error('expected status to fail');
  }

  it('gives up on a server that trickles its answer forever, at the total timeout', async () => {
    let timer: TimerHandle | undefined;
    let trickled = 0;
    const url = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      const drip = () => {
        if (response.destroyed) return;
        response.write(' ');
        trickled += 1;
        timer = systemClock.setTimeout(drip, 10);
      };
      drip();
    });
    const error = await status(url);
    systemClock.clearTimeout(timer);
    expect(error.code).toBe('STATUS_UNAVAILABLE');
    expect(error.message).toContain('no complete answer within 300 ms');
    // A per-chunk timeout never fires on a drip; the total one did, long before 10 s of it.
    expect(trickled).toBeGreaterThan(0);
    expect(trickled).toBeLessThan(1000);
  });

  it('gives up on a 100 MB answer at the size cap, reading only a little of it', async () => {
    const total = 100 * 1024 * 1024;
    let written = 0;
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const url = await serve((_request, response) => {
      response.writeHead(200, {
        'content-type': 'application/json',
        'content-length': String(total),
      });
      const pump = () => {
        while (written < total && !response.destroyed) {
          written += chunk.length;
          if (!response.write(chunk)) {
            response.once('drain', pump);
            return;
          }
        }
        response.end();
      };
      response.on('close', () => response.off('drain', pump));
      pump();
    });
    const error = await status(url);
    expect(error.code).toBe('STATUS_UNAVAILABLE');
    expect(error.message).toContain('larger than 1048576 bytes');
    expect(written).toBeLessThan(total / 4);
  });
});
