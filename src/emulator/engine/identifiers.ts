/**
 * The engine's identifiers: exactly the UUIDs of `IdentifierSource` (src/emulator/random.ts),
 * with its seed hashing and mixing, the same text, written into one string at once instead of joined
 * from pieces. A busy exchange makes about ten of them per order (the order, its events and
 * fills), and the joined form cost more than half a microsecond each and left a tree of
 * strings behind every id it kept. math.test.ts checks that both give the same text; a change
 * to `IdentifierSource.uuid` must be made here too.
 */

import { hashSeed, mix32 } from '../random.ts';

const TWO_POW_32 = 4294967296;
const HEX_CODES: readonly number[] = Array.from({ length: 16 }, (_, digit) =>
  '0123456789abcdef'.charCodeAt(digit),
);
const DASH = 45;

/** The inverse of `mix32` (its multipliers' inverses modulo 2^32, its shifts undone). */
function unmix32(value: number): number {
  let h = value | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x7ed1b41d);
  h ^= (h >>> 13) ^ (h >>> 26);
  h = Math.imul(h, 0xa5cb9243);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Character code of the hex digit of `word` at `shift` (28 for the first, 0 for the last). */
function hexAt(word: number, shift: number): number {
  return HEX_CODES[(word >>> shift) & 15]!;
}

export class EngineIdentifiers {
  private readonly s0: number;
  private readonly s1: number;
  private readonly s2: number;
  private readonly s3: number;

  constructor(seed: string) {
    [this.s0, this.s1, this.s2, this.s3] = hashSeed(`ids/${seed}`);
  }

  /**
   * The counter below 2^32 that `uuid(kind, counter)` would start like `id` with: its first
   * eight hex digits are the mixed low 32 bits of the counter, and mixing can be undone. The
   * exchange finds an order by id this way, by ordinal, without a hash map of every order's
   * id; whatever it finds under that counter must still have `id` (any text gives some
   * counter). -1 when `id` does not start with eight lowercase hex digits.
   */
  counterOf(kind: number, id: string): number {
    if (id.length < 8) return -1;
    let w0 = 0;
    for (let index = 0; index < 8; index++) {
      const code = id.charCodeAt(index);
      const digit =
        code >= 48 && code <= 57 ? code - 48 : code >= 97 && code <= 102 ? code - 87 : -1;
      if (digit < 0) return -1;
      w0 = w0 * 16 + digit;
    }
    return (unmix32(w0) ^ this.s0 ^ Math.imul(kind, 0x9e3779b1)) >>> 0;
  }

  /** The UUID `IdentifierSource(seed).uuid(kind, counter)` gives, as one flat string. */
  uuid(kind: number, counter: number): string {
    const low = counter >>> 0;
    const high = Math.floor(counter / TWO_POW_32) >>> 0;
    const w0 = mix32(this.s0 ^ low ^ Math.imul(kind, 0x9e3779b1));
    const w1 = mix32(this.s1 ^ high ^ w0);
    const w2 = mix32(this.s2 ^ low ^ w1);
    const w3 = mix32(this.s3 ^ kind ^ w2 ^ high);
    const time = ((w1 & 0xffff0fff) | 0x00004000) >>> 0;
    const variant = ((w2 & 0x3fffffff) | 0x80000000) >>> 0;
    // xxxxxxxx-xxxx-4xxx-vxxx-xxxxxxxxxxxx in one call: a call with the 36 codes spelled out is
    // several times faster than building the text from pieces or from an array of codes.
    // prettier-ignore
    return String.fromCharCode(
      hexAt(w0, 28), hexAt(w0, 24), hexAt(w0, 20), hexAt(w0, 16),
      hexAt(w0, 12), hexAt(w0, 8), hexAt(w0, 4), hexAt(w0, 0),
      DASH,
      hexAt(time, 28), hexAt(time, 24), hexAt(time, 20), hexAt(time, 16),
      DASH,
      hexAt(time, 12), hexAt(time, 8), hexAt(time, 4), hexAt(time, 0),
      DASH,
      hexAt(variant, 28), hexAt(variant, 24), hexAt(variant, 20), hexAt(variant, 16),
      DASH,
      hexAt(variant, 12), hexAt(variant, 8), hexAt(variant, 4), hexAt(variant, 0),
      hexAt(w3, 28), hexAt(w3, 24), hexAt(w3, 20), hexAt(w3, 16),
      hexAt(w3, 12), hexAt(w3, 8), hexAt(w3, 4), hexAt(w3, 0),
    );
  }
}
