/**
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

const LEAF_NULL = 0;
const LEAF_FALSE = 1;
const LEAF_TRUE = 2;
const LEAF_STRING = 3;
const LEAF_INTEGER = 4;
const LEAF_FLOAT = 5;
const LEAF_JSON = 6;
const FIRST_COMPOSITE = 7;

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
const HEADER_BYTES = HEADER_WORDS * 4;
const FLAG_NEW_SEQUENCE = 1;
const FLAG_NEW_TABLE = 2;
const FLAG_JSON_STRINGS = 4;
const STRING_SEPARATOR = '\u0000';
/** A lone surrogate: UTF-8 cannot carry it (a paired one is a code point, never matched). */
const LONE_SURROGATE = /\p{Surrogate}/u;

/** Strings the NUL-joined UTF-8 form cannot carry: a NUL, or a lone surrogate. */
function needsJson(text: string): boolean {
  return text.includes(STRING_SEPARATOR) || LONE_SURROGATE.test(text);
}

export const HOST_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

type TemplateDescription =
  | number
  | { readonly k: readonly string[]; readonly v: readonly TemplateDescription[] }
  | { readonly a: readonly TemplateDescription[] };

class Int32Column {
  data = new Int32Array(1 << 12);
  length = 0;

  push(value: number): void {
    if (this.length === this.data.length) {
      const larger = new Int32Array(this.data.length * 2);
      larger.set(this.data);
      this.data = larger;
    }
    this.data[this.length++] = value;
  }

  bytes(): Uint8Array {
    return new Uint8Array(this.data.buffer, 0, this.length * 4);
  }
}

class Float64Column {
  data = new Float64Array(1 << 10);
  length = 0;

  push(value: number): void {
    if (this.length === this.data.length) {
      const larger = new Float64Array(this.data.length * 2);
      larger.set(this.data);
      this.data = larger;
    }
    this.data[this.length++] = value;
  }

  bytes(): Uint8Array {
    return new Uint8Array(this.data.buffer, 0, this.length * 8);
  }
}

/** A node of a trie over key lists (object shapes). */
interface ShapeNode {
  readonly next: Map<string, ShapeNode>;
  shape: number;
}

/** A node of a trie over child templates: where a child list ends, its template. */
interface TemplateNode {
  readonly next: Map<number, TemplateNode>;
  template: number;
}

interface Composite {
  readonly description: TemplateDescription;
  readonly size: number;
}

function encodeError(message: string): PaperbotError {
  return new PaperbotError('RECORDING_CACHE_ENCODE', message);
}

function isInt32(value: number): boolean {
  return (value | 0) === value && (value !== 0 || 1 / value > 0);
}

function align8(bytes: number): number {
  return (bytes + 7) & ~7;
}

export interface BlockEncoderOptions {
  /** Strings the table may hold before the next block starts a new one. */
  readonly maxTableStrings?: number;
  /** Record templates of the sequence; records of further structures are kept as JSON. */
  readonly maxTemplates?: number;
}

/**
 * Encodes a sequence of blocks. The blocks of one encoder are decoded, in order, by one decoder.
 * After a failed `encode` the encoder refuses further blocks: the ones it wrote stay decodable,
 * but its tables no longer match what a decoder would have.
 */
export class BlockEncoder {
  private readonly maxTableStrings: number;
  private readonly maxTemplates: number;
  private readonly strings = new Map<string, number>();
  private newStrings: string[] = [];
  private readonly shapeRoot: ShapeNode = { next: new Map(), shape: -1 };
  private readonly shapeKeys: (readonly string[])[] = [];
  /** Per shape: whether it can be built by an object literal (no `__proto__` key). */
  private readonly shapeLiteral: boolean[] = [];
  private readonly objectRoots = new Map<number, TemplateNode>();
  private readonly arrayRoot: TemplateNode = { next: new Map(), template: -1 };
  private readonly composites: Composite[] = [];
  private readonly records = new Map<number, number>();
  private newTemplates: string[] = [];
  private readonly children = new Int32Column();
  private readonly references = new Int32Column();
  private readonly integers = new Int32Column();
  private readonly floats = new Float64Column();
  private readonly recordTemplates = new Int32Column();
  private started = false;
  private failed = false;

  constructor(options: BlockEncoderOptions = {}) {
    this.maxTableStrings = options.maxTableStrings ?? MAX_TABLE_STRINGS;
    this.maxTemplates = options.maxTemplates ?? MAX_TEMPLATES;
  }

