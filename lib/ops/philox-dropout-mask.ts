/**
 * The cuda backend's dropout mask computed on the host: Philox4x32-10 (Salmon et al. 2011,
 * "Parallel random numbers: as easy as 1, 2, 3") exactly as native/src/fused.cu's dropoutKernel
 * draws it, so a reference that runs here (./flash-attention-reference.ts) drops the very
 * elements the device drops.
 *
 * Element i of a dropped tensor (row-major) keeps its value when
 *
 *   u = (philox(counter = ⌊i / 4⌋, key = seed)[i mod 4] >> 8) · 2⁻²⁴  ≥  rate     (float32 compare)
 *
 * and the kept values are multiplied by the float32 1 / (1 − rate). The counter's low 32 bits go
 * to word 0 and its high 32 bits to word 1; the seed's low and high 32 bits are the two key words.
 */

/** Upper 32 bits of the 64-bit product of two uint32s (exact: 16-bit halves, every partial sum below 2^53). */
function mulhi(a: number, b: number): number {
  const al = a & 0xffff;
  const ah = a >>> 16;
  const bl = b & 0xffff;
  const bh = b >>> 16;
  const ll = al * bl;
  const lh = al * bh;
  const hl = ah * bl;
  const mid = (ll >>> 16) + (lh & 0xffff) + (hl & 0xffff);
  return (ah * bh + (lh >>> 16) + (hl >>> 16) + Math.floor(mid / 65536)) >>> 0;
}

/** Philox4x32-10 of a 128-bit counter (four uint32 words) under a 64-bit key (two uint32 words). */
export function philox4x32(counter: readonly [number, number, number, number], key: readonly [number, number]): [number, number, number, number] {
  let [c0, c1, c2, c3] = counter.map((x) => x >>> 0);
  let k0 = key[0] >>> 0;
  let k1 = key[1] >>> 0;
  for (let round = 0; round < 10; round++) {
    const hi0 = mulhi(0xd2511f53, c0);
    const lo0 = Math.imul(0xd2511f53, c0) >>> 0;
    const hi1 = mulhi(0xcd9e8d57, c2);
    const lo1 = Math.imul(0xcd9e8d57, c2) >>> 0;
    const n0 = (hi1 ^ c1 ^ k0) >>> 0;
    const n2 = (hi0 ^ c3 ^ k1) >>> 0;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
    k0 = (k0 + 0x9e3779b9) >>> 0;
    k1 = (k1 + 0xbb67ae85) >>> 0;
  }
  return [c0, c1, c2, c3];
}

/** The seed as the device sees it: fusedDropout's |trunc(seed)| mod 2^52, split into two key words. */
export function philoxKey(seed: number): [number, number] {
  const s = Math.abs(Math.trunc(seed)) % 2 ** 52;
  return [s % 2 ** 32, Math.floor(s / 2 ** 32)];
}

/**
 * The device dropout mask of the elements [0, n) of a tensor, as the multiplier each element gets:
 * 0 when dropped, the float32 1 / (1 − rate) when kept.
 */
export function deviceDropoutMultipliers(n: number, rate: number, seed: number): Float32Array {
  if (!(rate >= 0 && rate < 1)) throw new Error(`deviceDropoutMultipliers: rate ${rate} outside [0, 1)`);
  const key = philoxKey(seed);
  const r = Math.fround(rate);
  const keepScale = Math.fround(1 / Math.fround(1 - r));
  const out = new Float32Array(n);
  for (let g = 0; g * 4 < n; g++) {
    const words = philox4x32([g % 2 ** 32, Math.floor(g / 2 ** 32), 0, 0], key);
    for (let w = 0; w < 4 && g * 4 + w < n; w++) out[g * 4 + w] = (words[w] >>> 8) * 2 ** -24 >= r ? keepScale : 0;
  }
  return out;
}
