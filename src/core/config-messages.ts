/**
 * Config problems in one voice. zod's issues become plain sentences that follow a path and a
 * colon ("must be at most 65535", "unknown key; did you mean `strategies_dir`?"), one problem
 * per path: the follow-up checks zod runs on a value already refused are dropped, and so are
 * cross-field checks of an object one of whose fields failed on its own (they judged a value
 * that is not there). A message the schema's author wrote is kept as written.
 *
 * Parse with `{ reportInput: true }` so the issues carry the values they judged; without it
 * the sentences are less specific and cross-field checks are not told apart.
 */
import { distance } from 'fastest-levenshtein';
import { z } from 'zod';

export interface ConfigProblem {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

type Issue = z.core.$ZodIssue;

const englishMessages = z.locales.en();

/** zod's own English text for an issue; a different message was written by the schema's author. */
function isDefaultMessage(issue: Issue): boolean {
  const localeError = englishMessages.localeError as (issue: unknown) => unknown;
  const produced = localeError(issue);
  const text =
    typeof produced === 'string'
      ? produced
      : (produced as { message?: unknown } | undefined)?.message;
  return text === issue.message || issue.message === 'Invalid input';
}

/**
 * The sentence for a decimal string that was refused: shared by every decimal of every config
 * (risk limits, strategy params), so they all say the same.
 */
export function decimalStringMessage(kind: 'positive' | 'non-negative', input: unknown): string {
  const example =
    typeof input === 'number' && Number.isFinite(input) && input > 0
      ? String(input)
      : typeof input === 'string' && /^-(?=.*[1-9])\d*\.?\d*$/.test(input.trim())
        ? input.trim().slice(1)
        : kind === 'positive'
          ? '0.5'
          : '0';
  const quote = typeof input === 'number' ? '; quote decimals in YAML' : '';
  return `must be a ${kind} decimal string such as '${example}'${quote}`;
}

/**
 * The closest of `candidates` to `word`, when it is close enough to be what was meant. Case,
 * `_` and `-` are ignored (`strategiesDir`, `strategies-dir`), and a key that is part of
 * another (`spread_ticks` in `halfSpreadTicks`) counts as close.
 */
export function didYouMean(word: string, candidates: readonly string[]): string | null {
  const folded = (text: string) => text.toLowerCase().replace(/[-_]/g, '');
  const target = folded(word);
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const other = folded(candidate);
    const contains =
      Math.min(target.length, other.length) >= 4 &&
      (other.includes(target) || target.includes(other));
    const gap = contains ? Math.min(1, distance(target, other)) : distance(target, other);
    if (gap < bestDistance) {
      best = candidate;
      bestDistance = gap;
    }
  }
  const allowed = Math.max(2, Math.floor(target.length / 3));
  return best !== null && bestDistance <= allowed ? best : null;
}

// Walking a schema to the object at a path, for the keys it allows.

interface Definition {
  readonly type: string;
  readonly shape?: Record<string, z.ZodType>;
  readonly innerType?: z.ZodType;
  readonly in?: z.ZodType;
  readonly element?: z.ZodType;
  readonly valueType?: z.ZodType;
  readonly options?: readonly z.ZodType[];
  readonly getter?: () => z.ZodType;
}

function definitionOf(schema: z.ZodType): Definition {
  return (schema as unknown as { _zod: { def: Definition } })._zod.def;
}