  encode(values: readonly unknown[]): Buffer {
    if (this.failed) throw encodeError('the encoder failed on an earlier block');
    let flags = 0;
    if (!this.started) {
      flags |= FLAG_NEW_SEQUENCE | FLAG_NEW_TABLE;
      this.started = true;
    } else if (this.strings.size >= this.maxTableStrings) {
      flags |= FLAG_NEW_TABLE;
      this.strings.clear();
    }
    this.newStrings = [];
    this.newTemplates = [];
    this.references.length = 0;
    this.integers.length = 0;
    this.floats.length = 0;
    this.recordTemplates.length = 0;
    this.children.length = 0;
    try {
      for (const value of values) this.recordTemplates.push(this.record(value));
      return this.assemble(flags, values.length);
    } catch (error) {
      this.failed = true;
      throw error;
    }
  }

  private record(value: unknown): number {
    const references = this.references.length;
    const integers = this.integers.length;
    const floats = this.floats.length;
    let template = this.value(value, 0);
    let index = this.records.get(template);
    if (index !== undefined) return index;
    if (this.records.size >= this.maxTemplates) {
      this.references.length = references;
      this.integers.length = integers;
      this.floats.length = floats;
      template = this.json(value);
      index = this.records.get(template);
      if (index !== undefined) return index;
    }
    index = this.records.size;
    this.records.set(template, index);
    this.newTemplates.push(JSON.stringify(this.description(template)));
    return index;
  }

  private description(template: number): TemplateDescription {
    return template < FIRST_COMPOSITE
      ? template
      : this.composites[template - FIRST_COMPOSITE]!.description;
  }

  private size(template: number): number {
    return template < FIRST_COMPOSITE ? 1 : this.composites[template - FIRST_COMPOSITE]!.size;
  }

  private intern(text: string): number {
    let index = this.strings.get(text);
    if (index === undefined) {
      index = this.strings.size;
      this.strings.set(text, index);
      this.newStrings.push(text);
    }
    return index;
  }

  private json(value: unknown): number {
    const text = JSON.stringify(value);
    if (text === undefined) throw encodeError(`cannot encode a ${typeof value}`);
    this.references.push(this.intern(text));
    return LEAF_JSON;
  }

  private value(value: unknown, depth: number): number {
    switch (typeof value) {
      case 'string':
        this.references.push(this.intern(value));
        return LEAF_STRING;
      case 'number':
        if (isInt32(value)) {
          this.integers.push(value);
          return LEAF_INTEGER;
        }
        if (Number.isFinite(value)) {
          this.floats.push(value);
          return LEAF_FLOAT;
        }
        // JSON has no infinities or NaN; JSON.stringify writes them as null.
        return LEAF_NULL;
      case 'boolean':
        return value ? LEAF_TRUE : LEAF_FALSE;
      case 'undefined':
        // Only reachable as an array item, which JSON writes as null.
        return LEAF_NULL;
      case 'object':
        if (value === null) return LEAF_NULL;
        if (depth >= MAX_DEPTH) return this.json(value);
        return Array.isArray(value)
          ? this.array(value as readonly unknown[], depth)
          : this.object(value as Record<string, unknown>, depth);
      default:
        throw encodeError(`cannot encode a ${typeof value}`);
    }
  }

  private array(value: readonly unknown[], depth: number): number {
    if (value.length > MAX_ARRAY_ITEMS) return this.json(value);
    const references = this.references.length;
    const integers = this.integers.length;
    const floats = this.floats.length;
    const start = this.children.length;
    for (let index = 0; index < value.length; index++) {
      this.children.push(this.value(value[index], depth + 1));
    }
    const template = this.composite(this.arrayRoot, start, null);
    if (template !== LEAF_JSON) return template;
    this.references.length = references;
    this.integers.length = integers;
    this.floats.length = floats;
    return this.json(value);
  }

