/**
 * A recording proves itself: its manifest (version 2) says how many records, bytes and which
 * SHA-256 its events file has, and a replay checks that, the time order and the values of every
 * record (not only the first 1,000) as it reads. Each damage below used to replay in silence;
 * now it stops the read with RECORDING_DAMAGED naming what is wrong, and with the damage policy
 * `skip` (`--allow-damaged`) the read goes on and the report names what was skipped.
 */
import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBacktestCommand } from '../../src/cli/commands/backtest.ts';
import { registerVerifyCommand } from '../../src/cli/commands/verify.ts';
import {
  type DamagePolicy,
  openRecording,
  readManifest,
  readRecording,
  type RecordingSummary,
  writeManifest,
} from '../../src/replay/format/index.ts';
import type { BacktestReport } from '../../src/replay/report/report.ts';
import {
  marketMakerDocument,
  recordSession,
  runCommand,
  temporaryFolder,
} from './backtest/helpers.ts';

let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let plain: string;
let gzip: string;

beforeAll(async () => {
  folder = await temporaryFolder('damaged');
  plain = join(folder.path, 'plain');
  gzip = join(folder.path, 'gzip');
  await recordSession(plain, { durationMs: 4 * 60_000 });
  await recordSession(gzip, { durationMs: 4 * 60_000, compression: 'gzip' });
}, 120_000);

afterAll(async () => {
  await folder.remove();
});

let copies = 0;

/** A copy of a pristine session to damage. */
async function copyOf(source: string): Promise<string> {
  const target = join(folder.path, `copy-${++copies}`);
  await mkdir(target);
  for (const name of await readdir(source)) {
    if (name === 'events.cache') continue;
    await copyFile(join(source, name), join(target, name));
  }
  return target;
}

async function readAll(
  directory: string,
  damage: DamagePolicy = 'refuse',
): Promise<{ records: number; summary: RecordingSummary }> {
  const reader = readRecording(await openRecording(directory), { damage, cache: 'off' });
  let records = 0;
  for await (const batch of reader.batches()) records += batch.length;
  return { records, summary: reader.summary! };
}

/** The events file's lines, and a writer that puts them back. */
async function linesOf(directory: string) {
  const path = join(directory, 'events.jsonl');
  const lines = (await readFile(path, 'utf8')).split('\n');
  return { lines, save: () => writeFile(path, lines.join('\n')) };
}

/** The index of the first line after record 1,000 that is a trade matching `test`. */
function tradeAfter1000(lines: readonly string[], test: (line: string) => boolean): number {
  const index = lines.findIndex(
    (line, at) => at > 1_000 && line.includes('"k":"trade"') && test(line),
  );
  expect(index).toBeGreaterThan(1_000);
  return index;
}

