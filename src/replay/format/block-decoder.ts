/**
 * The decoder of the events cache's blocks (layout: `block-layout.ts`): checks a block's
 * header and references, adds its new strings and templates to the sequence's tables, and
 * builds each record with its template's compiled function (`record-templates.ts`).
 */
import { PaperbotError } from '../../core/errors.ts';
import {
  corrupt,
  FLAG_JSON_STRINGS,
  FLAG_NEW_SEQUENCE,
  FLAG_NEW_TABLE,
  HEADER_BYTES,
  readBlockHeader,
  STRING_SEPARATOR,
} from './block-layout.ts';
import {
  type BlockColumns,
  type Builder,
  DeferredRecord,
  templateBuilder,
} from './record-templates.ts';

function parseJsonArray(bytes: Uint8Array, what: string): unknown[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString());
  } catch (cause) {
    throw new PaperbotError('RECORDING_CACHE_CORRUPT', `events cache ${what} are not JSON`, {
      cause,
    });
  }
  if (!Array.isArray(parsed)) throw corrupt(`${what} are not an array`);
  return parsed;
}

export interface BlockDecoder {
  /** Decodes the next block of a sequence (as written by one `BlockEncoder`). */
  decode(block: Uint8Array): unknown[];
}

export interface BlockDecoderOptions {
  /**
   * Records of these kinds (`k`) come back as `DeferredRecord`s, their `d` decoded when first
   * read, when their structure allows it (`{v, t, k, m, d}`); others are decoded whole.
   */
  readonly deferredKinds?: readonly string[];
}

/** Makes a decoder for one sequence of blocks. */
export function createBlockDecoder(options: BlockDecoderOptions = {}): BlockDecoder {
  const deferredKinds =
    options.deferredKinds === undefined || options.deferredKinds.length === 0
      ? null
      : new Set(options.deferredKinds);
  let table: string[] = [];
  let templates: Builder[] = [];
  let started = false;
  /** Per string of the table, once asked: whether a record of that kind is deferred. */
  let deferredByString: (boolean | undefined)[] = [];
  const isDeferredKind = (reference: number): boolean =>
    (deferredByString[reference] ??= deferredKinds!.has(table[reference]!));

  return {
    decode(input: Uint8Array): unknown[] {
      // Typed views need aligned offsets; a block read into an aligned buffer is used in place.
      const block = input.byteOffset % 8 === 0 ? input : new Uint8Array(input);
      const buffer = block.buffer;
      const base = block.byteOffset;
      const {
        records,
        flags,
        stringCount,
        stringBytes,
        templateCount,
        templateBytes,
        referenceCount,
        integerCount,
        floatCount,
      } = readBlockHeader(block);
      if (flags & FLAG_NEW_SEQUENCE) {
        templates = [];
        started = true;
      } else if (!started) {
        throw corrupt('the first block does not start a sequence');
      }
      if (flags & FLAG_NEW_TABLE) table = [];

      let offset = base + HEADER_BYTES;
      const floats = new Float64Array(buffer, offset, floatCount);
      offset += floatCount * 8;
      const recordTemplates = new Uint32Array(buffer, offset, records);
      offset += records * 4;
      const references = new Int32Array(buffer, offset, referenceCount);
      offset += referenceCount * 4;
      const integers = new Int32Array(buffer, offset, integerCount);
      offset += integerCount * 4;
      const stringData = new Uint8Array(buffer, offset, stringBytes);
      offset += stringBytes;
      const templateData = new Uint8Array(buffer, offset, templateBytes);

      if (stringCount > 0) {
        let added: unknown[];
        if (flags & FLAG_JSON_STRINGS) {
          added = parseJsonArray(stringData, 'strings');
          if (!added.every((text) => typeof text === 'string')) throw corrupt('bad string');
        } else {
          added = Buffer.from(buffer, stringData.byteOffset, stringBytes)
            .toString('utf8')
            .split(STRING_SEPARATOR);
        }
        if (added.length !== stringCount) throw corrupt('string count does not match');
        for (let index = 0; index < added.length; index++) table.push(added[index] as string);
      }
      if (templateCount > 0) {
        const added = parseJsonArray(templateData, 'templates');
        if (added.length !== templateCount) throw corrupt('template count does not match');
        for (const text of added) {
          if (typeof text !== 'string') throw corrupt('bad template');
          templates.push(templateBuilder(text));
        }
      }
      // Every reference must name a string of the table: the largest, read unsigned (a negative
      // one reads as 2^31 or more), is below the table's length. One pass of one comparison per
      // reference; a block holds about 20 references per record.
      const unsignedReferences = new Uint32Array(buffer, references.byteOffset, referenceCount);
      let largest = 0;
      for (let index = 0; index < referenceCount; index++) {
        const reference = unsignedReferences[index]!;
        if (reference > largest) largest = reference;
      }
      if (referenceCount > 0 && largest >= table.length) {
        throw corrupt('string index out of range');
      }
      if (flags & FLAG_NEW_TABLE) deferredByString = [];

      const strings = table;
      const columns: BlockColumns = { strings, references, integers, floats };
      // Sized once: a block's records, where pushing would grow (and copy) the array ten times.
      const values = new Array<unknown>(records);
      let reference = 0;
      let integer = 0;
      let float = 0;
      for (let index = 0; index < records; index++) {
        const builder = templates[recordTemplates[index]!];
        if (builder === undefined) throw corrupt('template index out of range');
        const plan = builder.deferred;
        if (
          plan !== null &&
          deferredKinds !== null &&
          isDeferredKind(references[reference + plan.kindReference]!)
        ) {
          values[index] = plan.header(
            DeferredRecord,
            columns,
            plan,
            strings,
            references,
            integers,
            floats,
            reference,
            integer,
            float,
          );
        } else {
          values[index] = builder.build(
            strings,
            references,
            integers,
            floats,
            JSON.parse,
            reference,
            integer,
            float,
          );
        }
        reference += builder.references;
        integer += builder.integers;
        float += builder.floats;
      }
      // Reads past a column's end give undefined, never garbage from elsewhere; the counts
      // catch them (and any mismatch of templates and columns) before a value leaves.
      if (reference !== referenceCount || integer !== integerCount || float !== floatCount) {
        throw corrupt('columns do not match the templates');
      }
      return values;
    },
  };
}