  private object(value: Record<string, unknown>, depth: number): number {
    const keys = Object.keys(value);
    // Walk the shape trie key by key: no signature string is built for known shapes.
    let node = this.shapeRoot;
    for (const key of keys) {
      if (value[key] === undefined) continue;
      let child = node.next.get(key);
      if (!child) {
        child = { next: new Map(), shape: -1 };
        node.next.set(key, child);
      }
      node = child;
    }
    if (node.shape < 0) {
      const shapeKeys = keys.filter((key) => value[key] !== undefined);
      node.shape = this.shapeKeys.length;
      this.shapeKeys.push(shapeKeys);
      this.shapeLiteral.push(!shapeKeys.includes('__proto__'));
    }
    const shape = node.shape;
    // An object literal would set the prototype for a `__proto__` key; JSON.parse makes it an
    // own property, and so does decoding the JSON text.
    if (!this.shapeLiteral[shape]) return this.json(value);
    const references = this.references.length;
    const integers = this.integers.length;
    const floats = this.floats.length;
    const start = this.children.length;
    for (const key of keys) {
      const field = value[key];
      if (field !== undefined) this.children.push(this.value(field, depth + 1));
    }
    let root = this.objectRoots.get(shape);
    if (!root) {
      root = { next: new Map(), template: -1 };
      this.objectRoots.set(shape, root);
    }
    const template = this.composite(root, start, this.shapeKeys[shape]!);
    if (template !== LEAF_JSON) return template;
    this.references.length = references;
    this.integers.length = integers;
    this.floats.length = floats;
    return this.json(value);
  }

  /** The template of an object (keys) or array (null) whose children are on the stack. */
  private composite(root: TemplateNode, start: number, keys: readonly string[] | null): number {
    const children = this.children.data;
    const end = this.children.length;
    let node = root;
    for (let index = start; index < end; index++) {
      const child = children[index]!;
      let next = node.next.get(child);
      if (!next) {
        next = { next: new Map(), template: -1 };
        node.next.set(child, next);
      }
      node = next;
    }
    if (node.template < 0) {
      let size = 1;
      const descriptions: TemplateDescription[] = [];
      for (let index = start; index < end; index++) {
        size += this.size(children[index]!);
        descriptions.push(this.description(children[index]!));
      }
      if (size > MAX_TEMPLATE_SIZE) {
        node.template = LEAF_JSON;
      } else {
        node.template = FIRST_COMPOSITE + this.composites.length;
        this.composites.push({
          description: keys === null ? { a: descriptions } : { k: keys, v: descriptions },
          size,
        });
      }
    }
    this.children.length = start;
    return node.template;
  }

  private assemble(flags: number, records: number): Buffer {
    let stringFlags = flags;
    let strings: Buffer;
    if (this.newStrings.some(needsJson)) {
      stringFlags |= FLAG_JSON_STRINGS;
      strings = Buffer.from(JSON.stringify(this.newStrings), 'utf8');
    } else {
      strings = Buffer.from(this.newStrings.join(STRING_SEPARATOR), 'utf8');
    }
    const templates =
      this.newTemplates.length === 0
        ? Buffer.alloc(0)
        : Buffer.from(JSON.stringify(this.newTemplates), 'utf8');
    const floatBytes = this.floats.length * 8;
    const fixedBytes =
      HEADER_BYTES +
      floatBytes +
      4 * (records + this.references.length + this.integers.length) +
      strings.length +
      templates.length;
    const total = align8(fixedBytes);
    const block = Buffer.alloc(total);
    const header = new Uint32Array(HEADER_WORDS);
    header[0] = total;
    header[1] = records;
    header[2] = stringFlags;
    header[3] = this.newStrings.length;
    header[4] = strings.length;
    header[5] = this.newTemplates.length;
    header[6] = templates.length;
    header[7] = this.references.length;
    header[8] = this.integers.length;
    header[9] = this.floats.length;
    let offset = 0;
    block.set(new Uint8Array(header.buffer), offset);
    offset += HEADER_BYTES;
    block.set(this.floats.bytes(), offset);
    offset += floatBytes;
    for (const column of [this.recordTemplates, this.references, this.integers]) {
      block.set(column.bytes(), offset);
      offset += column.length * 4;
    }
    offset += strings.copy(block, offset);
    templates.copy(block, offset);
    return block;
  }
}

/** Builds one record from the columns at the given positions. */
type BuildFunction = (
  strings: readonly string[],
  references: Int32Array,
  integers: Int32Array,
  floats: Float64Array,
  parse: (text: string) => unknown,
  reference: number,
  integer: number,
  float: number,
) => unknown;

interface Builder {
  readonly build: BuildFunction;
  readonly references: number;
  readonly integers: number;
  readonly floats: number;
  /** How a record of this template is handed out with its `d` left encoded (null: it cannot). */
  readonly deferred: DeferredPlan | null;
}

/** The columns of one block, which a deferred record decodes its `d` from. */
interface BlockColumns {
  readonly strings: readonly string[];
  readonly references: Int32Array;
  readonly integers: Int32Array;
  readonly floats: Float64Array;
}

