/**
 * The venue's reasons for a rejection, as the logs, the strategy's outcome and the journal carry
 * them. Simulation `issues` items are objects whose fields the interface does not show (contract
 * section 7): each is kept as given, bounded in size, and read for the fields that name a reason
 * where present (`code`, `message`, `field`, or a validation issue's `type`, `msg`, `loc`).
 */

/** Issues kept per rejection; the rest are counted in the text. */
export const MAXIMUM_ISSUES = 10;
/** Largest JSON of one kept issue; a larger one is cut to its reason fields. */
export const MAXIMUM_ISSUE_BYTES = 1_024;
/** Longest text taken from one field of an issue. */
const MAXIMUM_FIELD_LENGTH = 200;

function text(value: unknown): string | null {
  if (typeof value === 'string' && value !== '') return value.slice(0, MAXIMUM_FIELD_LENGTH);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.every((part) => ['string', 'number'].includes(typeof part))) {
    return value.join('.').slice(0, MAXIMUM_FIELD_LENGTH);
  }
  return null;
}

function fieldsOf(issue: unknown): Readonly<Record<string, unknown>> {
  return typeof issue === 'object' && issue !== null && !Array.isArray(issue)
    ? (issue as Readonly<Record<string, unknown>>)
    : { value: issue };
}

/** One issue as a line: `CODE: message (field)`, from whichever of those it has. */
export function reasonOf(issue: unknown): string {
  const fields = fieldsOf(issue);
  const code = text(fields.code) ?? text(fields.type);
  const message = text(fields.message) ?? text(fields.msg) ?? text(fields.reason);
  const field = text(fields.field) ?? text(fields.loc);
  const head = [code, message].filter((part) => part !== null).join(': ');
  if (head === '') {
    const whole = JSON.stringify(issue) ?? String(issue);
    return whole.length > MAXIMUM_FIELD_LENGTH ? `${whole.slice(0, MAXIMUM_FIELD_LENGTH)}…` : whole;
  }
  return field === null ? head : `${head} (${field})`;
}

/**
 * The issues as kept: at most `MAXIMUM_ISSUES`, each the object as given unless its JSON
 * exceeds `MAXIMUM_ISSUE_BYTES`, then its reason fields with `truncated: true`.
 */
export function boundedIssues(issues: readonly unknown[]): readonly unknown[] {
  return issues.slice(0, MAXIMUM_ISSUES).map((issue) => {
    const json = JSON.stringify(issue);
    if (json !== undefined && Buffer.byteLength(json) <= MAXIMUM_ISSUE_BYTES) return issue;
    const fields = fieldsOf(issue);
    const kept: Record<string, unknown> = { truncated: true };
    for (const name of ['code', 'type', 'message', 'msg', 'field', 'loc', 'reason']) {
      const value = text(fields[name]);
      if (value !== null) kept[name] = value;
    }
    return kept;
  });
}

/** The reasons joined for a log line or a message: `A; B (+3 more)`; empty when none. */
export function reasonsText(issues: readonly unknown[]): string {
  const shown = issues.slice(0, MAXIMUM_ISSUES).map(reasonOf);
  const more = issues.length - shown.length;
  return more > 0 ? `${shown.join('; ')} (+${more} more)` : shown.join('; ');
}
