/**
 * Merges several recorded sessions into one time-ordered stream: records are taken by `t`, ties
 * in the order the sources are given, and within a source in file order. Each source must be
 * time-ordered itself (the recorder guarantees it).
 */
import { DEFAULT_BATCH_SIZE } from './event-log-reader.ts';
import type { RecordedEvent } from './records.ts';

interface Cursor {
  readonly iterator: AsyncIterator<readonly RecordedEvent[]>;
  batch: readonly RecordedEvent[];
  index: number;
}

async function advance(cursor: Cursor): Promise<boolean> {
  for (;;) {
    const next = await cursor.iterator.next();
    if (next.done) return false;
    if (next.value.length > 0) {
      cursor.batch = next.value;
      cursor.index = 0;
      return true;
    }
  }
}

export async function* mergeByTime(
  sources: readonly AsyncIterable<readonly RecordedEvent[]>[],
  batchSize = DEFAULT_BATCH_SIZE,
): AsyncGenerator<readonly RecordedEvent[]> {
  if (sources.length === 1) {
    yield* sources[0]!;
    return;
  }
  const cursors: Cursor[] = [];
  try {
    for (const source of sources) {
      const cursor: Cursor = {
        iterator: source[Symbol.asyncIterator](),
        batch: [],
        index: 0,
      };
      cursors.push(cursor);
    }
    const live: Cursor[] = [];
    for (const cursor of cursors) if (await advance(cursor)) live.push(cursor);
    let out: RecordedEvent[] = [];
    while (live.length > 0) {
      // Few sources: a linear scan beats a heap. Ties go to the earlier source.
      let best = 0;
      let bestT = live[0]!.batch[live[0]!.index]!.t;
      for (let i = 1; i < live.length; i++) {
        const t = live[i]!.batch[live[i]!.index]!.t;
        if (t < bestT) {
          best = i;
          bestT = t;
        }
      }
      const cursor = live[best]!;
      out.push(cursor.batch[cursor.index]!);
      cursor.index++;
      if (cursor.index >= cursor.batch.length && !(await advance(cursor))) live.splice(best, 1);
      if (out.length >= batchSize) {
        yield out;
        out = [];
      }
    }
    if (out.length > 0) yield out;
  } finally {
    // An early stop closes every source, so their files are closed too.
    await Promise.all(cursors.map((cursor) => cursor.iterator.return?.()));
  }
}
