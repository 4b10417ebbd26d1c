/**
 * A block's record templates turned into code: each template compiles once (per process) into
 * a function made of one object literal whose leaves read straight from the block's columns;
 * a record template `{v, t, k, m, d}` also into a `DeferredRecord` header whose `d` is built
 * when first read. Layout: `block-layout.ts`.
 */
import { PaperbotError } from '../../core/errors.ts';
import {
  corrupt,
  LEAF_JSON,
  LEAF_STRING,
  leafSource,
  type LeafOffsets,
  MAX_DEPTH,
  MAX_TEMPLATE_SIZE,
} from './block-layout.ts';

/** Builds one record from the columns at the given positions. */
export type BuildFunction = (
  strings: readonly string[],
  references: Int32Array,
  integers: Int32Array,
  floats: Float64Array,
  parse: (text: string) => unknown,
  reference: number,
  integer: number,
  float: number,
) => unknown;

export interface Builder {
  readonly build: BuildFunction;
  readonly references: number;
  readonly integers: number;
  readonly floats: number;
  /** How a record of this template is handed out with its `d` left encoded (null: it cannot). */
  readonly deferred: DeferredPlan | null;
}

/** The columns of one block, which a deferred record decodes its `d` from. */
export interface BlockColumns {
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
  const offsets: LeafOffsets = { references: 0, integers: 0, floats: 0 };
  let nodes = 0;
  const expression = (node: unknown, depth: number): string => {
    if (++nodes > MAX_TEMPLATE_SIZE || depth > MAX_DEPTH + 1) throw corrupt('template too large');
    if (typeof node === 'number') {
      const source = leafSource(node, offsets);
      if (source === null) throw corrupt(`unknown template leaf ${node}`);
      return source;
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
    references: offsets.references,
    integers: offsets.integers,
    floats: offsets.floats,
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
  const offsets: LeafOffsets = { references: 0, integers: 0, floats: 0 };
  const fields: Record<string, string> = {};
  let kindReference = -1;
  let body: { reference: number; integer: number; float: number; builder: Builder } | null = null;
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index] as string;
    const leaf = values[index] as unknown;
    if (key === 'd') {
      if (typeof leaf !== 'object' || leaf === null) return null;
      const builder = templateBuilder(JSON.stringify(leaf));
      body = {
        reference: offsets.references,
        integer: offsets.integers,
        float: offsets.floats,
        builder,
      };
      offsets.references += builder.references;
      offsets.integers += builder.integers;
      offsets.floats += builder.floats;
      continue;
    }
    // A header field is a plain leaf: JSON text would have to be parsed at once.
    if (leaf === LEAF_JSON) return null;
    if (key === 'k' && leaf === LEAF_STRING) kindReference = offsets.references;
    const source = leafSource(leaf, offsets);
    if (source === null) return null;
    fields[key] = source;
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

export function templateBuilder(text: string): Builder {
  let builder = compiledTemplates.get(text);
  if (!builder) {
    builder = compileTemplate(text);
    if (compiledTemplates.size >= MAX_COMPILED_TEMPLATES) compiledTemplates.clear();
    compiledTemplates.set(text, builder);
  }
  return builder;
}
