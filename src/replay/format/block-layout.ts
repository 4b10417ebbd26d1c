/**
 * The layout of the events cache's encoding (`block-encoder.ts` writes it, `block-decoder.ts`
 * reads it, `record-templates.ts` compiles its templates): the constants both sides share.
 *
 * The events cache's encoding of JSON values: columns of numbers, a table of strings, and one
 * "template" per distinct structure, decoded by a function compiled from the template.
 *
 * Why: `JSON.parse` of a recorded line spends its time scanning text and rebuilding strings it
 * has built before (prices, market ids, field names), and a tag-per-value binary encoding still
 * dispatches on every value. Recorded records come in a handful of structures (a ticker, a book
 * of depth 10, a trade, ...), so each structure is kept once, as a template: its keys, the type
 * of each leaf (string, integer, float, null, true, false) and, for arrays, their length. The
 * decoder compiles each template once into a function made of one object literal, whose leaves
 * read straight from typed arrays: a record costs one call and the allocations of its objects.
 *
 * Values decode to exactly the objects that were encoded: same keys in the same order, same
 * strings, same numbers (-0 included), so `JSON.stringify` of a decoded record is the recorded
 * line. A value no template should hold (an object with a `__proto__` key, an array longer than
 * `MAX_ARRAY_ITEMS`, a structure past `MAX_TEMPLATE_SIZE` or `MAX_DEPTH`) is kept as its JSON
 * text and decoded with `JSON.parse`, which is what reading the line would do.
 *
 * Blocks form a sequence, decoded in order by one decoder: the string table and the templates
 * carry over from block to block, each block adding only the strings and templates it is the
 * first to use (the first block of a sequence, and every block after the table passes
 * `MAX_TABLE_STRINGS`, starts a new table, which bounds a reader's memory).
 *
 * A block, in host byte order (the cache header records which), 8-byte aligned throughout:
 *
 *   header, ten u32: block bytes (this header and padding included), records, flags, new
 *     strings, their bytes, new templates, their bytes, string references, integers, floats
 *   floats      f64 × floats
 *   records     u32 × records       the template of each record
 *   references  i32 × references    indices into the string table
 *   integers    i32 × integers
 *   new strings UTF-8 joined by NUL, or a JSON array (flag) when one holds a NUL or a lone
 *               surrogate, which UTF-8 cannot carry
 *   templates   a JSON array of the new templates' JSON texts
 *   padding     zeros up to a multiple of 8
 *
 * A template's JSON is a leaf code (0 null, 1 false, 2 true, 3 string, 4 integer, 5 float,
 * 6 JSON text), `{"k": [keys], "v": [templates]}` for an object or `{"a": [templates]}` for an
 * array. The compiled source holds only JSON-quoted keys and numeric offsets, never values.
 */
import { PaperbotError } from '../../core/errors.ts';

export const LEAF_NULL = 0;
export const LEAF_FALSE = 1;
export const LEAF_TRUE = 2;
export const LEAF_STRING = 3;
export const LEAF_INTEGER = 4;
export const LEAF_FLOAT = 5;
export const LEAF_JSON = 6;
export const FIRST_COMPOSITE = 7;

/** Arrays longer than this are kept as JSON text rather than unrolled into a template. */
export const MAX_ARRAY_ITEMS = 256;
/** Nodes (objects, arrays and leaves) of the largest template. */
export const MAX_TEMPLATE_SIZE = 4_096;
/** Nesting deeper than this is kept as JSON text. */
export const MAX_DEPTH = 32;
/** Distinct record templates of one sequence; records of further structures are kept as JSON. */
export const MAX_TEMPLATES = 4_096;
/** The string table starts over at the next block once it holds this many strings. */
export const MAX_TABLE_STRINGS = 1 << 16;

