/**
 * Where a running bot's HTTP endpoint is, beside its journal (`<journal>.address`): the URL
 * and the pid, written once the endpoint listens, removed at shutdown. `paperbot status` reads
 * it before the config's port, so a bot on `--metrics-port 0` (any free port) or another port
 * than its config's is still found. A file whose process is gone (a crash) is ignored.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';

export interface BotAddress {
  readonly url: string;
  readonly pid: number;
}

/** The file beside `journalPath`. */
export function addressFileOf(journalPath: string): string {
  return `${journalPath}.address`;
}

export function writeAddressFile(journalPath: string, address: BotAddress): void {
  writeFileSync(addressFileOf(journalPath), `${JSON.stringify(address)}\n`, { mode: 0o600 });
}

export function removeAddressFile(journalPath: string): void {
  rmSync(addressFileOf(journalPath), { force: true });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as { code?: unknown }).code === 'EPERM';
  }
}

/** The address of the live bot using `journalPath`, or null (no file, unreadable, or stale). */
export function readAddressFile(journalPath: string): BotAddress | null {
  let text: string;
  try {
    text = readFileSync(addressFileOf(journalPath), 'utf8').slice(0, 4096);
  } catch {
    return null;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (parsed === null || typeof parsed !== 'object') return null;
  const { url, pid } = parsed as { url?: unknown; pid?: unknown };
  if (typeof url !== 'string' || !/^https?:\/\//.test(url)) return null;
  if (typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0 || !alive(pid)) return null;
  return { url, pid };
}
