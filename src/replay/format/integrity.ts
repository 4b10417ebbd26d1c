/**
 * A recording proves itself: what a reader checks against what the manifest claims.
 *
 * - before reading: the events file's size against the manifest's `files` entry (a file cut
 *   short, or with bytes added, is caught before a record is replayed);
 * - every record as it is read: time never goes backwards, and the values a replay trades on
 *   are sound (`recordValueProblem`), not only the first 1,000;
 * - at the end: records read, bytes and SHA-256 against the manifest, and no torn tail.
 *
 * A complete recording that is not what it claims is refused (`RECORDING_DAMAGED`) unless the
 * policy is `skip`: then damaged records are dropped and every problem is kept for the report.
 * An interrupted recording (`complete: false`) has no `files` entry and may end in a torn
 * tail; that is a note, not damage. A version 1 recording has no checksum: a note says so.
 */
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { PaperbotError } from '../../core/errors.ts';
import type { ReadSummary } from './event-log-reader.ts';
import type { FileIntegrity, RecordingManifest } from './manifest.ts';
import { type RecordedEvent, recordValueProblem } from './records.ts';

/** `refuse`: stop at the first problem; `skip`: drop damaged records and report them. */
export type DamagePolicy = 'refuse' | 'skip';

export interface SkippedRecords {
  readonly reason: string;
  readonly count: number;
  /** The first such record's line in the events file. */
  readonly firstLine: number;
  /** What was wrong with the first one. */
  readonly example: string;
}

export interface DamageReport {
  readonly recording: string;
  /** What is not as the manifest claims (empty for a sound recording). */
  readonly problems: readonly string[];
  /** Records read but not replayed, by reason. */
  readonly skipped: readonly SkippedRecords[];
  /** Things worth knowing that are not damage (an interrupted or version 1 recording). */
  readonly notes: readonly string[];
}

export function damageCount(report: DamageReport): number {
  return report.skipped.reduce((sum, entry) => sum + entry.count, 0);
}

/** True when the report holds damage (problems or skipped records), not only notes. */
export function isDamaged(report: DamageReport): boolean {
  return report.problems.length > 0 || report.skipped.length > 0;
}

export class RecordingCheck {
  private readonly problems: string[] = [];
  private readonly notes: string[] = [];
  private readonly skipped = new Map<
    string,
    { count: number; firstLine: number; example: string }
  >();
  private lastT = Number.NEGATIVE_INFINITY;
  private readonly file: FileIntegrity | null;

  constructor(
    private readonly directory: string,
    private readonly manifest: RecordingManifest,
    private readonly eventsPath: string,
    private readonly policy: DamagePolicy,
  ) {
    this.file = manifest.files?.[manifest.events_file] ?? null;
    if (manifest.version === 1) {
      this.notes.push(
        `${directory} is a version 1 recording: its manifest holds no checksum, so only its records are checked`,
      );
    } else if (!manifest.complete) {
      this.notes.push(
        `${directory} was not closed cleanly (complete: false): its counts may lag its events file`,
      );
    }
  }

  /** Whether the manifest says what the events file must be (size, records, checksum). */
  get hasIntegrity(): boolean {
    return this.file !== null;
  }

  /** The events file's size against the manifest, before a record is read. */
  async checkSize(): Promise<void> {
    if (this.file === null) return;
    const size = (await stat(this.eventsPath)).size;
    if (size !== this.file.bytes) {
      this.problem(
        `${basename(this.eventsPath)} is ${size} bytes, the manifest says ${this.file.bytes} (${size < this.file.bytes ? 'cut short' : 'changed'})`,
      );
    }
  }

  /** Checks one record in file order: false when it is to be skipped (policy `skip`). */
  readonly checkRecord = (record: RecordedEvent, line: number): boolean => {
    const problem = recordValueProblem(record);
    if (problem !== null) return this.skip('invalid values', line, problem);
    if (record.t < this.lastT) {
      return this.skip(
        'time going backwards',
        line,
        `t ${record.t} is before the previous record's ${this.lastT}`,
      );
    }
    this.lastT = record.t;
    return true;
  };

  /** What the whole read found against the manifest: records, bytes, checksum, torn tail. */
  finish(summary: ReadSummary, digest: { readonly sha256: string; readonly size: number } | null) {
    const name = basename(this.eventsPath);
    if (summary.tornTail !== null) {
      const tail = summary.tornTail;
      const text = `${name} ends in a torn tail (${tail.reason}, ${tail.droppedBytes} bytes dropped after byte ${tail.offset})`;
      if (this.manifest.complete) this.problem(text);
      else this.notes.push(text);
    }
    if (this.file !== null) {
      if (summary.records !== this.file.records) {
        this.problem(
          `${name} holds ${summary.records} records, the manifest says ${this.file.records}`,
        );
      }
      if (digest !== null && digest.sha256 !== this.file.sha256) {
        this.problem(
          `${name}'s SHA-256 is not the manifest's (the file changed after it was written)`,
        );
      }
    } else if (this.manifest.complete && summary.records !== this.manifest.counts.total) {
      this.problem(
        `${name} holds ${summary.records} records, the manifest counts ${this.manifest.counts.total}`,
      );
    }
  }

  report(): DamageReport {
    return {
      recording: this.directory,
      problems: [...this.problems],
      skipped: [...this.skipped].map(([reason, entry]) => ({ reason, ...entry })),
      notes: [...this.notes],
    };
  }

  private skip(reason: string, line: number, example: string): boolean {
    if (this.policy === 'refuse') {
      throw damaged(this.directory, `${basename(this.eventsPath)} line ${line}: ${example}`);
    }
    const entry = this.skipped.get(reason);
    if (entry) entry.count++;
    else this.skipped.set(reason, { count: 1, firstLine: line, example });
    return false;
  }

  private problem(text: string): void {
    if (this.policy === 'refuse') throw damaged(this.directory, text);
    this.problems.push(text);
  }
}

function damaged(directory: string, problem: string): PaperbotError {
  return new PaperbotError(
    'RECORDING_DAMAGED',
    `recording ${directory} is not what its manifest claims: ${problem}. ` +
      `Check it with: paperbot verify ${directory}; replay what is sound with --allow-damaged`,
    { details: { recording: directory, problem } },
  );
}

/** The report as lines for a terminal or a report: problems, then skipped records, then notes. */
export function describeDamage(report: DamageReport): string[] {
  const lines = report.problems.map((problem) => `${report.recording}: ${problem}`);
  for (const entry of report.skipped) {
    lines.push(
      `${report.recording}: skipped ${entry.count} record${entry.count === 1 ? '' : 's'} (${entry.reason}; first on line ${entry.firstLine}: ${entry.example})`,
    );
  }
  for (const note of report.notes) lines.push(`note: ${note}`);
  return lines;
}