describe('a recording that is not what its manifest claims', () => {
  it('the manifest (version 2) holds records, bytes, SHA-256, first and last time', async () => {
    const manifest = await readManifest(plain);
    expect(manifest.version).toBe(2);
    expect(manifest.counts.total).toBeGreaterThan(1_200);
    expect(manifest.files?.['events.jsonl']).toMatchObject({
      records: manifest.counts.total,
      first_t: manifest.time_range.first_t,
      last_t: manifest.time_range.last_t,
    });
    const sound = await readAll(plain);
    expect(sound.records).toBe(manifest.counts.total);
    expect(sound.summary.damage).toMatchObject({ problems: [], skipped: [], notes: [] });
  });

  it.each([
    ['cut at 50 %', 0.5],
    ['cut at 99.9 %', 0.999],
  ])('gzip %s: refused before a record is replayed', async (_name, fraction) => {
    const directory = await copyOf(gzip);
    const path = join(directory, 'events.jsonl.gz');
    const size = (await readFile(path)).length;
    await truncate(path, Math.floor(size * fraction));
    await expect(readAll(directory)).rejects.toMatchObject({
      code: 'RECORDING_DAMAGED',
      message: expect.stringContaining('events.jsonl.gz is') as unknown,
    });
    const skipped = await readAll(directory, 'skip');
    expect(skipped.summary.damage.problems.join('\n')).toMatch(
      /cut short[\s\S]*torn tail|torn tail[\s\S]*cut short/,
    );
    expect(skipped.summary.damage.problems.join('\n')).toContain('records, the manifest says');
  });

  it('a torn last line and a file truncated to 40 %: refused, named', async () => {
    for (const cut of ['torn', 'forty'] as const) {
      const directory = await copyOf(plain);
      const path = join(directory, 'events.jsonl');
      const size = (await readFile(path)).length;
      await truncate(path, cut === 'torn' ? size - 7 : Math.floor(size * 0.4));
      await expect(readAll(directory)).rejects.toMatchObject({
        code: 'RECORDING_DAMAGED',
        message: expect.stringContaining('cut short') as unknown,
      });
      const skipped = await readAll(directory, 'skip');
      expect(skipped.summary.damage.problems.join('\n')).toContain('torn tail (unterminated-line');
    }
  });

  it('a record whose time goes backwards (after record 1,000, same size): refused at its line', async () => {
    const directory = await copyOf(plain);
    const { lines, save } = await linesOf(directory);
    const index = 1_100;
    const t = (JSON.parse(lines[index]!) as { t: number }).t;
    lines[index] = lines[index]!.replace(`"t":${t}`, `"t":${t - 100_000}`);
    await save();
    await expect(readAll(directory)).rejects.toMatchObject({
      code: 'RECORDING_DAMAGED',
      message: expect.stringContaining(`line ${index + 1}: t ${t - 100_000} is before`) as unknown,
    });
    const skipped = await readAll(directory, 'skip');
    expect(skipped.summary.damage.skipped).toEqual([
      expect.objectContaining({ reason: 'time going backwards', count: 1, firstLine: index + 1 }),
    ]);
  });

  it('a bad price after record 1,000 (same size): refused at its line', async () => {
    const directory = await copyOf(plain);
    const { lines, save } = await linesOf(directory);
    const index = tradeAfter1000(lines, () => true);
    lines[index] = lines[index]!.replace(/"price":"\d/, '"price":"x');
    await save();
    await expect(readAll(directory)).rejects.toMatchObject({
      code: 'RECORDING_DAMAGED',
      message: expect.stringContaining(`line ${index + 1}: d.price "x`) as unknown,
    });
  });

  it('a negative quantity after record 1,000: refused; with skip, the report says what was skipped', async () => {
    const directory = await copyOf(plain);
    const { lines, save } = await linesOf(directory);
    const index = tradeAfter1000(lines, (line) => line.includes('"quantity":"0.'));
    lines[index] = lines[index]!.replace('"quantity":"0.', '"quantity":"-.');
    await save();
    await expect(readAll(directory)).rejects.toMatchObject({
      code: 'RECORDING_DAMAGED',
      message: expect.stringContaining(`line ${index + 1}: d.quantity "-.`) as unknown,
    });
    const manifest = await readManifest(directory);
    const skipped = await readAll(directory, 'skip');
    expect(skipped.records).toBe(manifest.counts.total - 1);
    expect(skipped.summary.damage.skipped).toEqual([
      expect.objectContaining({ reason: 'invalid values', count: 1, firstLine: index + 1 }),
    ]);
    expect(skipped.summary.damage.problems).toEqual([
      "events.jsonl's SHA-256 is not the manifest's (the file changed after it was written)",
    ]);

    // The whole path: backtest refuses it, and with --allow-damaged the report names it.
    const config = join(folder.path, 'negative.yaml');
    await writeFile(config, stringify(marketMakerDocument([directory])));
    const backtest = (args: readonly string[]) =>
      runCommand(
        (program, print, printError) =>
          registerBacktestCommand(program, { print, printError, interactive: false }),
        ['backtest', '--config', config, '--json', ...args],
      );
    const refused = await backtest([]);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('is not what its manifest claims');
    expect(refused.err).toContain(`line ${index + 1}: d.quantity`);
    const allowed = await backtest(['--allow-damaged']);
    expect(allowed.code).toBe(0);
    const report = JSON.parse(allowed.out) as BacktestReport;
    expect(report.data_damage).toEqual([
      `${directory}: events.jsonl's SHA-256 is not the manifest's (the file changed after it was written)`,
      expect.stringContaining(
        `${directory}: skipped 1 record (invalid values; first on line ${index + 1}: d.quantity "-.`,
      ),
    ]);
    expect(allowed.err).toContain('skipped 1 record');

    // And `paperbot verify` says so without replaying; the pristine session passes.
    const verify = (directoryToCheck: string) =>
      runCommand(
        (program, print, printError) => registerVerifyCommand(program, { print, printError }),
        ['verify', directoryToCheck],
      );
    const damaged = await verify(directory);
    expect(damaged.code).toBe(1);
    expect(damaged.out).toContain('skipped 1 record (invalid values');
    expect(damaged.out).toContain('DAMAGED');
    const sound = await verify(plain);
    expect(sound.code).toBe(0);
    expect(sound.out).toContain('OK: as its manifest claims');
  }, 120_000);

  it('a cache built from the sound file is not used once the file is damaged in place', async () => {
    const directory = await copyOf(plain);
    const reader = readRecording(await openRecording(directory));
    for await (const _batch of reader.batches()) {
      // drain: builds the cache
    }
    expect(reader.summary?.cache).toBe('built');
    const { lines, save } = await linesOf(directory);
    const index = tradeAfter1000(lines, () => true);
    lines[index] = lines[index]!.replace(/"price":"\d/, '"price":"x');
    await save();
    await expect(
      (async () => {
        const again = readRecording(await openRecording(directory));
        for await (const _batch of again.batches()) {
          // drain
        }
      })(),
    ).rejects.toMatchObject({ code: 'RECORDING_DAMAGED' });
  });

  it('a FIFO or /dev/zero handed to backtest is refused at once, naming it', async () => {
    const events = await copyOf(plain);
    await rm(join(events, 'events.jsonl'));
    execFileSync('mkfifo', ['-m', '600', join(events, 'events.jsonl')]);
    const manifest = await copyOf(plain);
    await rm(join(manifest, 'manifest.json'));
    execFileSync('mkfifo', ['-m', '600', join(manifest, 'manifest.json')]);
    const config = join(folder.path, 'devices.yaml');
    await writeFile(config, stringify(marketMakerDocument([plain])));
    for (const [data, expected] of [
      [events, `events file ${join(events, 'events.jsonl')} is not a regular file`],
      [manifest, `recording manifest ${join(manifest, 'manifest.json')} is not a regular file`],
      ['/dev/zero', '/dev/zero/manifest.json'],
    ] as const) {
      const result = await runCommand(
        (program, print, printError) =>
          registerBacktestCommand(program, { print, printError, interactive: false }),
        ['backtest', '--config', config, '--data', data],
      );
      expect(result.code, data).toBe(1);
      expect(result.err, data).toContain(expected);
    }
  });

  it('a version 1 recording (no checksum) still reads, with a note', async () => {
    const directory = await copyOf(plain);
    const { files: _files, ...manifest } = await readManifest(directory);
    await writeManifest(directory, { ...manifest, version: 1 });
    const read = await readAll(directory);
    expect(read.records).toBe(manifest.counts.total);
    expect(read.summary.damage.problems).toEqual([]);
    expect(read.summary.damage.notes).toEqual([
      expect.stringContaining('is a version 1 recording: its manifest holds no checksum'),
    ]);
  });
});