/** Builds a deferred record's header (`v`, `t`, `k`, `m`) from the columns. */
type HeaderFunction = (
  record: typeof DeferredRecord,
  columns: BlockColumns,
  plan: DeferredPlan,
  strings: readonly string[],
  references: Int32Array,
  integers: Int32Array,
  floats: Float64Array,
  reference: number,
  integer: number,
  float: number,
) => DeferredRecord;

interface DeferredPlan {
  readonly header: HeaderFunction;
  /** The record's keys in their recorded order (`toJSON`). */
  readonly keys: readonly string[];
  /** Where the record's `k` is among its string references. */
  readonly kindReference: number;
  /** The template of `d`, and where its leaves start among the record's. */
  readonly body: Builder;
  readonly bodyReference: number;
  readonly bodyInteger: number;
  readonly bodyFloat: number;
}

/**
 * A record whose `d` is decoded when first read (then kept): a replay that never looks at most
 * book snapshots and trades (nobody subscribed, no order in the market) never builds them. It
 * keeps its block's columns until then. `toJSON` gives the recorded record, keys in order.
 */
export class DeferredRecord {
  private columns: BlockColumns | null;
  private value: unknown = undefined;

  constructor(
    readonly v: unknown,
    readonly t: unknown,
    readonly k: unknown,
    readonly m: unknown,
    columns: BlockColumns,
    private readonly plan: DeferredPlan,
    private readonly reference: number,
    private readonly integer: number,
    private readonly float: number,
  ) {
    this.columns = columns;
  }

  get d(): unknown {
    const columns = this.columns;
    if (columns !== null) {
      const plan = this.plan;
      this.value = plan.body.build(
        columns.strings,
        columns.references,
        columns.integers,
        columns.floats,
        JSON.parse,
        this.reference + plan.bodyReference,
        this.integer + plan.bodyInteger,
        this.float + plan.bodyFloat,
      );
      this.columns = null;
    }
    return this.value;
  }

  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const key of this.plan.keys) {
      out[key] = key === 'd' ? this.d : this[key as 'v' | 't' | 'k' | 'm'];
    }
    return out;
  }
}

/** Record keys a deferred record carries: the header's and `d`. */
const DEFERRED_KEYS = new Set(['v', 't', 'k', 'm', 'd']);

function corrupt(message: string): PaperbotError {
  return new PaperbotError('RECORDING_CACHE_CORRUPT', `events cache is damaged: ${message}`);
}

/**
 * Compiled templates, shared by every decoder of the process: a sweep or a benchmark replays
 * the same structures again, and keeping the compiled (and by then optimized) functions spares
 * each reader the warm-up. Bounded, since a template is arbitrary data.
 */
const compiledTemplates = new Map<string, Builder>();
const MAX_COMPILED_TEMPLATES = 16_384;

function compileTemplate(text: string): Builder {
  let description: unknown;
  try {
    description = JSON.parse(text);
  } catch (cause) {
    throw new PaperbotError('RECORDING_CACHE_CORRUPT', 'events cache template is not JSON', {
      cause,
    });
  }
  let references = 0;
  let integers = 0;
  let floats = 0;
  let nodes = 0;
  const expression = (node: unknown, depth: number): string => {
    if (++nodes > MAX_TEMPLATE_SIZE || depth > MAX_DEPTH + 1) throw corrupt('template too large');
    if (typeof node === 'number') {
      switch (node) {
        case LEAF_NULL:
          return 'null';
        case LEAF_FALSE:
          return 'false';
        case LEAF_TRUE:
          return 'true';
        case LEAF_STRING:
          return `S[X[x+${references++}]]`;
        case LEAF_INTEGER:
          return `N[n+${integers++}]`;
        case LEAF_FLOAT:
          return `F[f+${floats++}]`;
        case LEAF_JSON:
          return `J(S[X[x+${references++}]])`;
        default:
          throw corrupt(`unknown template leaf ${node}`);
      }
    }
    if (typeof node !== 'object' || node === null) throw corrupt('bad template');
    if ('a' in node && Array.isArray(node.a)) {
      return `[${node.a.map((item: unknown) => expression(item, depth + 1)).join(',')}]`;
    }
    if ('k' in node && 'v' in node && Array.isArray(node.k) && Array.isArray(node.v)) {
      const keys = node.k as unknown[];
      const values = node.v as unknown[];
      if (keys.length !== values.length) throw corrupt('bad template');
      const fields = keys.map((key, index) => {
        if (typeof key !== 'string' || key === '__proto__') throw corrupt('bad template key');
        return `${JSON.stringify(key)}:${expression(values[index], depth + 1)}`;
      });
      return `{${fields.join(',')}}`;
    }
    throw corrupt('bad template');
  };
  const body = expression(description, 0);
  // The source is built from JSON-quoted keys and numeric offsets only, never from values.
  const build = new Function('S', 'X', 'N', 'F', 'J', 'x', 'n', 'f', `return ${body};`);
  return {
    build: build as BuildFunction,
    references,
    integers,
    floats,
    deferred: deferredPlan(description),
  };
}

