/**
 * A compact binary encoding of JSON values, for the events cache. JSON.parse of a recorded line
 * spends most of its time scanning text and building strings it has built many times before
 * (the same prices, the same market ids); this encoding keeps each block's distinct strings
 * once, each object's key list once (a "shape"), and numbers as varints.
 *
 * Values decode to exactly the objects that were encoded: same keys in the same order, same
 * strings, same numbers, so `JSON.stringify` of a decoded record equals the recorded line.
 *
 * A block is self-contained (its own string and shape tables), so a reader needs one block in
 * memory at a time:
 *
 *   u32 record count
 *   u32 byte length, then a JSON array of the block's strings
 *   u32 byte length, then a JSON array of the block's shapes (arrays of keys)
 *   the values, one after another
 *
 * Value tags: 0 null, 1 false, 2 true, 3 unsigned varint, 4 negative varint, 5 float64 LE,
 * 6 string (varint index), 7 array (varint length, items), 8 object (varint shape, values).
 *
 * Decoding builds each object with a function compiled once per shape, from an object literal,
 * so every record of one kind gets the same hidden class and is built at literal speed. The
 * compiled source holds only JSON-quoted key names; a shape naming `__proto__` is built with
 * `Object.defineProperty` instead, as an object literal would set the prototype.
 */
import { PaperbotError } from '../../core/errors.ts';

const TAG_NULL = 0;
const TAG_FALSE = 1;
const TAG_TRUE = 2;
const TAG_UNSIGNED = 3;
const TAG_NEGATIVE = 4;
const TAG_FLOAT = 5;
const TAG_STRING = 6;
const TAG_ARRAY = 7;
const TAG_OBJECT = 8;

const SHAPE_SEPARATOR = '\u0000';

/**
 * A key list's identity. The fast form (count, then the keys joined by NUL) is unambiguous when
 * no key holds a NUL; a list where one does falls back to its JSON text, which always is.
 */
function shapeSignature(keys: readonly string[]): string {
  for (const key of keys) if (key.includes(SHAPE_SEPARATOR)) return `j${JSON.stringify(keys)}`;
  return `${keys.length}${SHAPE_SEPARATOR}${keys.join(SHAPE_SEPARATOR)}`;
}

/** A node of the encoder's shape trie: one edge per key, a shape index where a key list ends. */
interface ShapeNode {
  readonly next: Map<string, ShapeNode>;
  shape: number;
}

/** Encodes blocks of values. One encoder can encode many blocks; each is independent. */
export class BlockEncoder {
  private buffer = new Uint8Array(1 << 16);
  private position = 0;
  private strings = new Map<string, number>();
  private stringList: string[] = [];
  private shapeRoot: ShapeNode = { next: new Map(), shape: -1 };
  private shapeList: string[][] = [];
  private readonly float = new Float64Array(1);
  private readonly floatBytes = new Uint8Array(this.float.buffer);

  encode(values: readonly unknown[]): Buffer {
    this.position = 0;
    this.strings = new Map();
    this.stringList = [];
    this.shapeRoot = { next: new Map(), shape: -1 };
    this.shapeList = [];
    for (const value of values) this.value(value);
    const stringsJson = Buffer.from(JSON.stringify(this.stringList), 'utf8');
    const shapesJson = Buffer.from(JSON.stringify(this.shapeList), 'utf8');
    const block = Buffer.allocUnsafe(12 + stringsJson.length + shapesJson.length + this.position);
    let offset = block.writeUInt32LE(values.length, 0);
    offset = block.writeUInt32LE(stringsJson.length, offset);
    offset += stringsJson.copy(block, offset);
    offset = block.writeUInt32LE(shapesJson.length, offset);
    offset += shapesJson.copy(block, offset);
    block.set(this.buffer.subarray(0, this.position), offset);
    return block;
  }

