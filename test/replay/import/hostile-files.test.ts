/**
 * Files handed to `paperbot import` that are not what they seem: each is refused with a clear
 * error naming the file (no crash, no hang, no memory grown with the input), and a refused
 * import leaves no `.partial-import/` folder behind.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerImportCommand } from '../../../src/cli/commands/import.ts';
import { importRecording, parseMarketSpec } from '../../../src/replay/import/index.ts';
import { readManifest } from '../../../src/replay/format/index.ts';
import { runCommand, temporaryFolder } from '../backtest/helpers.ts';
import { START_MS } from './fixtures.ts';

let folder: Awaited<ReturnType<typeof temporaryFolder>>;

beforeAll(async () => {
  folder = await temporaryFolder('import-hostile');
});

afterAll(async () => {
  await folder.remove();
});

const MARKET = ['--market', 'BTC-PERP', '--tick', '0.1', '--step', '0.001'];

function paperbotImport(args: readonly string[]) {
  return runCommand(
    (program, print, printError) => registerImportCommand(program, { print, printError }),
    ['import', ...args],
  );
}

function tradesCsv(rows: number): string {
  const lines = ['timestamp,price,quantity,side'];
  for (let index = 0; index < rows; index++) {
    lines.push(`${START_MS + index * 1000},100.${index % 10},0.01${index % 2},buy`);
  }
  return `${lines.join('\n')}\n`;
}

async function leftovers(): Promise<string[]> {
  return (await readdir(folder.path)).filter((name) => name.endsWith('.partial-import'));
}

describe('paperbot import with hostile files', () => {
  it('refuses a damaged .csv.gz with a clean error and removes its partial output', async () => {
    const gzip = gzipSync(Buffer.from(tradesCsv(5_000)));
    // Invalid deflate block type right after the 10-byte gzip header: Z_DATA_ERROR, which used
    // to crash the command (an unhandled stream error) and leave .partial-import/ behind.
    gzip[10] = 0xff;
    const path = join(folder.path, 'damaged.csv.gz');
    await writeFile(path, gzip);
    const out = join(folder.path, 'damaged-out');
    const result = await paperbotImport(['--out', out, ...MARKET, '--trades', path]);
    expect(result.code).toBe(1);
    expect(result.err).toContain(`${path} is a damaged gzip stream`);
    expect(existsSync(out)).toBe(false);
    expect(await leftovers()).toEqual([]);
  });

  it('refuses a cut .csv.gz as incomplete', async () => {
    const gzip = gzipSync(Buffer.from(tradesCsv(5_000)));
    const path = join(folder.path, 'cut.csv.gz');
    await writeFile(path, gzip.subarray(0, Math.floor(gzip.length * 0.9)));
    const result = await paperbotImport([
      '--out',
      join(folder.path, 'cut-out'),
      ...MARKET,
      '--trades',
      path,
    ]);
    expect(result.code).toBe(1);
    expect(result.err).toContain(`${path} is a gzip stream cut short`);
    expect(await leftovers()).toEqual([]);
  });

  it('refuses a gzip bomb at the decompressed cap (lowered here), small file, no partial output', async () => {
    // One line of 8 MiB of digits in a file of a few KiB.
    const bomb = gzipSync(
      Buffer.concat([Buffer.from('timestamp,price,quantity,side\n'), Buffer.alloc(8 << 20, 0x31)]),
    );
    expect(bomb.length).toBeLessThan(64 * 1024);
    const path = join(folder.path, 'bomb.csv.gz');
    await writeFile(path, bomb);
    const out = join(folder.path, 'bomb-out');
    const market = parseMarketSpec(
      { market_id: 'BTC-PERP', price_tick: '0.1', quantity_step: '0.001' },
      'test',
    );
    await expect(
      importRecording({
        out,
        market,
        compression: 'none',
        inputs: [
          {
            kind: 'trades',
            path,
            layout: {
              header: true,
              columns: {
                timestamp: 'timestamp',
                price: 'price',
                quantity: 'quantity',
                side: 'side',
              },
            },
            timeUnit: 'auto',
            sort: false,
          },
        ],
        csvLimits: { maxDecompressedBytes: 1 << 20, maxRowCharacters: 64 << 20 },
      }),
    ).rejects.toMatchObject({
      code: 'IMPORT_READ_FAILED',
      message: `${path} decompresses to more than ${1 << 20} bytes`,
    });
    expect(existsSync(out)).toBe(false);
    expect(await leftovers()).toEqual([]);
  });

  it('refuses a row longer than the row cap instead of holding it', async () => {
    const path = join(folder.path, 'long-row.csv');
    await writeFile(path, `timestamp,price,quantity,side\n${'9'.repeat(2 << 20)},1,1,buy\n`);
    const result = await paperbotImport([
      '--out',
      join(folder.path, 'long-out'),
      ...MARKET,
      '--trades',
      path,
    ]);
    expect(result.code).toBe(1);
    expect(result.err).toContain(`${path}: a row is longer than ${1 << 20} characters`);
  });

  it.each([
    ['/dev/zero', () => '/dev/zero'],
    [
      'a FIFO',
      () => {
        const path = join(folder.path, 'trades.fifo');
        execFileSync('mkfifo', ['-m', '600', path]);
        return path;
      },
    ],
  ])('refuses %s at once, naming it', async (_name, make) => {
    const path = make();
    const result = await paperbotImport([
      '--out',
      join(folder.path, 'device-out'),
      ...MARKET,
      '--trades',
      path,
    ]);
    expect(result.code).not.toBe(0);
    expect(result.err).toContain(`CSV file ${path} is not a regular file`);
    expect(await leftovers()).toEqual([]);
  });

  it('drops a UTF-8 byte order mark before matching the header', async () => {
    const path = join(folder.path, 'bom.csv');
    await writeFile(path, `\uFEFF${tradesCsv(10)}`);
    const out = join(folder.path, 'bom-out');
    const result = await paperbotImport(['--out', out, ...MARKET, '--trades', path]);
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    expect((await readManifest(out)).counts.by_kind.trade).toBe(10);
  });

  it.each([
    ['an empty file', ''],
    ['a header alone', 'timestamp,price,quantity,side\n'],
  ])('refuses %s with a non-zero exit and a clear message', async (name, text) => {
    const path = join(folder.path, `empty-${name.length}.csv`);
    await writeFile(path, text);
    const out = join(folder.path, `empty-out-${name.length}`);
    const result = await paperbotImport(['--out', out, ...MARKET, '--trades', path]);
    expect(result.code).toBe(1);
    expect(result.err).toContain(`${path}: no data rows`);
    expect(existsSync(out)).toBe(false);
    expect(await leftovers()).toEqual([]);
  });

  it.each([
    ['longer than 40 characters', 'M'.repeat(41)],
    ['shorter than 3 characters', 'AB'],
  ])('refuses a --market %s, as backtest would', async (_name, id) => {
    const path = join(folder.path, 'market-id.csv');
    await writeFile(path, tradesCsv(3));
    const out = join(folder.path, `market-out-${id.length}`);
    const result = await paperbotImport([
      '--out',
      out,
      '--market',
      id,
      '--tick',
      '0.1',
      '--step',
      '0.001',
      '--trades',
      path,
    ]);
    expect(result.code).toBe(2);
    expect(result.err).toContain('market_id');
    expect(existsSync(out)).toBe(false);
  });

  it('refuses a market file id past the limit, and a market file that is a FIFO', async () => {
    const marketFile = join(folder.path, 'market.yaml');
    await writeFile(
      marketFile,
      `market_id: ${'X'.repeat(41)}\nprice_tick: '0.1'\nquantity_step: '0.001'\n`,
    );
    const path = join(folder.path, 'market-file.csv');
    await writeFile(path, tradesCsv(3));
    const long = await paperbotImport([
      '--out',
      join(folder.path, 'mf-out'),
      '--market-file',
      marketFile,
      '--trades',
      path,
    ]);
    expect(long.code).toBe(2);
    expect(long.err).toContain(`${marketFile}: market_id`);
    const fifo = join(folder.path, 'market.fifo');
    execFileSync('mkfifo', ['-m', '600', fifo]);
    const piped = await paperbotImport([
      '--out',
      join(folder.path, 'mf-out2'),
      '--market-file',
      fifo,
      '--trades',
      path,
    ]);
    expect(piped.code).toBe(2);
    expect(piped.err).toContain(`market file ${fifo} is not a regular file`);
  });

  it('writes the version 2 manifest: records, bytes and SHA-256 of its events file', async () => {
    const path = join(folder.path, 'good.csv');
    await writeFile(path, tradesCsv(20));
    const out = join(folder.path, 'good-out');
    const result = await paperbotImport(['--out', out, ...MARKET, '--trades', path, '--gzip']);
    expect(result.code).toBe(0);
    const manifest = await readManifest(out);
    expect(manifest.version).toBe(2);
    expect(manifest.files?.['events.jsonl.gz']).toMatchObject({
      records: manifest.counts.total,
      first_t: manifest.time_range.first_t,
      last_t: manifest.time_range.last_t,
    });
    expect(manifest.files?.['events.jsonl.gz']?.sha256).toMatch(/^[0-9a-f]{64}$/);
  });
});
