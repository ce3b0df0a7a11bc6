/**
 * The fused attention kernel of the cuda backend (native/src/attention.cu), written tile for tile
 * in plain typed arrays so that it runs here and its algorithm can be checked against plain
 * attention without a GPU. Each loop below is a loop of the kernel, with the same tile sizes
 * (ATTENTION_TILES, which test/attention-flash-reference.test.ts reads back out of the .cu file);
 * where the kernel spreads a loop over the lanes of a warp, the comment says so.
 *
 * Shapes: q [B, H, T, D], k and v [B, Hkv, S, D] (query head h reads key/value head ⌊h / rep⌋,
 * rep = H / Hkv), an optional additive mask [mB, 1, mT, S] with mB ∈ {1, B} and mT ∈ {1, T}
 * (a padding mask has mT = 1, a causal one mT = T). Saved for backward: out, and per query row
 * the running maximum m and normaliser l, [B, H, T] each — no [T, S] tensor.
 *
 * Forward, per query tile of FWD_ROWS rows (a warp per row) and key tile of FWD_KEYS keys (a lane
 * per key):
 *   s_j = scale · q·k_j + mask_j;  m' = max(m, max_j s_j);  c = exp(m − m');  p_j = exp(s_j − m')
 *   l ← l·c + Σ_j p_j;   o ← o·c + Σ_j drop_j · p_j · v_j;   m ← m';   at the end out = o / l
 * m and l are kept apart (not as m + log l) because a row whose keys are all masked by −1e9 has
 * m ≈ −1e9, where m + log l rounds to m in float32 (see ./blocked-attention.ts).
 *
 * Backward recomputes p = exp(s − m) / l. With R = rowsum(dout ∘ out) (its own small pass):
 *   dQ pass, per query tile of DQ_ROWS rows (a warp per row) and key tile of DQ_KEYS keys (a lane per key):
 *     dp_j = drop_j · (dout·v_j);   ds_j = p_j (dp_j − R);   dq += scale · Σ_j ds_j k_j
 *   dK/dV pass, per tile of DKV_KEYS keys (a warp per key), over the rep query heads of the key's
 *   group and their query tiles of DKV_ROWS rows (a lane per row):
 *     dv_j += Σ_t drop_tj · p_tj · dout_t;   dk_j += scale · Σ_t ds_tj q_t
 * Neither pass writes to another's output, so backward needs no atomics and is deterministic.
 *
 * drop_j is the multiplier of the cuda backend's dropout (0, or 1/(1 − rate) when kept) for the
 * element (b, h, t, j) of the [B, H, T, S] probabilities with the call's seed
 * (./philox-dropout-mask.ts): the fused kernel drops exactly what plain attention followed by
 * fusedDropout(probs, rate, seed) drops on the cuda backend.
 *
 * Sums are accumulated in JavaScript doubles here and in float32 on the device: the two agree to
 * float32 rounding, not bit for bit.
 */
import { philox4x32, philoxKey } from './philox-dropout-mask.js';

/** Tile sizes of native/src/attention.cu (kept equal by a test that reads the .cu file). */
export const ATTENTION_TILES = {
  /** Forward: query rows per thread block (a warp each) and keys per shared-memory tile (a lane each). */
  FWD_ROWS: 16,
  FWD_KEYS: 32,
  /** dQ pass: query rows per block (a warp each), keys per tile (a lane each). */
  DQ_ROWS: 8,
  DQ_KEYS: 32,
  /** dK/dV pass: keys per block (a warp each), query rows per tile (a lane each). */
  DKV_KEYS: 8,
  DKV_ROWS: 32,
  /** Largest head dimension the kernels take (four float32s per lane). */
  MAX_HEAD_DIM: 128,
} as const;

export interface AttentionDims {
  B: number;
  H: number;
  Hkv: number;
  T: number;
  S: number;
  D: number;
}

