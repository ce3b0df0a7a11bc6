/**
 * A small seeded random generator whose whole state is four 32-bit words, so a training
 * checkpoint can save it and a resumed run draws exactly the numbers an uninterrupted run would.
 *
 * xoshiro128** (Blackman & Vigna): fast in 32-bit integer arithmetic, which is what JS does well,
 * and good enough for shuffling and sampling. The seed is expanded with splitmix32 so that nearby
 * seeds (0, 1, 2, ...) give unrelated streams.
 */

export type RngState = [number, number, number, number];

function splitmix32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

const rotl = (x: number, k: number): number => ((x << k) | (x >>> (32 - k))) >>> 0;

export class SeededRng {
  private s: Uint32Array;

  constructor(seed: number) {
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
      throw new RangeError(`seed must be an integer in [0, 2^32), got ${seed}`);
    }
    const next = splitmix32(seed);
    this.s = new Uint32Array([next(), next(), next(), next()]);
    // xoshiro must not start from the all-zero state (it would stay there).
    if (this.s.every((w) => w === 0)) this.s[0] = 1;
  }

  static fromState(state: RngState): SeededRng {
    if (!Array.isArray(state) || state.length !== 4 || !state.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffffffff)) {
      throw new RangeError(`an RNG state is four unsigned 32-bit integers, got ${JSON.stringify(state)}`);
    }
    if (state.every((w) => w === 0)) throw new RangeError('the all-zero RNG state is invalid');
    const r = new SeededRng(0);
    r.s = new Uint32Array(state);
    return r;
  }

  state(): RngState {
    return [this.s[0], this.s[1], this.s[2], this.s[3]];
  }

  /** The next unsigned 32-bit integer. */
  nextUint32(): number {
    const s = this.s;
    const result = Math.imul(rotl(Math.imul(s[1], 5) >>> 0, 7), 9) >>> 0;
    const t = (s[1] << 9) >>> 0;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return result;
  }

  /** A float in [0, 1) with 32 random bits. */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** An integer uniform in [0, n), without modulo bias (rejection sampling). */
  nextInt(n: number): number {
    if (!Number.isInteger(n) || n < 1 || n > 0x100000000) throw new RangeError(`nextInt needs an integer n in [1, 2^32], got ${n}`);
    const limit = 4294967296 - (4294967296 % n);
    for (;;) {
      const x = this.nextUint32();
      if (x < limit) return x % n;
    }
  }

  /** Fisher-Yates shuffle of [0, n). */
  permutation(n: number): Uint32Array {
    const p = new Uint32Array(n);
    for (let i = 0; i < n; i++) p[i] = i;
    for (let i = n - 1; i > 0; i--) {
      const j = this.nextInt(i + 1);
      const t = p[i];
      p[i] = p[j];
      p[j] = t;
    }
    return p;
  }
}