/**
 * The plan of a record template `{v, t, k, m, d}` (keys in any order) whose header fields are
 * plain leaves, `k` a string, and `d` an object or array; null for any other template.
 */
function deferredPlan(description: unknown): DeferredPlan | null {
  if (typeof description !== 'object' || description === null || !('k' in description)) {
    return null;
  }
  const { k: keys, v: values } = description as { k: unknown; v: unknown };
  if (!Array.isArray(keys) || !Array.isArray(values) || keys.length !== DEFERRED_KEYS.size) {
    return null;
  }
  if (
    !keys.every((key) => DEFERRED_KEYS.has(key as string)) ||
    new Set(keys).size !== keys.length
  ) {
    return null;
  }
  let references = 0;
  let integers = 0;
  let floats = 0;
  const fields: Record<string, string> = {};
  let kindReference = -1;
  let body: { reference: number; integer: number; float: number; builder: Builder } | null = null;
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index] as string;
    const leaf = values[index] as unknown;
    if (key === 'd') {
      if (typeof leaf !== 'object' || leaf === null) return null;
      const builder = templateBuilder(JSON.stringify(leaf));
      body = { reference: references, integer: integers, float: floats, builder };
      references += builder.references;
      integers += builder.integers;
      floats += builder.floats;
      continue;
    }
    switch (leaf) {
      case LEAF_NULL:
        fields[key] = 'null';
        break;
      case LEAF_FALSE:
        fields[key] = 'false';
        break;
      case LEAF_TRUE:
        fields[key] = 'true';
        break;
      case LEAF_STRING:
        if (key === 'k') kindReference = references;
        fields[key] = `S[X[x+${references++}]]`;
        break;
      case LEAF_INTEGER:
        fields[key] = `N[n+${integers++}]`;
        break;
      case LEAF_FLOAT:
        fields[key] = `F[f+${floats++}]`;
        break;
      default:
        return null;
    }
  }
  if (body === null || kindReference < 0) return null;
  // Keys and numeric offsets only, as for `build`.
  const header = new Function(
    'D',
    'B',
    'P',
    'S',
    'X',
    'N',
    'F',
    'x',
    'n',
    'f',
    `return new D(${fields.v},${fields.t},${fields.k},${fields.m},B,P,x,n,f);`,
  ) as HeaderFunction;
  return {
    header,
    keys: keys as string[],
    kindReference,
    body: body.builder,
    bodyReference: body.reference,
    bodyInteger: body.integer,
    bodyFloat: body.float,
  };
}

function templateBuilder(text: string): Builder {
  let builder = compiledTemplates.get(text);
  if (!builder) {
    builder = compileTemplate(text);
    if (compiledTemplates.size >= MAX_COMPILED_TEMPLATES) compiledTemplates.clear();
    compiledTemplates.set(text, builder);
  }
  return builder;
}

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
      if (input.byteLength < HEADER_BYTES) throw corrupt('block shorter than its header');
      // Typed views need aligned offsets; a block read into an aligned buffer is used in place.
      const block = input.byteOffset % 8 === 0 ? input : new Uint8Array(input);
      const buffer = block.buffer;
      const base = block.byteOffset;
      const header = new Uint32Array(buffer, base, HEADER_WORDS);
      const total = header[0]!;
      const records = header[1]!;
      const flags = header[2]!;
      const stringCount = header[3]!;
      const stringBytes = header[4]!;
      const templateCount = header[5]!;
      const templateBytes = header[6]!;
      const referenceCount = header[7]!;
      const integerCount = header[8]!;
      const floatCount = header[9]!;
      const fixedBytes =
        HEADER_BYTES +
        floatCount * 8 +
        4 * (records + referenceCount + integerCount) +
        stringBytes +
        templateBytes;
      if (total !== block.byteLength || align8(fixedBytes) !== total) {
        throw corrupt('block length does not match its header');
      }
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
