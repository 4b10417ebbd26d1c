/**
 * Reading what a service sends (contract section 7: send strictly, read tolerantly).
 *
 * The schemas of this folder are what the emulator sends; `readWire` is how a client reads with
 * them, in one of two modes:
 *
 * - `strict`: the schema as it is. A field the schema does not list is refused where the object
 *   is strict. The project's own tests read the emulator this way, so the emulator cannot drift.
 * - `tolerant` (the default for users): the same schema loosened (`tolerantSchema`): every object
 *   keeps fields it does not list, a value outside an enum the interface leaves open reads as
 *   that enum's safe meaning, and an item of a list (the body's own array, or its `data` or
 *   `results`) that breaks its schema is left out of the list and returned in `skipped`, so one
 *   bad item never loses the others. Fields the schemas require stay required and typed.
 *
 * Both modes report what the schema does not know (`Drift`): each field not in its shape, by
 * shape name and path, and each value outside an open enum, with the meaning it was given.
 */
import { z } from 'zod';

export type ReadingMode = 'tolerant' | 'strict';

export const READING_MODES: readonly ReadingMode[] = ['tolerant', 'strict'];

export type WirePath = readonly (string | number)[];

export type Drift =
  | {
      readonly kind: 'unknown_field';
      /** The schema's name (`Market`, `OrderStatusEventData`, `RouteCapabilities`, ...). */
      readonly shape: string;
      readonly field: string;
      readonly path: WirePath;
    }
  | {
      readonly kind: 'unknown_value';
      readonly shape: string;
      readonly field: string;
      readonly path: WirePath;
      readonly value: string;
      /** The value it was read as; null when the field keeps the text as it came. */
      readonly meaning: string | null;
    };

/** An item of a list that breaks its schema, left out of the list (tolerant mode). */
export interface SkippedItem {
  /** The item's path in the body (`['data', 3]`). */
  readonly path: WirePath;
  /** The issues, paths from the body (`['data', 3, 'data', 'to_state']`). */
  readonly issues: readonly z.core.$ZodIssue[];
  /** The item as it came. */
  readonly raw: unknown;
}

export type WireReading<T> =
  | {
      readonly ok: true;
      readonly value: T;
      readonly drift: readonly Drift[];
      readonly skipped: readonly SkippedItem[];
    }
  | {
      readonly ok: false;
      readonly issues: readonly z.core.$ZodIssue[];
      readonly drift: readonly Drift[];
      readonly skipped: readonly SkippedItem[];
    };

// ---------------------------------------------------------------------------------------------
// Registries: names of shapes, open enums, and schemas whose tolerant twin is built by hand.

const shapeNames = new WeakMap<z.ZodType, string>();

/** Names `schema` for reports (the first name given wins). Returns it. */
export function nameShape<S extends z.ZodType>(name: string, schema: S): S {
  if (!shapeNames.has(schema)) shapeNames.set(schema, name);
  return schema;
}

/** Names every zod schema among a module's exports by its export name. */
export function nameShapes(exports: Readonly<Record<string, unknown>>): void {
  for (const [name, value] of Object.entries(exports)) {
    if (value instanceof z.ZodType) nameShape(name, value);
  }
}

interface OpenValues {
  readonly known: ReadonlySet<string>;
  /** What an unknown value reads as in tolerant mode; null: kept as it came. */
  readonly meaning: string | null;
}

const openValues = new WeakMap<z.ZodType, OpenValues>();

/**
 * An enum the interface does not close: strict mode reads it as `z.enum(values)`; tolerant mode
 * reads any other string as `meaning` (the safe reading), reported as drift.
 */
export function openEnum<const Values extends readonly [string, ...string[]]>(
  values: Values,
  meaning: Values[number],
) {
  const schema = z.enum(values);
  openValues.set(schema, { known: new Set(values), meaning });
  return schema;
}

/**
 * A string field with values the interface names but does not close (a trade's `side`,
 * `execution_stage`): read as the string it is in both modes; a value outside `known` is
 * reported as drift.
 */
export function openString(known: readonly string[]): z.ZodString {
  const schema = z.string();
  openValues.set(schema, { known: new Set(known), meaning: null });
  return schema;
}

const twins = new WeakMap<z.ZodType, z.ZodType>();
const dispatchers = new WeakMap<z.ZodType, (input: unknown) => z.ZodType | null>();