/** The object schemas a value at `path` may be checked by (several under a union). */
function objectsAt(schema: z.ZodType, path: readonly PropertyKey[], depth = 0): Definition[] {
  if (depth > 64) return [];
  const definition = definitionOf(schema);
  const step = (next: z.ZodType | undefined, rest: readonly PropertyKey[]) =>
    next === undefined ? [] : objectsAt(next, rest, depth + 1);
  switch (definition.type) {
    case 'default':
    case 'prefault':
    case 'optional':
    case 'nullable':
    case 'readonly':
    case 'catch':
    case 'nonoptional':
      return step(definition.innerType, path);
    case 'pipe':
      return step(definition.in, path);
    case 'lazy':
      return definition.getter === undefined ? [] : step(definition.getter(), path);
    case 'union':
      return (definition.options ?? []).flatMap((option) => step(option, path));
    case 'object':
      if (path.length === 0) return [definition];
      return step(definition.shape?.[String(path[0])], path.slice(1));
    case 'array':
      return path.length === 0 ? [] : step(definition.element, path.slice(1));
    case 'record':
      return path.length === 0 ? [] : step(definition.valueType, path.slice(1));
    default:
      return [];
  }
}

function keysAllowedAt(schema: z.ZodType | undefined, path: readonly PropertyKey[]): string[] {
  if (schema === undefined) return [];
  return [...new Set(objectsAt(schema, path).flatMap((object) => Object.keys(object.shape ?? {})))];
}

// Sentences.

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

function typeSentence(expected: string, input: unknown): string {
  if (input === undefined) return 'is required';
  switch (expected) {
    case 'string':
      if (typeof input === 'number') {
        const decimals = !Number.isInteger(input);
        return `must be a string such as '${input}'; quote ${decimals ? 'decimals' : 'it'} in YAML`;
      }
      return 'must be a string';
    case 'int':
      if (typeof input === 'number') return 'must be a whole number';
      if (typeof input === 'string' && /^-?\d+$/.test(input.trim())) {
        return `must be a whole number: write ${input.trim()} without quotes`;
      }
      return 'must be a whole number';
    case 'number':
      if (typeof input === 'string' && /^-?\d+(\.\d+)?$/.test(input.trim())) {
        return `must be a number: write ${input.trim()} without quotes`;
      }
      return 'must be a number';
    case 'boolean':
      return 'must be true or false';
    case 'array':
      return 'must be a list';
    case 'object':
    case 'record':
      return 'must be a mapping of keys';
    case 'null':
      return 'must be null';
    default:
      return `must be ${/^[aeiou]/.test(expected) ? 'an' : 'a'} ${expected}`;
  }
}

/** A bound's sentence: `extent` for a length or an inclusive bound, `beyond` for a strict one. */
function boundSentence(
  origin: string,
  limit: string,
  inclusive: boolean | undefined,
  extent: 'at most' | 'at least',
  beyond: 'less than' | 'greater than',
): string {
  switch (origin) {
    case 'string':
      return `must be ${extent} ${plural(Number(limit), 'character', 'characters')} long`;
    case 'array':
    case 'set':
      return `must list ${extent} ${plural(Number(limit), 'item', 'items')}`;
    default:
      return inclusive === false ? `must be ${beyond} ${limit}` : `must be ${extent} ${limit}`;
  }
}

function tooBigSentence(issue: z.core.$ZodIssueTooBig): string {
  return boundSentence(
    issue.origin,
    String(issue.maximum),
    issue.inclusive,
    'at most',
    'less than',
  );
}

function tooSmallSentence(issue: z.core.$ZodIssueTooSmall): string {
  const minimum = String(issue.minimum);
  if (issue.origin === 'string' && Number(minimum) <= 1) return 'must not be empty';
  return boundSentence(issue.origin, minimum, issue.inclusive, 'at least', 'greater than');
}

function quoted(value: unknown): string {
  return typeof value === 'string' ? `'${value}'` : String(value);
}

function valueSentence(issue: z.core.$ZodIssueInvalidValue): string {
  const values = issue.values;
  const base =
    values.length === 1
      ? `must be ${quoted(values[0])}`
      : `must be one of ${values.map(quoted).join(', ')}`;
  const input = (issue as { input?: unknown }).input;
  if (typeof input !== 'string') return base;
  const suggestion = didYouMean(
    input,
    values.filter((value): value is string => typeof value === 'string'),
  );
  return suggestion === null ? base : `${base}; did you mean '${suggestion}'?`;
}

