/**
 * A data file's schema refusal, the same way in every reader of recorded or imported data: each
 * zod issue as a dotted path and zod's message, and as the "path: message" sentence the error
 * text lists. (Config files have their own voice, `config-messages.ts`.)
 */
import type { z } from 'zod';
import { PaperbotError } from './errors.ts';

export interface SchemaIssue {
  /** Dotted, '' for the value itself. */
  readonly path: string;
  readonly message: string;
}

export function schemaIssuesOf(error: z.ZodError): SchemaIssue[] {
  return error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
}

/** "path: message" for each issue; `topLabel` stands for the empty path ("(record)"). */
export function describeSchemaIssues(issues: readonly SchemaIssue[], topLabel = ''): string[] {
  return issues.map((issue) => `${issue.path || topLabel}: ${issue.message}`);
}

/**
 * `schema`'s reading of `value`, or a refusal with `code` whose text is `where` and every
 * problem, and whose details list the problems.
 */
export function parseOrRefuse<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  refusal: { readonly code: string; readonly where: string; readonly topLabel: string },
): z.output<Schema> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const problems = describeSchemaIssues(schemaIssuesOf(result.error), refusal.topLabel);
  throw new PaperbotError(refusal.code, `${refusal.where}: ${problems.join('; ')}`, {
    details: { problems },
  });
}
