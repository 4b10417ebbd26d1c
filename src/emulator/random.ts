/**
 * Seeded pseudo-random numbers for the emulator. Everything random in the emulator (price
 * paths, synthetic maker and taker flow, identifiers) comes from here, so one seed and the same
 * clock moves reproduce the same run exactly.
 *
 * The generator is sfc32 (Chris Doty-Humphrey's Small Fast Counting generator): 128 bits of
 * state, passes PractRand, and uses only 32-bit integer operations, which JavaScript performs
 * exactly and identically on every engine. Seeds are strings or integers hashed with cyrb128.
 */

/** cyrb128: a 128-bit string hash, used to turn a textual seed into generator state. */
export function hashSeed(text: string): [number, number, number, number] {
  let h1 = 1779033703;
  let h2 = 3144134277;
  let h3 = 1013904242;
  let h4 = 2773480762;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    h1 = h2 ^ Math.imul(h1 ^ code, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ code, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ code, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ code, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0];
}

const TWO_POW_32 = 4294967296;

export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  private spareNormal: number | null = null;
  readonly seed: string;

  constructor(seed: string | number) {
    this.seed = String(seed);
    [this.a, this.b, this.c, this.d] = hashSeed(this.seed);
    // Discard the first outputs: sfc32 mixes weak seeds within a few rounds.
    for (let round = 0; round < 12; round++) this.nextUint32();
  }

  /** An independent stream for one purpose, so adding draws in one place never shifts another. */
  fork(label: string): Random {
    return new Random(`${this.seed}/${label}`);
  }

  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextUint32() / TWO_POW_32;
  }

  /** Uniform integer in [0, maxExclusive), without modulo bias. */
  nextInt(maxExclusive: number): number {
    if (!Number.isSafeInteger(maxExclusive) || maxExclusive <= 0) {
      throw new RangeError(`nextInt needs a positive integer bound, got ${maxExclusive}`);
    }
    if (maxExclusive <= TWO_POW_32) {
      const limit = TWO_POW_32 - (TWO_POW_32 % maxExclusive);
      for (;;) {
        const value = this.nextUint32();
        if (value < limit) return value % maxExclusive;
      }
    }
    return Math.floor(this.next() * maxExclusive);
  }

  /** Uniform integer in [minimum, maximum], both inclusive. */
  integerBetween(minimum: number, maximum: number): number {
    if (maximum < minimum) throw new RangeError(`empty range [${minimum}, ${maximum}]`);
    return minimum + this.nextInt(maximum - minimum + 1);
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('cannot pick from an empty list');
    return items[this.nextInt(items.length)]!;
  }

  /** Standard normal variate (Marsaglia polar method; the spare value is kept for the next call). */
  normal(): number {
    if (this.spareNormal !== null) {
      const spare = this.spareNormal;
      this.spareNormal = null;
      return spare;
    }
    for (;;) {
      const u = this.next() * 2 - 1;
      const v = this.next() * 2 - 1;
      const s = u * u + v * v;
      if (s > 0 && s < 1) {
        const factor = Math.sqrt((-2 * Math.log(s)) / s);
        this.spareNormal = v * factor;
        return u * factor;
      }
    }
  }
}

/** A 32-bit finalizer (murmur3 fmix32). */
export function mix32(value: number): number {
  let h = value | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const HEX: string[] = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

function hex32(value: number): string {
  return (
    HEX[(value >>> 24) & 255]! +
    HEX[(value >>> 16) & 255]! +
    HEX[(value >>> 8) & 255]! +
    HEX[value & 255]!
  );
}

/**
 * Deterministic UUIDs (version 4 layout) from a seed and a counter. Identifiers derive from a
 * counter rather than a generator stream so that a restarted emulator, which restores the
 * counter from its store, never hands out an identifier it already used.
 */
export class IdentifierSource {
  private readonly salt: readonly [number, number, number, number];

  constructor(seed: string) {
    this.salt = hashSeed(`ids/${seed}`);
  }

  uuid(kind: number, counter: number): string {
    const low = counter >>> 0;
    const high = Math.floor(counter / TWO_POW_32) >>> 0;
    const [s0, s1, s2, s3] = this.salt;
    const w0 = mix32(s0 ^ low ^ Math.imul(kind, 0x9e3779b1));
    const w1 = mix32(s1 ^ high ^ w0);
    const w2 = mix32(s2 ^ low ^ w1);
    const w3 = mix32(s3 ^ kind ^ w2 ^ high);
    // mix32 is a bijection, so w0 alone already differs for every counter below 2^32.
    const time = ((w1 & 0xffff0fff) | 0x00004000) >>> 0;
    const variant = ((w2 & 0x3fffffff) | 0x80000000) >>> 0;
    const a = hex32(w0);
    const b = hex32(time);
    const c = hex32(variant);
    const d = hex32(w3);
    return `${a}-${b.slice(0, 4)}-${b.slice(4)}-${c.slice(0, 4)}-${c.slice(4)}${d}`;
  }
}
