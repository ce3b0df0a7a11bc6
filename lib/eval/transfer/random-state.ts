/**
 * numpy's legacy `np.random.RandomState(seed)`, bit for bit, for the draws SentEval's protocol
 * makes: scikit-learn's `StratifiedKFold(shuffle=True, random_state=seed)` shuffles its fold
 * labels with `RandomState(seed).shuffle`, and SentEval's PyTorch classifier draws its
 * mini-batch order with `np.random.permutation` after `np.random.seed(seed)`.
 *
 * - Seeding an integer (numpy `_legacy_seeding` → `mt19937_seed`): the MT19937 reference
 *   `init_genrand`, key[0] = seed, key[i] = 1812433253 · (key[i-1] ^ (key[i-1] >> 30)) + i (mod 2^32).
 * - Output: the MT19937 recurrence over 624 words and the standard tempering (32-bit words).
 * - `randomInterval(max)` (numpy `random_interval`): the smallest all-ones mask ≥ max, then 32-bit
 *   draws masked and rejected while > max (64-bit draws when max ≥ 2^32; not needed here).
 * - `shuffle(a)` (numpy `_shuffle_raw` on a 1-D array): Fisher-Yates from the end, for
 *   i = n-1 … 1: j = randomInterval(i), swap a[i], a[j].
 * - `permutation(n)`: arange(n), shuffled.
 * - `randomSample()` (numpy `random_sample`/`rand`): (a >> 5, b >> 6) of two draws → 53-bit double.
 *
 * Reference: numpy/random/_mtrand (mtrand.pyx), numpy/random/src/mt19937/mt19937.c,
 * numpy/random/src/distributions/distributions.c (read, not copied).
 */

const N = 624;
const M = 397;
const MATRIX_A = 0x9908b0df;
const UPPER_MASK = 0x80000000;
const LOWER_MASK = 0x7fffffff;

export class RandomState {
  private readonly key = new Uint32Array(N);
  private pos = N;

  /** `np.random.RandomState(seed)` for an integer seed in [0, 2^32). */
  constructor(seed: number) {
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
      throw new RangeError(`RandomState: seed must be an integer in [0, 2^32), got ${seed}`);
    }
    let s = seed >>> 0;
    for (let i = 0; i < N; i++) {
      this.key[i] = s;
      s = (Math.imul(1812433253, (s ^ (s >>> 30)) >>> 0) + i + 1) >>> 0;
    }
    this.pos = N;
  }

  /** Regenerates the 624-word block (the MT19937 twist). */
  private twist(): void {
    const k = this.key;
    let i = 0;
    for (; i < N - M; i++) {
      const y = (k[i] & UPPER_MASK) | (k[i + 1] & LOWER_MASK);
      k[i] = k[i + M] ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
    }
    for (; i < N - 1; i++) {
      const y = (k[i] & UPPER_MASK) | (k[i + 1] & LOWER_MASK);
      k[i] = k[i + M - N] ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
    }
    const y = (k[N - 1] & UPPER_MASK) | (k[0] & LOWER_MASK);
    k[N - 1] = k[M - 1] ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
    this.pos = 0;
  }

  /** The next tempered 32-bit output, as an unsigned integer. */
  nextUint32(): number {
    if (this.pos === N) this.twist();
    let y = this.key[this.pos++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** numpy `random_interval(max)`: a uniform integer in [0, max] by masked rejection. */
  randomInterval(max: number): number {
    if (!Number.isInteger(max) || max < 0 || max > 0xffffffff) {
      throw new RangeError(`randomInterval: max must be an integer in [0, 2^32), got ${max}`);
    }
    if (max === 0) return 0;
    let mask = max;
    mask |= mask >>> 1;
    mask |= mask >>> 2;
    mask |= mask >>> 4;
    mask |= mask >>> 8;
    mask |= mask >>> 16;
    mask >>>= 0;
    let v: number;
    do v = (this.nextUint32() & mask) >>> 0;
    while (v > max);
    return v;
  }

  /** numpy `RandomState.shuffle` of a 1-D array, in place. */
  shuffle<T extends { length: number; [i: number]: number }>(a: T): T {
    for (let i = a.length - 1; i > 0; i--) {
      const j = this.randomInterval(i);
      const t = a[i];
      a[i] = a[j];
      a[j] = t;
    }
    return a;
  }

  /** numpy `RandomState.permutation(n)`: a shuffled arange(n). */
  permutation(n: number): Int32Array {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`permutation: n must be a non-negative integer, got ${n}`);
    const a = new Int32Array(n);
    for (let i = 0; i < n; i++) a[i] = i;
    return this.shuffle(a);
  }

  /** numpy `random_sample()`: a double in [0, 1) with 53 random bits. */
  randomSample(): number {
    const a = this.nextUint32() >>> 5;
    const b = this.nextUint32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }
}