const HEADER_WORDS = 10;
export const HEADER_BYTES = HEADER_WORDS * 4;
export const FLAG_NEW_SEQUENCE = 1;
export const FLAG_NEW_TABLE = 2;
export const FLAG_JSON_STRINGS = 4;
export const STRING_SEPARATOR = '\u0000';
/** A lone surrogate: UTF-8 cannot carry it (a paired one is a code point, never matched). */
const LONE_SURROGATE = /\p{Surrogate}/u;

/** Strings the NUL-joined UTF-8 form cannot carry: a NUL, or a lone surrogate. */
export function needsJson(text: string): boolean {
  return text.includes(STRING_SEPARATOR) || LONE_SURROGATE.test(text);
}

export const HOST_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export type TemplateDescription =
  | number
  | { readonly k: readonly string[]; readonly v: readonly TemplateDescription[] }
  | { readonly a: readonly TemplateDescription[] };

function align8(bytes: number): number {
  return (bytes + 7) & ~7;
}

/** A block's header: the ten counts, in the order they are written. */
export interface BlockHeader {
  /** The block's bytes, this header and the padding included. */
  readonly total: number;
  readonly records: number;
  readonly flags: number;
  readonly stringCount: number;
  readonly stringBytes: number;
  readonly templateCount: number;
  readonly templateBytes: number;
  readonly referenceCount: number;
  readonly integerCount: number;
  readonly floatCount: number;
}

/** The bytes of a block of these counts, padding included. */
export function blockLength(counts: Omit<BlockHeader, 'total'>): number {
  return align8(
    HEADER_BYTES +
      counts.floatCount * 8 +
      4 * (counts.records + counts.referenceCount + counts.integerCount) +
      counts.stringBytes +
      counts.templateBytes,
  );
}

/** The header's bytes, in host byte order. */
export function writeBlockHeader(header: BlockHeader): Uint8Array {
  return new Uint8Array(
    new Uint32Array([
      header.total,
      header.records,
      header.flags,
      header.stringCount,
      header.stringBytes,
      header.templateCount,
      header.templateBytes,
      header.referenceCount,
      header.integerCount,
      header.floatCount,
    ]).buffer,
  );
}

/** Reads the header of a block whose bytes start 8-byte aligned; checks the block's length. */
export function readBlockHeader(block: Uint8Array): BlockHeader {
  if (block.byteLength < HEADER_BYTES) throw corrupt('block shorter than its header');
  const words = new Uint32Array(block.buffer, block.byteOffset, HEADER_WORDS);
  const header: BlockHeader = {
    total: words[0]!,
    records: words[1]!,
    flags: words[2]!,
    stringCount: words[3]!,
    stringBytes: words[4]!,
    templateCount: words[5]!,
    templateBytes: words[6]!,
    referenceCount: words[7]!,
    integerCount: words[8]!,
    floatCount: words[9]!,
  };
  if (header.total !== block.byteLength || blockLength(header) !== header.total) {
    throw corrupt('block length does not match its header');
  }
  return header;
}

/** Where the next leaf of each column is, as a template is compiled. */
export interface LeafOffsets {
  references: number;
  integers: number;
  floats: number;
}

/**
 * The source of one leaf, which reads the next value of its column (and moves `offsets` on);
 * null for an unknown leaf code.
 */
export function leafSource(leaf: unknown, offsets: LeafOffsets): string | null {
  switch (leaf) {
    case LEAF_NULL:
      return 'null';
    case LEAF_FALSE:
      return 'false';
    case LEAF_TRUE:
      return 'true';
    case LEAF_STRING:
      return `S[X[x+${offsets.references++}]]`;
    case LEAF_INTEGER:
      return `N[n+${offsets.integers++}]`;
    case LEAF_FLOAT:
      return `F[f+${offsets.floats++}]`;
    case LEAF_JSON:
      return `J(S[X[x+${offsets.references++}]])`;
    default:
      return null;
  }
}

export function corrupt(message: string): PaperbotError {
  return new PaperbotError('RECORDING_CACHE_CORRUPT', `events cache is damaged: ${message}`);
}
