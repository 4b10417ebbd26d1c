/**
 * The encoder of the events cache's blocks (layout and why: `block-layout.ts`): each value is
 * walked once, its leaves pushed onto typed-array columns and its structure looked up in tries
 * of shapes and templates, so a known structure costs no string building.
 */
import { PaperbotError } from '../../core/errors.ts';
import {
  LEAF_NULL,
  LEAF_FALSE,
  LEAF_TRUE,
  LEAF_STRING,
  LEAF_INTEGER,
  LEAF_FLOAT,
  LEAF_JSON,
  FIRST_COMPOSITE,
  MAX_ARRAY_ITEMS,
  MAX_TEMPLATE_SIZE,
  MAX_DEPTH,
  MAX_TEMPLATES,
  MAX_TABLE_STRINGS,
  HEADER_BYTES,
  FLAG_NEW_SEQUENCE,
  FLAG_NEW_TABLE,
  FLAG_JSON_STRINGS,
  STRING_SEPARATOR,
  needsJson,
  type TemplateDescription,
  blockLength,
  writeBlockHeader,
} from './block-layout.ts';

/**
 * The block's columns while it is encoded: typed arrays that grow by doubling. Two classes, not
 * one generic class, so each `push` sees one kind of typed array (the encoder's hot path).
 */
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

/**
 * A node of a trie: over key lists (object shapes, `id` the shape) or over child templates
 * (`id` the template where a child list ends); -1 until one is given.
 */
interface TrieNode<Key> {
  readonly next: Map<Key, TrieNode<Key>>;
  id: number;
}

function trieNode<Key>(): TrieNode<Key> {
  return { next: new Map(), id: -1 };
}

/** The child of `node` under `key`, made on first use. */
function descend<Key>(node: TrieNode<Key>, key: Key): TrieNode<Key> {
  let child = node.next.get(key);
  if (!child) {
    child = trieNode();
    node.next.set(key, child);
  }
  return child;
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
  private readonly shapeRoot = trieNode<string>();
  private readonly shapeKeys: (readonly string[])[] = [];
  /** Per shape: whether it can be built by an object literal (no `__proto__` key). */
  private readonly shapeLiteral: boolean[] = [];
  private readonly objectRoots = new Map<number, TrieNode<number>>();
  private readonly arrayRoot = trieNode<number>();
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
      this.rewind(references, integers, floats);
      template = this.json(value);
      index = this.records.get(template);
      if (index !== undefined) return index;
    }
    index = this.records.size;
    this.records.set(template, index);
    this.newTemplates.push(JSON.stringify(this.description(template)));
    return index;
  }

  /** Takes back the leaves pushed since the columns had these lengths. */
  private rewind(references: number, integers: number, floats: number): void {
    this.references.length = references;
    this.integers.length = integers;
    this.floats.length = floats;
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
    this.rewind(references, integers, floats);
    return this.json(value);
  }

  private object(value: Record<string, unknown>, depth: number): number {
    const keys = Object.keys(value);
    // Walk the shape trie key by key: no signature string is built for known shapes.
    let node = this.shapeRoot;
    for (const key of keys) {
      if (value[key] !== undefined) node = descend(node, key);
    }
    if (node.id < 0) {
      const shapeKeys = keys.filter((key) => value[key] !== undefined);
      node.id = this.shapeKeys.length;
      this.shapeKeys.push(shapeKeys);
      this.shapeLiteral.push(!shapeKeys.includes('__proto__'));
    }
    const shape = node.id;
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
      root = trieNode();
      this.objectRoots.set(shape, root);
    }
    const template = this.composite(root, start, this.shapeKeys[shape]!);
    if (template !== LEAF_JSON) return template;
    this.rewind(references, integers, floats);
    return this.json(value);
  }

  /** The template of an object (keys) or array (null) whose children are on the stack. */
  private composite(root: TrieNode<number>, start: number, keys: readonly string[] | null): number {
    const children = this.children.data;
    const end = this.children.length;
    let node = root;
    for (let index = start; index < end; index++) node = descend(node, children[index]!);
    if (node.id < 0) {
      let size = 1;
      const descriptions: TemplateDescription[] = [];
      for (let index = start; index < end; index++) {
        size += this.size(children[index]!);
        descriptions.push(this.description(children[index]!));
      }
      if (size > MAX_TEMPLATE_SIZE) {
        node.id = LEAF_JSON;
      } else {
        node.id = FIRST_COMPOSITE + this.composites.length;
        this.composites.push({
          description: keys === null ? { a: descriptions } : { k: keys, v: descriptions },
          size,
        });
      }
    }
    this.children.length = start;
    return node.id;
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
    const header = {
      records,
      flags: stringFlags,
      stringCount: this.newStrings.length,
      stringBytes: strings.length,
      templateCount: this.newTemplates.length,
      templateBytes: templates.length,
      referenceCount: this.references.length,
      integerCount: this.integers.length,
      floatCount: this.floats.length,
    };
    const total = blockLength(header);
    const block = Buffer.alloc(total);
    block.set(writeBlockHeader({ total, ...header }), 0);
    let offset = HEADER_BYTES;
    block.set(this.floats.bytes(), offset);
    offset += this.floats.length * 8;
    for (const column of [this.recordTemplates, this.references, this.integers]) {
      block.set(column.bytes(), offset);
      offset += column.length * 4;
    }
    offset += strings.copy(block, offset);
    templates.copy(block, offset);
    return block;
  }
}