  private ensure(bytes: number): void {
    if (this.position + bytes <= this.buffer.length) return;
    const larger = new Uint8Array(Math.max(this.buffer.length * 2, this.position + bytes));
    larger.set(this.buffer.subarray(0, this.position));
    this.buffer = larger;
  }

  private varint(value: number): void {
    this.ensure(10);
    let rest = value;
    while (rest >= 128) {
      this.buffer[this.position++] = (rest % 128) | 128;
      rest = Math.floor(rest / 128);
    }
    this.buffer[this.position++] = rest;
  }

  private tag(tag: number): void {
    this.ensure(1);
    this.buffer[this.position++] = tag;
  }

  private value(value: unknown): void {
    switch (typeof value) {
      case 'string': {
        let index = this.strings.get(value);
        if (index === undefined) {
          index = this.stringList.length;
          this.strings.set(value, index);
          this.stringList.push(value);
        }
        this.tag(TAG_STRING);
        this.varint(index);
        return;
      }
      case 'number':
        if (Number.isSafeInteger(value)) {
          this.tag(value >= 0 ? TAG_UNSIGNED : TAG_NEGATIVE);
          this.varint(Math.abs(value));
        } else if (Number.isFinite(value)) {
          this.tag(TAG_FLOAT);
          this.ensure(8);
          this.float[0] = value;
          this.buffer.set(this.floatBytes, this.position);
          this.position += 8;
        } else {
          // JSON has no infinities or NaN; JSON.stringify writes them as null.
          this.tag(TAG_NULL);
        }
        return;
      case 'boolean':
        this.tag(value ? TAG_TRUE : TAG_FALSE);
        return;
      case 'object': {
        if (value === null) {
          this.tag(TAG_NULL);
          return;
        }
        if (Array.isArray(value)) {
          this.tag(TAG_ARRAY);
          this.varint(value.length);
          for (const item of value) this.value(item);
          return;
        }
        const record = value as Record<string, unknown>;
        const keys = Object.keys(record);
        // Walk the shape trie key by key: no signature string is built for known shapes.
        let node = this.shapeRoot;
        for (const key of keys) {
          if (record[key] === undefined) continue;
          let child = node.next.get(key);
          if (!child) {
            child = { next: new Map(), shape: -1 };
            node.next.set(key, child);
          }
          node = child;
        }
        if (node.shape < 0) {
          node.shape = this.shapeList.length;
          this.shapeList.push(keys.filter((key) => record[key] !== undefined));
        }
        const shape = node.shape;
        this.tag(TAG_OBJECT);
        this.varint(shape);
        for (const key of keys) {
          const field = record[key];
          if (field !== undefined) this.value(field);
        }
        return;
      }
      default:
        throw new PaperbotError('RECORDING_CACHE_ENCODE', `cannot encode a ${typeof value}`);
    }
  }
}

type ShapeBuilder = () => unknown;

function corrupt(message: string): PaperbotError {
  return new PaperbotError('RECORDING_CACHE_CORRUPT', `events cache is damaged: ${message}`);
}

function parseTable(block: Uint8Array, offset: number, length: number): unknown[] {
  if (offset + length > block.byteLength) throw corrupt('block table out of range');
  let table: unknown;
  try {
    table = JSON.parse(Buffer.from(block.buffer, block.byteOffset + offset, length).toString());
  } catch (cause) {
    throw new PaperbotError('RECORDING_CACHE_CORRUPT', 'events cache table is not JSON', { cause });
  }
  if (!Array.isArray(table)) throw corrupt('block table is not an array');
  return table;
}

export interface BlockDecoder {
  /** Decodes one block (as written by `BlockEncoder.encode`) into its values. */
  decode(block: Uint8Array): unknown[];
}

/**
 * Makes a decoder. Keep one per reader: shape builders are compiled once and reused across
 * blocks, which is where the speed comes from. The state lives in closure variables rather than
 * object fields because this is the replay's innermost loop.
 */