/**
 * For a schema that decides at parse time which schema reads its input (a transform):
 * `tolerant` is its loosened twin, `dispatch` tells the drift walk which schema reads an input.
 */
export function registerDynamicSchema(
  schema: z.ZodType,
  tolerant: z.ZodType,
  dispatch: (input: unknown) => z.ZodType | null,
): void {
  twins.set(schema, tolerant);
  dispatchers.set(schema, dispatch);
}

// ---------------------------------------------------------------------------------------------
// The tolerant schema: the same tree, objects loose, open enums opened.

const loosened = new WeakMap<z.ZodType, z.ZodType>();

type AnyDef = z.core.$ZodTypeDef & Record<string, unknown>;

function defOf(schema: z.ZodType): AnyDef {
  return schema.def as unknown as AnyDef;
}

function withDef(schema: z.ZodType, def: AnyDef): z.ZodType {
  return schema.clone(def as unknown as typeof schema.def);
}

function openReading(values: OpenValues): z.ZodType {
  if (values.meaning === null) return z.string();
  const meaning = values.meaning;
  return z.string().transform((value) => (values.known.has(value) ? value : meaning));
}

/**
 * The type a wrapper wraps (optional, nullable, a default, readonly, a catch): read as its inner
 * type; null for any other type.
 */
function wrappedType(def: {
  readonly type: string;
  readonly innerType?: unknown;
}): z.ZodType | null {
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'nonoptional':
    case 'readonly':
    case 'catch':
      return def.innerType as z.ZodType;
    default:
      return null;
  }
}

/** The tolerant form of `schema` (see the header). Built once per schema. */
export function tolerantSchema<S extends z.ZodType>(schema: S): S {
  const cached = loosened.get(schema);
  if (cached !== undefined) return cached as S;
  const built = buildTolerant(schema);
  loosened.set(schema, built);
  return built as S;
}

function buildTolerant(schema: z.ZodType): z.ZodType {
  const twin = twins.get(schema);
  if (twin !== undefined) return twin;
  const open = openValues.get(schema);
  if (open !== undefined) return openReading(open);
  const def = defOf(schema);
  const inner = wrappedType(def);
  if (inner !== null) return withDef(schema, { ...def, innerType: tolerantSchema(inner) });
  switch (def.type) {
    case 'object': {
      const shape = def.shape as Record<string, z.ZodType>;
      const loose: Record<string, z.ZodType> = {};
      for (const [key, value] of Object.entries(shape)) loose[key] = tolerantSchema(value);
      const catchall = def.catchall as z.ZodType | undefined;
      const keepsOthers = catchall !== undefined && defOf(catchall).type !== 'never';
      return withDef(schema, {
        ...def,
        shape: loose,
        catchall: keepsOthers ? tolerantSchema(catchall) : z.unknown(),
      });
    }
    case 'array':
      return withDef(schema, { ...def, element: tolerantSchema(def.element as z.ZodType) });
    case 'union':
      return withDef(schema, {
        ...def,
        options: (def.options as z.ZodType[]).map((option) => tolerantSchema(option)),
      });
    case 'pipe':
      return withDef(schema, {
        ...def,
        in: tolerantSchema(def.in as z.ZodType),
        out: tolerantSchema(def.out as z.ZodType),
      });
    default:
      return schema;
  }
}

// ---------------------------------------------------------------------------------------------
// The drift walk: the input as it came, beside the schema that reads it.

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function literalValues(schema: z.ZodType | undefined): readonly unknown[] {
  if (schema === undefined) return [];
  const def = defOf(schema);
  if (def.type === 'literal') return def.values as unknown[];
  if (def.type === 'enum') return Object.values(def.entries as Record<string, unknown>);
  return [];
}

function discriminatedOption(
  options: readonly z.ZodType[],
  discriminator: string,
  input: Record<string, unknown>,
): z.ZodType | null {
  const value = input[discriminator];
  for (const option of options) {
    const def = defOf(option);
    if (def.type !== 'object') continue;
    const shape = def.shape as Record<string, z.ZodType>;
    if (literalValues(shape[discriminator]).includes(value)) return option;
  }
  return null;
}

function unionOption(options: readonly z.ZodType[], input: unknown): z.ZodType | null {
  for (const option of options) {
    if (tolerantSchema(option).safeParse(input).success) return option;
  }
  return null;
}