function unionSentence(issue: z.core.$ZodIssueInvalidUnion): string {
  const branches = issue.errors;
  // A branch whose type matched but whose checks failed says what is wrong.
  const matched = branches.find(
    (branch) => branch.length > 0 && branch.every((inner) => inner.code !== 'invalid_type'),
  );
  if (matched !== undefined) return sentenceOf(matched[0]!);
  const expected = branches
    .map((branch) => (branch.length === 1 && branch[0]!.code === 'invalid_type' ? branch[0] : null))
    .filter((inner) => inner !== null);
  if (expected.length === branches.length && expected.length > 0) {
    const input = (issue as { input?: unknown }).input;
    if (input === undefined) return 'is required';
    const kinds = [...new Set(expected.map((inner) => typeSentence(inner.expected, {})))];
    return `must be ${kinds.map((kind) => kind.replace(/^must be /, '')).join(' or ')}`;
  }
  return 'is not valid';
}

function sentenceOf(issue: Issue): string {
  if (!isDefaultMessage(issue)) return issue.message;
  const input = (issue as { input?: unknown }).input;
  switch (issue.code) {
    case 'invalid_type':
      return typeSentence(issue.expected, input);
    case 'too_big':
      return tooBigSentence(issue);
    case 'too_small':
      return tooSmallSentence(issue);
    case 'invalid_value':
      return valueSentence(issue);
    case 'invalid_union':
      return unionSentence(issue);
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}`;
    case 'invalid_format':
      return issue.format === 'regex'
        ? `does not have the expected form (${issue.pattern ?? 'a pattern'})`
        : `must be a valid ${issue.format}`;
    case 'invalid_key':
      return `has a key that is not valid: ${issue.issues[0] === undefined ? 'not valid' : sentenceOf(issue.issues[0])}`;
    case 'invalid_element':
      return issue.issues[0] === undefined ? 'is not valid' : sentenceOf(issue.issues[0]);
    default:
      return 'is not valid';
  }
}

function pathKey(path: readonly PropertyKey[]): string {
  return JSON.stringify(path.map((part) => (typeof part === 'symbol' ? String(part) : part)));
}

function startsWith(path: readonly PropertyKey[], prefix: readonly PropertyKey[]): boolean {
  return prefix.length <= path.length && prefix.every((part, index) => path[index] === part);
}

/** A refinement of an object that reports on one of its fields: it judged the whole object. */
function isCrossField(issue: Issue): boolean {
  const input = (issue as { input?: unknown }).input;
  return (
    issue.code === 'custom' &&
    issue.path.length > 0 &&
    typeof input === 'object' &&
    input !== null &&
    !Array.isArray(input)
  );
}

/**
 * The problems of a failed parse in plain sentences, one per path, in zod's order. `schema` is
 * the schema that was parsed: with it, an unknown key gets the nearest allowed key suggested.
 */
export function explainConfigIssues(issues: readonly Issue[], schema?: z.ZodType): ConfigProblem[] {
  const own = issues.filter((issue) => !isCrossField(issue));
  const problems: ConfigProblem[] = [];
  const seen = new Set<string>();
  const add = (path: readonly PropertyKey[], message: string) => {
    const key = pathKey(path);
    if (seen.has(key)) return;
    seen.add(key);
    problems.push({ path, message });
  };
  for (const issue of issues) {
    if (isCrossField(issue)) {
      const parent = issue.path.slice(0, -1);
      const fieldFailed = own.some(
        (other) => other.path.length > parent.length && startsWith(other.path, parent),
      );
      if (fieldFailed) continue;
    }
    if (issue.code === 'unrecognized_keys') {
      const allowed = keysAllowedAt(schema, issue.path);
      for (const key of issue.keys) {
        const suggestion = didYouMean(key, allowed);
        add(
          [...issue.path, key],
          suggestion === null ? 'unknown key' : `unknown key; did you mean \`${suggestion}\`?`,
        );
      }
      continue;
    }
    add(issue.path, sentenceOf(issue));
  }
  return problems;
}
