/**
 * Key IP allowlists: CIDR blocks of IPv4 and IPv6. Every address is held as a 128-bit IPv6
 * number, IPv4 ones in their IPv4-mapped form (::ffff:a.b.c.d), so a client that reaches a
 * dual-stack listener as `::ffff:127.0.0.1` matches a rule written `127.0.0.1/32`, and the
 * other way round.
 */
import { isIPv4, isIPv6 } from 'node:net';

const IPV4_MAPPED_PREFIX = 0xffffn << 32n;
const FULL = (1n << 128n) - 1n;

export interface CidrBlock {
  /** As the key was registered with it, for listing. */
  readonly text: string;
  readonly network: bigint;
  readonly mask: bigint;
}

function ipv4ToNumber(address: string): bigint {
  let value = 0n;
  for (const part of address.split('.')) value = (value << 8n) | BigInt(Number(part));
  return value;
}

function ipv6ToNumber(address: string): bigint {
  let text = address;
  // A trailing dotted quad (::ffff:1.2.3.4, ::1.2.3.4) stands for the last two groups.
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = ipv4ToNumber(tail);
    text = `${text.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const restGroups = rest === undefined || rest === '' ? [] : rest.split(':');
  const missing = 8 - headGroups.length - restGroups.length;
  const groups =
    rest === undefined
      ? headGroups
      : [...headGroups, ...Array.from({ length: missing }, () => '0'), ...restGroups];
  let value = 0n;
  for (const group of groups) value = (value << 16n) | BigInt(Number.parseInt(group, 16));
  return value;
}

/** The 128-bit number of an address, or null when it is not an IP address. */
export function addressNumber(address: string): bigint | null {
  // Zone ids (fe80::1%eth0) name an interface, not a different address.
  const bare = address.includes('%') ? address.slice(0, address.indexOf('%')) : address;
  if (isIPv4(bare)) return IPV4_MAPPED_PREFIX | ipv4ToNumber(bare);
  if (isIPv6(bare)) return ipv6ToNumber(bare);
  return null;
}

/**
 * Parses `address` or `address/prefix` (IPv4 prefix 0..32, IPv6 0..128). Host bits beyond the
 * prefix are ignored, as most tools do. Returns null for anything else.
 */
export function parseCidr(text: string): CidrBlock | null {
  const slash = text.indexOf('/');
  const address = slash < 0 ? text : text.slice(0, slash);
  const prefixText = slash < 0 ? null : text.slice(slash + 1);
  const v4 = isIPv4(address);
  if (!v4 && !isIPv6(address)) return null;
  const maximum = v4 ? 32 : 128;
  let prefix = maximum;
  if (prefixText !== null) {
    if (!/^\d{1,3}$/.test(prefixText)) return null;
    prefix = Number(prefixText);
    if (prefix > maximum) return null;
  }
  const number = addressNumber(address);
  if (number === null) return null;
  const prefix128 = v4 ? 96 + prefix : prefix;
  const mask = prefix128 === 0 ? 0n : (FULL << BigInt(128 - prefix128)) & FULL;
  return { text, network: number & mask, mask };
}

export function matchesAny(blocks: readonly CidrBlock[], address: string | undefined): boolean {
  if (address === undefined) return false;
  const number = addressNumber(address);
  if (number === null) return false;
  return blocks.some((block) => (number & block.mask) === block.network);
}