export interface AttentionMask {
  data: Float32Array;
  /** 1 or B. */
  mB: number;
  /** 1 or T. */
  mT: number;
}

export interface AttentionReferenceOptions {
  scale?: number;
  dropout?: { rate: number; seed: number };
}

export interface AttentionForward {
  out: Float32Array;
  m: Float32Array;
  l: Float32Array;
}

export interface AttentionGrads {
  dq: Float32Array;
  dk: Float32Array;
  dv: Float32Array;
}

function checkDims(d: AttentionDims, q: Float32Array, k: Float32Array, v: Float32Array, mask: AttentionMask | undefined): void {
  const { B, H, Hkv, T, S, D } = d;
  if (![B, H, Hkv, T, S, D].every((x) => Number.isInteger(x) && x > 0)) throw new Error(`attention reference: dimensions ${JSON.stringify(d)} must be positive integers`);
  if (H % Hkv !== 0) throw new Error(`attention reference: ${H} query heads are not a multiple of ${Hkv} key/value heads`);
  if (D > ATTENTION_TILES.MAX_HEAD_DIM) throw new Error(`attention reference: head dimension ${D} exceeds the kernel's ${ATTENTION_TILES.MAX_HEAD_DIM}`);
  if (q.length !== B * H * T * D) throw new Error(`attention reference: q has ${q.length} values, expected B·H·T·D = ${B * H * T * D}`);
  if (k.length !== B * Hkv * S * D || v.length !== k.length) throw new Error(`attention reference: k and v have ${k.length} and ${v.length} values, expected B·Hkv·S·D = ${B * Hkv * S * D}`);
  if (mask) {
    if ((mask.mB !== 1 && mask.mB !== B) || (mask.mT !== 1 && mask.mT !== T)) throw new Error(`attention reference: mask [${mask.mB}, 1, ${mask.mT}, ${S}] does not broadcast to [${B}, 1, ${T}, ${S}]`);
    if (mask.data.length !== mask.mB * mask.mT * S) throw new Error(`attention reference: mask has ${mask.data.length} values, expected ${mask.mB * mask.mT * S}`);
  }
}

/** The dropout multiplier of element `index` of the [B, H, T, S] probabilities (1 without dropout). */
function dropMultiplier(drop: AttentionReferenceOptions['dropout']): (index: number) => number {
  if (!drop || drop.rate === 0) return () => 1;
  if (!(drop.rate > 0 && drop.rate < 1)) throw new Error(`attention reference: dropout rate ${drop.rate} outside [0, 1)`);
  const key = philoxKey(drop.seed);
  const r = Math.fround(drop.rate);
  const keepScale = Math.fround(1 / Math.fround(1 - r));
  let group = -1;
  let words: number[] = [];
  return (index) => {
    const g = Math.floor(index / 4);
    if (g !== group) {
      group = g;
      words = philox4x32([g % 2 ** 32, Math.floor(g / 2 ** 32), 0, 0], key);
    }
    return (words[index % 4] >>> 8) * 2 ** -24 >= r ? keepScale : 0;
  };
}

function maskAt(mask: AttentionMask | undefined, S: number, b: number, t: number, s: number): number {
  if (!mask) return 0;
  return mask.data[((mask.mB === 1 ? 0 : b) * mask.mT + (mask.mT === 1 ? 0 : t)) * S + s];
}

function dot(a: Float32Array, ao: number, b: Float32Array, bo: number, n: number): number {
  let acc = 0;
  for (let d = 0; d < n; d++) acc += a[ao + d] * b[bo + d];
  return acc;
}

/**
 * The masked score of a query row and a key, rounded to float32 as the kernel computes it: with
 * the −1e9 mask every score of a fully masked row rounds to the same float32, so the row's
 * probabilities are uniform (as in plain attention), which doubles would not give.
 */
