/**
 * A data file's schema refusal, the same way in every reader of recorded or imported data: each
 * zod issue as a dotted path and zod's message, and as the "path: message" sentence the error
 * text lists. (Config files have their own voice, `config-messages.ts`.)
 */
import type { z } from 'zod';

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
