/**
 * Runs every `ts` example of docs/client.md (those not marked `no-run`) as its own program, so
 * the documentation cannot rot. Each example starts its own emulator on a free loopback port.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const page = readFileSync(join(root, 'docs/client.md'), 'utf8');
// Inside the project (ignored by git), so the examples resolve packages like rxjs as users' do.
const cacheFolder = join(root, 'node_modules', '.cache');
mkdirSync(cacheFolder, { recursive: true });
const folder = mkdtempSync(join(cacheFolder, 'paperbot-docs-'));

afterAll(() => rmSync(folder, { recursive: true, force: true }));

interface Example {
  readonly heading: string;
  readonly code: string;
}

function examples(): Example[] {
  const found: Example[] = [];
  let heading = '';
  const lines = page.split('\n');
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index] as string;
    if (line.startsWith('## ')) heading = line.slice(3);
    if (line !== '```ts') continue;
    const body: string[] = [];
    for (index += 1; index < lines.length && lines[index] !== '```'; index += 1) {
      body.push(lines[index] as string);
    }
    found.push({ heading, code: body.join('\n') });
  }
  return found;
}

function run(file: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', file],
      { cwd: root, timeout: 60_000 },
      (error, stdout, stderr) => {
        done({
          code: error === null ? 0 : (error.code as number | null),
          stdout,
          stderr,
        });
      },
    );
  });
}

describe('docs/client.md examples', () => {
  const found = examples();

  it('has an example for each group of endpoints', () => {
    expect(found.map((example) => example.heading)).toEqual([
      'Public market data',
      'Account reads',
      'Orders',
      'Recovery',
      'Pagination',
      'The stream',
    ]);
  });

  for (const [index, example] of found.entries()) {
    it(`runs: ${example.heading}`, async () => {
      const file = join(folder, `example-${index}.mts`);
      writeFileSync(file, example.code.replaceAll("'./src/", `'${root}/src/`));
      const result = await run(file);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout.length).toBeGreaterThan(0);
    }, 60_000);
  }
});
