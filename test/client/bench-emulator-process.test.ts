/**
 * The pipeline bench's emulator in its own process (test/bench/emulator-process.ts): it starts,
 * leaves a private key file (mode 0600) the bench loads, answers the real client's signed calls
 * with the bench's settings, reports its CPU time, serves the bare floor servers (node:http and
 * raw TCP), and exits when closed.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { RestClient } from '../../src/client/index.ts';
import { type EmulatorProcess, startEmulatorProcess } from '../bench/emulator-process.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('the bench emulator process', () => {
  it('serves signed calls with the bench settings, reports its CPU and exits on close', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'paperbot-bench-test-'));
    cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
    const emulator: EmulatorProcess = await startEmulatorProcess(folder);
    cleanups.push(() => emulator.close());

    // The key travels as a private file, never over IPC.
    const [keyFile] = readdirSync(folder);
    expect(keyFile).toBe('bench-key.json');
    expect(statSync(join(folder, keyFile!)).mode & 0o777).toBe(0o600);
    expect(emulator.pid).not.toBe(process.pid);

    const rest = new RestClient({ credential: emulator.credential });
    cleanups.push(() => rest.close());
    const account = await rest.getAccount();
    // The bench's starting balance, not the emulator's default.
    expect(Number(account.total_equity)).toBe(100_000_000);

    const floor = new Pool(emulator.floorUrl, { connections: 1 });
    cleanups.push(() => floor.close());
    const answer = await floor.request({ path: '/floor', method: 'POST', body: '{}' });
    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(await answer.body.text())).toMatchObject({ floor: true });

    // The raw TCP floor writes a whole, valid HTTP/1.1 answer: an HTTP client reads it.
    const tcpFloor = new Pool(`http://127.0.0.1:${emulator.tcpFloorPort}`, { connections: 1 });
    cleanups.push(() => tcpFloor.close());
    for (let request = 0; request < 2; request++) {
      const raw = await tcpFloor.request({ path: '/floor', method: 'POST', body: '{}' });
      expect(raw.statusCode).toBe(200);
      expect(JSON.parse(await raw.body.text())).toMatchObject({ floor: true });
    }

    const first = await emulator.cpuMs();
    await rest.getAccount();
    expect(await emulator.cpuMs()).toBeGreaterThanOrEqual(first);
    expect(first).toBeGreaterThan(0);

    await emulator.close();
    // Gone: signal 0 only checks that the process exists.
    expect(() => process.kill(emulator.pid, 0)).toThrow();
    await expect(rest.getAccount({ timeoutMs: 2_000 })).rejects.toMatchObject({
      code: expect.any(String),
    });
  });
});