/** The last field name of a path ('' at the root): `['data', 3, 'side']` -> `side`. */
function lastField(path: readonly (string | number)[]): string {
  for (let index = path.length - 1; index >= 0; index--) {
    const part = path[index];
    if (typeof part === 'string') return part;
  }
  return '';
}

interface WalkContext {
  readonly drift: Drift[];
  /** Bounds the report of one body (a hostile body could name a million fields). */
  readonly limit: number;
}

const DRIFT_LIMIT = 256;

function walk(
  schema: z.ZodType,
  input: unknown,
  path: (string | number)[],
  shape: string,
  context: WalkContext,
): void {
  if (context.drift.length >= context.limit) return;
  const open = openValues.get(schema);
  if (open !== undefined) {
    if (typeof input === 'string' && !open.known.has(input)) {
      context.drift.push({
        kind: 'unknown_value',
        shape,
        field: lastField(path),
        path: [...path],
        value: input.slice(0, 80),
        meaning: open.meaning,
      });
    }
    return;
  }
  const dispatch = dispatchers.get(schema);
  if (dispatch !== undefined) {
    const chosen = dispatch(input);
    if (chosen !== null) walk(chosen, input, path, shapeNames.get(chosen) ?? shape, context);
    return;
  }
  const def = defOf(schema);
  const inner = wrappedType(def);
  if (inner !== null) {
    if (input !== null && input !== undefined) walk(inner, input, path, shape, context);
    return;
  }
  switch (def.type) {
    case 'object': {
      if (!isPlainObject(input)) return;
      const fields = def.shape as Record<string, z.ZodType>;
      // An object without a name of its own is named after its field: `FillEventReading.data`.
      const field = lastField(path);
      const name = shapeNames.get(schema) ?? (field === '' ? shape : `${shape}.${field}`);
      // An object whose fields the interface does not show at all: every field is its own.
      const anyObject = Object.keys(fields).length === 0;
      for (const key of Object.keys(input)) {
        const field = fields[key];
        if (field !== undefined) {
          path.push(key);
          walk(field, input[key], path, name, context);
          path.pop();
        } else if (!anyObject) {
          context.drift.push({ kind: 'unknown_field', shape: name, field: key, path: [...path] });
          if (context.drift.length >= context.limit) return;
        }
      }
      return;
    }
    case 'array': {
      if (!Array.isArray(input)) return;
      const element = def.element as z.ZodType;
      for (let index = 0; index < input.length; index++) {
        path.push(index);
        walk(element, input[index], path, shape, context);
        path.pop();
      }
      return;
    }
    case 'union': {
      const options = def.options as z.ZodType[];
      const discriminator = def.discriminator as string | undefined;
      const chosen =
        discriminator !== undefined
          ? isPlainObject(input)
            ? discriminatedOption(options, discriminator, input)
            : null
          : unionOption(options, input);
      if (chosen !== null) walk(chosen, input, path, shape, context);
      return;
    }
    case 'pipe':
      walk(def.in as z.ZodType, input, path, shape, context);
      return;
    default:
      return;
  }
}

/** What `schema` does not know in `input`: unknown fields and values outside open enums. */
export function driftOf(schema: z.ZodType, input: unknown, shape?: string): Drift[] {
  const context: WalkContext = { drift: [], limit: DRIFT_LIMIT };
  walk(schema, input, [], shape ?? shapeNames.get(schema) ?? 'body', context);
  return context.drift;
}

// ---------------------------------------------------------------------------------------------
// Reading.

/** The lists whose items are left out one by one: the body's own array, its `data`, `results`. */
const ITEM_LIST_FIELDS: ReadonlySet<string> = new Set(['data', 'results']);

function itemPathOf(issuePath: readonly PropertyKey[], rootIsArray: boolean): WirePath | null {
  if (rootIsArray) {
    const index = issuePath[0];
    return typeof index === 'number' ? [index] : null;
  }
  const field = issuePath[0];
  const index = issuePath[1];
  if (typeof field === 'string' && ITEM_LIST_FIELDS.has(field) && typeof index === 'number') {
    return [field, index];
  }
  return null;
}

function pathKey(path: WirePath): string {
  return path.join('\u0000');
}