function scoreOf(q: Float32Array, k: Float32Array, mask: AttentionMask | undefined, S: number, D: number, scale: number) {
  const f = Math.fround;
  const sc = f(scale);
  return (qo: number, ko: number, b: number, t: number, s: number) => f(f(sc * f(dot(q, qo, k, ko, D))) + maskAt(mask, S, b, t, s));
}

/** Forward pass, tile for tile as attentionForwardKernel. */
export function flashAttentionForwardReference(dims: AttentionDims, q: Float32Array, k: Float32Array, v: Float32Array, mask?: AttentionMask, opts: AttentionReferenceOptions = {}): AttentionForward {
  checkDims(dims, q, k, v, mask);
  const { B, H, Hkv, T, S, D } = dims;
  const rep = H / Hkv;
  const scale = opts.scale ?? 1 / Math.sqrt(D);
  const drop = dropMultiplier(opts.dropout);
  const score = scoreOf(q, k, mask, S, D, scale);
  const out = new Float32Array(B * H * T * D);
  const mOut = new Float32Array(B * H * T);
  const lOut = new Float32Array(B * H * T);
  const { FWD_ROWS, FWD_KEYS } = ATTENTION_TILES;
  const o = new Float64Array(D);
  const p = new Float64Array(FWD_KEYS);
  // Grid: (query tile, b·H + h); a thread block per (tile, head).
  for (let bh = 0; bh < B * H; bh++) {
    const b = Math.floor(bh / H);
    const h = bh % H;
    const kvBase = (b * Hkv + Math.floor(h / rep)) * S * D;
    for (let t0 = 0; t0 < T; t0 += FWD_ROWS) {
      // A warp per query row of the tile.
      for (let t = t0; t < Math.min(t0 + FWD_ROWS, T); t++) {
        const row = bh * T + t;
        let m = -Infinity;
        let l = 0;
        o.fill(0);
        // Key tiles: the block loads k and v of FWD_KEYS keys into shared memory.
        for (let s0 = 0; s0 < S; s0 += FWD_KEYS) {
          const n = Math.min(FWD_KEYS, S - s0);
          // Lane j scores key s0 + j; the warp reduces the maximum.
          let tileMax = -Infinity;
          for (let j = 0; j < n; j++) {
            p[j] = score(row * D, kvBase + (s0 + j) * D, b, t, s0 + j);
            tileMax = Math.max(tileMax, p[j]);
          }
          const m2 = Math.max(m, tileMax);
          const c = Math.exp(m - m2);
          let tileSum = 0;
          for (let j = 0; j < n; j++) {
            p[j] = Math.exp(p[j] - m2);
            tileSum += p[j];
          }
          l = l * c + tileSum;
          // Lane d holds o[d], o[d + 32], ...; p_j · drop_j is broadcast from lane j.
          for (let d = 0; d < D; d++) o[d] *= c;
          for (let j = 0; j < n; j++) {
            const pd = p[j] * drop(row * S + s0 + j);
            if (pd === 0) continue;
            const vo = kvBase + (s0 + j) * D;
            for (let d = 0; d < D; d++) o[d] += pd * v[vo + d];
          }
          m = m2;
        }
        for (let d = 0; d < D; d++) out[row * D + d] = o[d] / l;
        mOut[row] = m;
        lOut[row] = l;
      }
    }
  }
  return { out, m: mOut, l: lOut };
}

