/**
 * Reading YAML config files the same way everywhere (the bot's and the backtest's): every problem
 * is collected with its path (`risk.max_orders_per_second`, `strategies[0].params.x`) and thrown
 * at once as one INVALID_CONFIG error, before anything connects.
 */
import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { explainConfigIssues } from '../core/config-messages.ts';
import { PaperbotError } from '../core/errors.ts';

/** One problem of a config file: where (`risk.max_orders_per_second`) and what. */
export interface ConfigIssue {
  readonly path: string;
  readonly message: string;
}

/** `risk.max_orders_per_second`, `strategies[0].params.markets[1]`. */
export function formatConfigPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  let text = '';
  for (const part of path) {
    if (typeof part === 'number') text += `[${part}]`;
    else text += text === '' ? String(part) : `.${String(part)}`;
  }
  return text;
}

/**
 * A failed parse's problems in plain sentences, one per path (src/core/config-messages.ts).
 * `schema`, the schema that was parsed, lets an unknown key get the nearest allowed one
 * suggested. Parse with `{ reportInput: true }` for the most specific sentences.
 */
export function configIssuesOf(
  error: z.ZodError,
  prefix: readonly PropertyKey[] = [],
  schema?: z.ZodType,
): ConfigIssue[] {
  return explainConfigIssues(error.issues, schema).map((problem) => ({
    path: formatConfigPath([...prefix, ...problem.path]),
    message: problem.message,
  }));
}

/** The INVALID_CONFIG error: every issue in `details.issues`, one per line in the message. */
export function invalidConfigError(source: string, issues: readonly ConfigIssue[]): PaperbotError {
  const count = `${issues.length} ${issues.length === 1 ? 'problem' : 'problems'}`;
  return new PaperbotError(
    'INVALID_CONFIG',
    `invalid config ${source} (${count}):\n${issues.map((issue) => `  - ${issue.path}: ${issue.message}`).join('\n')}`,
    { details: { source, issues } },
  );
}

function parseYamlText(text: string, issues: ConfigIssue[]): unknown {
  const document = parseDocument(text, { uniqueKeys: true });
  for (const error of document.errors) {
    const where = error.linePos?.[0];
    // The first line only: the rest quotes the file around the fault.
    const message = (error.message.split('\n')[0] ?? error.message).replace(
      / at line \d+, column \d+:?$/,
      '',
    );
    issues.push({
      path: where === undefined ? '(yaml)' : `(yaml line ${where.line}, column ${where.col})`,
      message,
    });
  }
  if (document.errors.length > 0) return undefined;
  try {
    return document.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) as unknown;
  } catch (error) {
    // An alias bomb (aliases of aliases, billions of nodes once expanded) stops here.
    issues.push({ path: '(yaml)', message: yamlFailureOf(error) });
    return undefined;
  }
}

/**
 * Aliases expanded per document at most (the yaml package's default). Config files use a few
 * anchors at most; a file that needs more is an alias bomb.
 */
export const MAX_ALIAS_COUNT = 100;

/** The first line of a YAML failure, without the text of the file it may quote. */
export function yamlFailureOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (message.split('\n')[0] ?? message).replace(/ at line \d+, column \d+:?$/, '');
}

/** Reads a config file's YAML without checking it (`INVALID_CONFIG` for unreadable YAML). */
export function readConfigDocument(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw invalidConfigError(path, [
      {
        path: '(file)',
        message: code === 'ENOENT' ? 'the file does not exist' : `cannot read it (${String(code)})`,
      },
    ]);
  }
  const issues: ConfigIssue[] = [];
  const document = parseYamlText(text, issues);
  if (issues.length === 0 && document !== null && document !== undefined) {
    if (typeof document !== 'object' || Array.isArray(document)) {
      issues.push({ path: '(root)', message: 'the config must be a mapping of keys' });
    }
  }
  if (issues.length > 0) throw invalidConfigError(path, issues);
  return (document ?? {}) as Record<string, unknown>;
}
