/**
 * The readable log line (`--log-format pretty`, and `auto` on a terminal): one line per event,
 * never wider than the width (120 columns), so a terminal shows one event a line:
 *
 *   2026-11-28 13:51:12.690 INFO  bot: intent submitted strategy=mm kind=place market=BTC-PERP …
 *
 * The time, the level, the component (or a strategy's name), the message, then the fields that
 * fit as `key=value`, the most telling first; nested objects (a reconciliation report) and long
 * identifiers give way, and whatever does not fit is cut with `…`. The JSON format keeps every
 * field: this is a view of the same redacted JSON line, never a second source.
 */

/** The widest line written, in columns. */
export const PRETTY_LINE_WIDTH = 120;

export interface PrettyLineOptions {
  readonly width?: number;
  /** Colour the level (a terminal). */
  readonly colorize?: boolean;
}

const LEVEL_LABELS: Record<string, string> = {
  trace: 'TRACE',
  debug: 'DEBUG',
  info: 'INFO ',
  warn: 'WARN ',
  error: 'ERROR',
  fatal: 'FATAL',
};

const LEVEL_COLOURS: Record<string, string> = {
  trace: '\u001b[90m',
  debug: '\u001b[90m',
  info: '\u001b[32m',
  warn: '\u001b[33m',
  error: '\u001b[31m',
  fatal: '\u001b[35m',
};
const RESET = '\u001b[0m';
/** Longest nested value shown as JSON on a readable line. */
const MAXIMUM_NESTED_LENGTH = 48;

/** Shown by the line's own parts (time, level, prefix), or repeating the message. */
const OMITTED = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg', 'component', 'event']);

/**
 * An order's description, values only, in reading order: `mm place buy limit 0.001 BTC-PERP
 * @ 63997.5 #mm-bid`. Written once, first, so an intent line shows its order within the width.
 */
const ORDER_FIELDS = ['strategy', 'kind', 'side', 'type', 'quantity', 'market', 'price', 'tag'];

/** Fields read first: what the event is about. Anything else follows, identifiers last. */
const FIRST = ['strategyId', 'state', 'reason', 'code', 'error', 'err'];
const LAST = /(^|_)(id|ids)$|Id$|Ids$|^request|^client_order|^key_id|url$/i;

function scalarText(value: unknown): string | null {
  if (typeof value === 'string')
    return /[\s"=]/.test(value) || value === '' ? JSON.stringify(value) : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return null;
}

/** A field as `key=value`, or null when it has no short form (or says nothing: null). */
function fieldText(key: string, value: unknown): string | null {
  if (value === null || value === undefined) return null;
  const scalar = scalarText(value);
  if (scalar !== null) return `${key}=${scalar}`;
  if (Array.isArray(value)) {
    if (value.length === 0) return null;
    const items = value.map(scalarText);
    if (items.every((item) => item !== null)) return `${key}=${items.join(',')}`;
  }
  if (typeof value === 'object') {
    // An error, serialized by pino: its code and message, never its stack.
    const error = value as { code?: unknown; message?: unknown; type?: unknown };
    if (typeof error.message === 'string') {
      const code = typeof error.code === 'string' ? `${error.code}: ` : '';
      return `${key}=${JSON.stringify(`${code}${error.message}`.replace(/\s+/g, ' '))}`;
    }
  }
  // A small object or array as compact JSON; a large one (a whole report) only in JSON mode.
  const json = JSON.stringify(value);
  return json.length <= MAXIMUM_NESTED_LENGTH ? `${key}=${json}` : null;
}

/**
 * A record that describes an order (a market and a side or kind): its summary, or '' when the
 * message already names it (`fill sell 0.001 BTC-PERP at 64002.5`); null for other records.
 */
function orderSummary(record: Record<string, unknown>, message: string): string | null {
  const market = record.market;
  if (typeof market !== 'string' || (record.side === undefined && record.kind === undefined)) {
    return null;
  }
  const quantity = record.quantity;
  if (message.includes(market) && typeof quantity === 'string' && message.includes(quantity)) {
    return '';
  }
  const parts: string[] = [];
  for (const key of ORDER_FIELDS) {
    const value = record[key];
    if (typeof value !== 'string' && typeof value !== 'number') continue;
    if (key === 'price') parts.push(`@ ${value}`);
    else if (key === 'tag') parts.push(`#${value}`);
    else parts.push(String(value));
  }
  return parts.join(' ');
}

function orderedKeys(record: Record<string, unknown>, skip: ReadonlySet<string>): string[] {
  const keys = Object.keys(record).filter((key) => !OMITTED.has(key) && !skip.has(key));
  const first = FIRST.filter((key) => keys.includes(key));
  const rest = keys.filter((key) => !FIRST.includes(key));
  return [
    ...first,
    ...rest.filter((key) => !LAST.test(key)),
    ...rest.filter((key) => LAST.test(key)),
  ];
}

/** `2026-11-28T13:51:12.690Z` as `2026-11-28 13:51:12.690`. */
function timeText(time: unknown): string {
  if (typeof time !== 'string') return '';
  return time.replace('T', ' ').replace(/Z$/, '');
}

/** One JSON log line (pino's output) as its readable line, with the newline. */
export function formatPrettyLine(json: string, options: PrettyLineOptions = {}): string {
  const width = options.width ?? PRETTY_LINE_WIDTH;
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return `${json.replace(/\s+/g, ' ').trim().slice(0, width)}\n`;
  }
  const level = String(record.level ?? 'info');
  const label = LEVEL_LABELS[level] ?? level.toUpperCase().padEnd(5);
  const source =
    typeof record.component === 'string'
      ? record.component
      : typeof record.name === 'string'
        ? record.name
        : '';
  // A strategy's lines carry its name beside the `strategy` component.
  const prefix =
    typeof record.name === 'string' && record.component === 'strategy' ? record.name : source;
  const message = String(record.msg ?? '')
    .replace(/\s+/g, ' ')
    .trim();
  const head = `${timeText(record.time)} `;
  let line = `${prefix === '' ? '' : `${prefix}: `}${message}`;
  const summary = orderSummary(record, message);
  if (summary !== null && summary !== '') line += ` ${summary}`;
  const skip = new Set(summary === null ? [] : ORDER_FIELDS);
  for (const key of orderedKeys(record, skip)) {
    const text = fieldText(key, record[key]);
    if (text !== null) line += ` ${text}`;
  }
  const room = width - head.length - label.length - 1;
  if (line.length > room) line = `${line.slice(0, room - 1)}…`;
  const shownLabel =
    options.colorize === true ? `${LEVEL_COLOURS[level] ?? ''}${label}${RESET}` : label;
  return `${head}${shownLabel} ${line}\n`;
}
