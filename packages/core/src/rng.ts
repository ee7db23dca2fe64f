/**
 * Seeded randomness owned by the engine. Every stream is derived from integers by hashing, never from
 * Math.random or the clock, so a schedule, a graph or a sampled reply is a pure function of its seeds.
 *
 * xoshiro128** (Blackman & Vigna) seeded through splitmix32: 32-bit arithmetic only, so it is fast in V8
 * and gives the same numbers on every platform.
 */

/** A uniform random source. */
export interface Rng {
  /** Uniform float in [0, 1), 32 bits of resolution. */
  next(): number;
  /** Uniform integer in [0, n) for 0 < n <= 2^32, without modulo bias. */
  int(n: number): number;
  /** Uniform 32-bit unsigned integer. */
  u32(): number;
}

/** The splitmix32 output for a state, after the state's increment (the state itself is `state + GOLDEN`). */
const GOLDEN = 0x9e3779b9;
function splitmix32(state: number): number {
  let z = (state + GOLDEN) | 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/** Mixes any number of integers (or strings) into one 32-bit seed. Order matters. */
export function mixSeed(...parts: (number | string)[]): number {
  let h = 0x811c9dc5;
  for (const part of parts) {
    if (typeof part === 'string') {
      for (let i = 0; i < part.length; i++) h = Math.imul(h ^ part.charCodeAt(i), 0x01000193);
      h = Math.imul(h ^ 0xff, 0x01000193);
    } else {
      // Integers up to 2^53 are mixed in two 32-bit halves so that large seeds do not collide.
      const lo = part >>> 0;
      const hi = Math.floor(part / 4294967296) >>> 0;
      h = splitmix32(h ^ lo);
      h = splitmix32(h ^ hi);
    }
  }
  return splitmix32(h);
}

export class Xoshiro128 implements Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    // Four splitmix32 outputs of consecutive states (state += GOLDEN each time).
    const s = seed >>> 0;
    this.a = splitmix32(s);
    this.b = splitmix32((s + GOLDEN) | 0);
    this.c = splitmix32((s + 2 * GOLDEN) | 0);
    this.d = splitmix32((s + 3 * GOLDEN) | 0);
    if ((this.a | this.b | this.c | this.d) === 0) this.d = 1;
  }

  u32(): number {
    const result = Math.imul(rotl(Math.imul(this.b, 5), 7), 9) >>> 0;
    const t = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return result;
  }

  next(): number {
    return this.u32() / 4294967296;
  }

  int(n: number): number {
    if (!(n > 0 && n <= 4294967296)) throw new RangeError(`Rng.int: n must be in (0, 2^32], got ${n}`);
    // Lemire-style rejection on the top of the range keeps draws unbiased.
    const limit = 4294967296 - (4294967296 % n);
    let x = this.u32();
    while (x >= limit) x = this.u32();
    return x % n;
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

/** A stream seeded from the mix of the given parts. */
export function rngFrom(...parts: (number | string)[]): Rng {
  return new Xoshiro128(mixSeed(...parts));
}