export function createBlockDecoder(): BlockDecoder {
  let data: Uint8Array = new Uint8Array(0);
  let view = new DataView(data.buffer);
  let position = 0;
  let strings: unknown[] = [];
  let shapes: ShapeBuilder[] = [];
  const compiled = new Map<string, ShapeBuilder>();

  function varint(): number {
    let byte = data[position++]!;
    if (byte < 128) return byte;
    let result = byte & 127;
    let scale = 128;
    for (;;) {
      byte = data[position++]!;
      if (byte === undefined) throw corrupt('varint past the end of a block');
      result += (byte & 127) * scale;
      if (byte < 128) return result;
      scale *= 128;
    }
  }

  function value(): unknown {
    const tag = data[position++];
    switch (tag) {
      case TAG_STRING: {
        const text = strings[varint()];
        if (typeof text !== 'string') throw corrupt('string index out of range');
        return text;
      }
      case TAG_OBJECT: {
        const builder = shapes[varint()];
        if (!builder) throw corrupt('shape index out of range');
        return builder();
      }
      case TAG_UNSIGNED:
        return varint();
      case TAG_NULL:
        return null;
      case TAG_ARRAY: {
        const length = varint();
        if (length > data.length - position) throw corrupt('array longer than its block');
        const items: unknown[] = [];
        for (let index = 0; index < length; index++) items.push(value());
        return items;
      }
      case TAG_FALSE:
        return false;
      case TAG_TRUE:
        return true;
      case TAG_NEGATIVE:
        return -varint();
      case TAG_FLOAT: {
        if (position + 8 > data.length) throw corrupt('number past the end of a block');
        const number = view.getFloat64(position, true);
        position += 8;
        return number;
      }
      default:
        throw corrupt(`unknown value tag ${String(tag)}`);
    }
  }

  function compile(keys: readonly string[]): ShapeBuilder {
    const fields = keys.map((key) => `${JSON.stringify(key)}: next()`).join(', ');
    // The source is built from JSON-quoted key names only, never from values.
    const factory = new Function('next', `return () => ({ ${fields} });`) as (
      next: () => unknown,
    ) => ShapeBuilder;
    return factory(value);
  }

  function slowBuilder(keys: readonly string[]): ShapeBuilder {
    return () => {
      const target: Record<string, unknown> = {};
      for (const key of keys) {
        Object.defineProperty(target, key, {
          value: value(),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return target;
    };
  }

  function builder(keys: unknown): ShapeBuilder {
    if (!Array.isArray(keys) || !keys.every((key) => typeof key === 'string')) {
      throw corrupt('bad shape');
    }
    const signature = shapeSignature(keys);
    let found = compiled.get(signature);
    if (!found) {
      found = keys.includes('__proto__') ? slowBuilder(keys) : compile(keys);
      compiled.set(signature, found);
    }
    return found;
  }

  return {
    decode(block: Uint8Array): unknown[] {
      if (block.byteLength < 12) throw corrupt('block shorter than its header');
      const header = new DataView(block.buffer, block.byteOffset, block.byteLength);
      const count = header.getUint32(0, true);
      let offset = 4;
      const stringsLength = header.getUint32(offset, true);
      offset += 4;
      const stringTable = parseTable(block, offset, stringsLength);
      offset += stringsLength;
      if (offset + 4 > block.byteLength) throw corrupt('block header out of range');
      const shapesLength = header.getUint32(offset, true);
      offset += 4;
      const shapeTable = parseTable(block, offset, shapesLength);
      offset += shapesLength;
      strings = stringTable;
      shapes = shapeTable.map(builder);
      data = block.subarray(offset);
      view = new DataView(data.buffer, data.byteOffset, data.byteLength);
      position = 0;
      const values: unknown[] = [];
      for (let index = 0; index < count; index++) values.push(value());
      if (position !== data.length) throw corrupt('trailing bytes in a block');
      return values;
    },
  };
}