/** Backward pass: the row-dot pass, the dQ pass and the dK/dV pass, tile for tile as the kernels. */
export function flashAttentionBackwardReference(
  dims: AttentionDims,
  q: Float32Array,
  k: Float32Array,
  v: Float32Array,
  mask: AttentionMask | undefined,
  saved: AttentionForward,
  dOut: Float32Array,
  opts: AttentionReferenceOptions = {},
): AttentionGrads {
  checkDims(dims, q, k, v, mask);
  const { B, H, Hkv, T, S, D } = dims;
  if (dOut.length !== q.length || saved.out.length !== q.length) throw new Error(`attention reference: dout and out must have B·H·T·D = ${q.length} values`);
  const rep = H / Hkv;
  const scale = opts.scale ?? 1 / Math.sqrt(D);
  const drop = dropMultiplier(opts.dropout);
  const { m, l, out } = saved;
  // Row-dot pass: R = rowsum(dout ∘ out), a warp per row.
  const R = new Float64Array(B * H * T);
  for (let row = 0; row < B * H * T; row++) R[row] = dot(dOut, row * D, out, row * D, D);
  const score = scoreOf(q, k, mask, S, D, scale);
  const prob = (b: number, row: number, t: number, qo: number, ko: number, s: number) => Math.exp(score(qo, ko, b, t, s) - m[row]) / l[row];

  const dq = new Float32Array(q.length);
  const { DQ_ROWS, DQ_KEYS, DKV_KEYS, DKV_ROWS } = ATTENTION_TILES;
  const acc = new Float64Array(D);
  // dQ pass. Grid: (query tile, b·H + h).
  for (let bh = 0; bh < B * H; bh++) {
    const b = Math.floor(bh / H);
    const h = bh % H;
    const kvBase = (b * Hkv + Math.floor(h / rep)) * S * D;
    for (let t0 = 0; t0 < T; t0 += DQ_ROWS) {
      for (let t = t0; t < Math.min(t0 + DQ_ROWS, T); t++) {
        const row = bh * T + t;
        acc.fill(0);
        for (let s0 = 0; s0 < S; s0 += DQ_KEYS) {
          for (let s = s0; s < Math.min(s0 + DQ_KEYS, S); s++) {
            const p = prob(b, row, t, row * D, kvBase + s * D, s);
            const dp = drop(row * S + s) * dot(dOut, row * D, v, kvBase + s * D, D);
            const ds = p * (dp - R[row]);
            if (ds === 0) continue;
            for (let d = 0; d < D; d++) acc[d] += ds * k[kvBase + s * D + d];
          }
        }
        for (let d = 0; d < D; d++) dq[row * D + d] = scale * acc[d];
      }
    }
  }

  const dk = new Float32Array(k.length);
  const dv = new Float32Array(v.length);
  const accK = new Float64Array(D);
  const accV = new Float64Array(D);
  // dK/dV pass. Grid: (key tile, b·Hkv + g).
  for (let bg = 0; bg < B * Hkv; bg++) {
    const b = Math.floor(bg / Hkv);
    const g = bg % Hkv;
    const kvBase = bg * S * D;
    for (let s0 = 0; s0 < S; s0 += DKV_KEYS) {
      // A warp per key of the tile.
      for (let s = s0; s < Math.min(s0 + DKV_KEYS, S); s++) {
        accK.fill(0);
        accV.fill(0);
        for (let r = 0; r < rep; r++) {
          const bh = b * H + g * rep + r;
          // Query tiles: the block loads q, dout, m, l and R of DKV_ROWS rows; lane t takes row t0 + t.
          for (let t0 = 0; t0 < T; t0 += DKV_ROWS) {
            for (let t = t0; t < Math.min(t0 + DKV_ROWS, T); t++) {
              const row = bh * T + t;
              const p = prob(b, row, t, row * D, kvBase + s * D, s);
              const mult = drop(row * S + s);
              const dp = mult * dot(dOut, row * D, v, kvBase + s * D, D);
              const ds = p * (dp - R[row]);
              const pd = p * mult;
              for (let d = 0; d < D; d++) {
                accV[d] += pd * dOut[row * D + d];
                accK[d] += ds * q[row * D + d];
              }
            }
          }
        }
        for (let d = 0; d < D; d++) {
          dk[kvBase + s * D + d] = scale * accK[d];
          dv[kvBase + s * D + d] = accV[d];
        }
      }
    }
  }
  return { dq, dk, dv };
}
