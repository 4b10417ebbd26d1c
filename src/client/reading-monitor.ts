/**
 * What the client's reading met that the interface, as this project knows it, does not show
 * (contract section 7): fields it does not know (kept), values outside enums the interface
 * leaves open (read as their safe meaning), items of a list or page that broke their schema
 * (left out, the others kept), and answers refused because a field the client uses is missing or
 * mistyped. One monitor serves a REST client and the stream clients built on it.
 *
 * Every occurrence is a notice on `notices$` (for a metric); `first` marks the first of its
 * shape and field (for a log line once per shape and field). Distinct shape/field pairs are
 * bounded: past `DISTINCT_LIMIT` new ones are reported under the field `(other)`.
 */
import { type Observable, Subject } from 'rxjs';
import {
  describeIssues,
  type Drift,
  formatWirePath,
  type ReadingMode,
  type SkippedItem,
} from '../protocol/index.ts';

/** Where the reading happened: the endpoint's name, or `stream`. */
export interface ReadingSource {
  readonly where: string;
  readonly httpStatus?: number | null;
  readonly serverRequestId?: string | null;
}

export type ReadingNotice =
  | {
      readonly kind: 'unknown_field';
      readonly where: string;
      readonly shape: string;
      readonly field: string;
      /** `body[0].svc_ext` */
      readonly path: string;
      readonly first: boolean;
    }
  | {
      readonly kind: 'unknown_value';
      readonly where: string;
      readonly shape: string;
      readonly field: string;
      readonly path: string;
      readonly value: string;
      /** What it was read as; null when kept as it came. */
      readonly meaning: string | null;
      readonly first: boolean;
    }
  | {
      /** An item left out of its list or page; the others were applied. */
      readonly kind: 'skipped_item';
      readonly where: string;
      readonly path: string;
      readonly problem: string;
      readonly httpStatus: number | null;
      readonly serverRequestId: string | null;
    }
  | {
      /** An answer or frame refused: a field the client uses is missing or mistyped. */
      readonly kind: 'refused';
      readonly where: string;
      readonly problem: string;
      readonly httpStatus: number | null;
      readonly serverRequestId: string | null;
    };

/** The last item left out or answer refused, for `/status`. */
export interface ReadingProblem {
  readonly at: number;
  readonly where: string;
  readonly message: string;
  readonly httpStatus: number | null;
  readonly serverRequestId: string | null;
}

export interface ReadingSnapshot {
  readonly mode: ReadingMode;
  /** Distinct shape/field pairs met that the project does not know. */
  readonly unknownFields: number;
  /** Distinct shape/field/value triples outside an open enum. */
  readonly unknownValues: number;
  readonly skippedItems: number;
  readonly refused: number;
  readonly lastProblem: ReadingProblem | null;
}

const DISTINCT_LIMIT = 200;
const OTHER_FIELD = '(other)';

export class ReadingMonitor {
  readonly mode: ReadingMode;
  private readonly subject = new Subject<ReadingNotice>();
  /** Every notice, as it happens. */
  readonly notices$: Observable<ReadingNotice> = this.subject.asObservable();
  private readonly fields = new Set<string>();
  private readonly values = new Set<string>();
  private skipped = 0;
  private refusals = 0;
  private last: ReadingProblem | null = null;
  private readonly now: () => number;

  constructor(mode: ReadingMode = 'tolerant', now: () => number = () => 0) {
    this.mode = mode;
    this.now = now;
  }

  /** Reports what one read met. */
  report(
    source: ReadingSource,
    drift: readonly Drift[],
    skipped: readonly SkippedItem[] = [],
    input: unknown = undefined,
  ): void {
    const root = source.where === 'stream' ? 'frame' : 'body';
    for (const item of drift) {
      if (item.kind === 'unknown_field') {
        const field = this.bounded(this.fields, `${item.shape}\u0000${item.field}`)
          ? item.field
          : OTHER_FIELD;
        const key = `${item.shape}\u0000${field}`;
        const first = !this.fields.has(key);
        if (first) this.fields.add(key);
        this.subject.next({
          kind: 'unknown_field',
          where: source.where,
          shape: item.shape,
          field,
          path: formatWirePath([...item.path, item.field], root),
          first,
        });
      } else {
        const key = `${item.shape}\u0000${item.field}\u0000${item.value}`;
        const first = this.bounded(this.values, key) && !this.values.has(key);
        if (first) this.values.add(key);
        this.subject.next({
          kind: 'unknown_value',
          where: source.where,
          shape: item.shape,
          field: item.field,
          path: formatWirePath(item.path, root),
          value: item.value,
          meaning: item.meaning,
          first,
        });
      }
    }
    for (const item of skipped) {
      this.skipped += 1;
      const problem = describeIssues(item.issues, input, root);
      const path = formatWirePath(item.path, root);
      this.remember(source, `${source.where}: ${path} left out: ${problem}`);
      this.subject.next({
        kind: 'skipped_item',
        where: source.where,
        path,
        problem,
        httpStatus: source.httpStatus ?? null,
        serverRequestId: source.serverRequestId ?? null,
      });
    }
  }

  /** Reports an answer or frame refused (its message names the broken paths). */
  refused(source: ReadingSource, message: string): void {
    this.refusals += 1;
    this.remember(source, message);
    this.subject.next({
      kind: 'refused',
      where: source.where,
      problem: message,
      httpStatus: source.httpStatus ?? null,
      serverRequestId: source.serverRequestId ?? null,
    });
  }

  snapshot(): ReadingSnapshot {
    return {
      mode: this.mode,
      unknownFields: this.fields.size,
      unknownValues: this.values.size,
      skippedItems: this.skipped,
      refused: this.refusals,
      lastProblem: this.last,
    };
  }

  private bounded(seen: ReadonlySet<string>, key: string): boolean {
    return seen.has(key) || seen.size < DISTINCT_LIMIT;
  }

  private remember(source: ReadingSource, message: string): void {
    this.last = Object.freeze({
      at: this.now(),
      where: source.where,
      message,
      httpStatus: source.httpStatus ?? null,
      serverRequestId: source.serverRequestId ?? null,
    });
  }
}
