/** The registry of error codes covers every code `src` raises or branches on, and no more. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  FOREIGN_ERROR_CODES,
  isLocalErrorCode,
  LOCAL_ERROR_CODES,
} from '../../src/core/error-codes.ts';
import { ErrorCode, RoutingErrorCode } from '../../src/protocol/index.ts';

const SOURCE = join(import.meta.dirname, '../../src');

/**
 * A code raised (`new ...Error('CODE'`), compared (`code === 'CODE'`, `case 'CODE':`) or set
 * (`code: 'CODE'`).
 */
const PATTERNS = [
  /new (?:PaperbotError|VenueError|ExchangeError|ServerError|[A-Z]\w*Error)\(\s*'([A-Z][A-Z0-9_]+)'/g,
  /\bcode\s*(?:===|!==)\s*'([A-Z][A-Z0-9_]+)'/g,
  /\bcode:\s*'([A-Z][A-Z0-9_]+)'/g,
  /\bcase '([A-Z][A-Z0-9]*_[A-Z0-9_]+)':/g,
  // The codes a user-named file's refusals carry (`UserFileCodes`, src/core/user-file.ts).
  /\b(?:notFound|notRegular|tooLarge|unreadable|timeout):\s*'([A-Z][A-Z0-9_]+)'/g,
];

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

function codesInSource(): Map<string, string> {
  const codes = new Map<string, string>();
  for (const file of sourceFiles(SOURCE)) {
    const text = readFileSync(file, 'utf8');
    for (const pattern of PATTERNS) {
      for (const match of text.matchAll(pattern)) {
        if (!codes.has(match[1]!)) codes.set(match[1]!, file.slice(SOURCE.length + 1));
      }
    }
  }
  return codes;
}

describe('the error code registry', () => {
  const used = codesInSource();
  const service = new Set<string>([...ErrorCode.options, ...RoutingErrorCode.options]);
  const foreign = new Set<string>(FOREIGN_ERROR_CODES);

  it('lists every code src raises or branches on', () => {
    expect(used.size).toBeGreaterThan(100);
    const missing = [...used]
      .filter(([code]) => !isLocalErrorCode(code) && !service.has(code) && !foreign.has(code))
      .map(([code, file]) => `${code} (${file})`);
    expect(missing).toEqual([]);
  });

  it('lists no code src does not use, and no service code twice', () => {
    const registered = [...Object.values(LOCAL_ERROR_CODES).flat(), ...FOREIGN_ERROR_CODES];
    expect(registered.filter((code) => !used.has(code))).toEqual([]);
    expect(registered.filter((code) => service.has(code))).toEqual([]);
    expect(new Set(registered).size).toBe(registered.length);
  });
});