/** `input` without the items at `paths` (copies only the lists it changes). */
function withoutItems(input: unknown, paths: readonly WirePath[]): unknown {
  if (Array.isArray(input)) {
    const drop = new Set(paths.map((path) => path[0]));
    return input.filter((_, index) => !drop.has(index));
  }
  if (!isPlainObject(input)) return input;
  const copy: Record<string, unknown> = { ...input };
  for (const field of ITEM_LIST_FIELDS) {
    const list = copy[field];
    if (!Array.isArray(list)) continue;
    const drop = new Set(paths.filter((path) => path[0] === field).map((path) => path[1]));
    if (drop.size > 0) copy[field] = list.filter((_, index) => !drop.has(index));
  }
  return copy;
}

function itemAt(input: unknown, path: WirePath): unknown {
  let value = input;
  for (const part of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string | number, unknown>)[part];
  }
  return value;
}

/**
 * Reads `input` with `schema` in `mode` (see the header). Never throws for what the input is;
 * a failure returns the issues, paths from the body.
 */
export function readWire<S extends z.ZodType>(
  schema: S,
  input: unknown,
  mode: ReadingMode,
): WireReading<z.output<S>> {
  const drift = driftOf(schema, input);
  const strict = schema.safeParse(input);
  if (strict.success) return { ok: true, value: strict.data, drift, skipped: [] };
  if (mode === 'strict') return { ok: false, issues: strict.error.issues, drift, skipped: [] };
  const tolerant = tolerantSchema(schema);
  const first = tolerant.safeParse(input);
  if (first.success) return { ok: true, value: first.data, drift, skipped: [] };
  // Items that break their schema are left out; anything else that breaks fails the body.
  const rootIsArray = Array.isArray(input);
  const itemPaths = new Map<string, { path: WirePath; issues: z.core.$ZodIssue[] }>();
  for (const issue of first.error.issues) {
    const path = itemPathOf(issue.path, rootIsArray);
    if (path === null) return { ok: false, issues: first.error.issues, drift, skipped: [] };
    const key = pathKey(path);
    const held = itemPaths.get(key) ?? { path, issues: [] };
    held.issues.push(issue);
    itemPaths.set(key, held);
  }
  const items = [...itemPaths.values()];
  const trimmed = withoutItems(
    input,
    items.map((item) => item.path),
  );
  const second = tolerant.safeParse(trimmed);
  const skipped = items.map((item) => ({
    path: item.path,
    issues: item.issues,
    raw: itemAt(input, item.path),
  }));
  if (!second.success) return { ok: false, issues: first.error.issues, drift, skipped: [] };
  return { ok: true, value: second.data, drift, skipped };
}

/** `body.data[3].data.to_state` */
export function formatWirePath(path: readonly PropertyKey[], root = 'body'): string {
  let text = root;
  for (const part of path) {
    text += typeof part === 'number' ? `[${part}]` : `.${String(part)}`;
  }
  return text;
}

function isPresent(input: unknown, path: readonly PropertyKey[]): boolean {
  let value = input;
  for (const part of path) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, part)) return false;
    value = (value as Record<PropertyKey, unknown>)[part];
  }
  return value !== undefined;
}

/** One line naming each broken path and why, at most `limit` of them. */
export function describeIssues(
  issues: readonly z.core.$ZodIssue[],
  input: unknown,
  root = 'body',
  limit = 5,
): string {
  const parts = issues.slice(0, limit).map((issue) => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys
        .map((key) => `${formatWirePath([...issue.path, key], root)}: not in the interface`)
        .join(', ');
    }
    const missing = !isPresent(input, issue.path);
    return `${formatWirePath(issue.path, root)}: ${missing ? 'required' : issue.message}`;
  });
  const more = issues.length > limit ? ` and ${issues.length - limit} more` : '';
  return `${parts.join('; ')}${more}`;
}

const skippedByValue = new WeakMap<object, readonly SkippedItem[]>();

/** Attaches the items a tolerant read left out to the value read (see `skippedItemsOf`). */
export function withSkippedItems<T>(value: T, skipped: readonly SkippedItem[]): T {
  if (skipped.length > 0 && typeof value === 'object' && value !== null) {
    skippedByValue.set(value, skipped);
  }
  return value;
}

/** The items a tolerant read left out of this list or page (none for a strict read). */
export function skippedItemsOf(value: unknown): readonly SkippedItem[] {
  if (typeof value !== 'object' || value === null) return [];
  return skippedByValue.get(value) ?? [];
}
