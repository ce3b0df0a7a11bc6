/**
 * Attention that never holds the [T, S] scores of a sequence: FlashAttention's algorithm (Dao et
 * al. 2022, "FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness",
 * Algorithms 1 and 4) written in tfjs ops, so every backend has it; a backend can later replace
 * it with one fused kernel.
 *
 * Forward, over blocks of `blockSize` keys j with a running row maximum m, normaliser l and
 * output accumulator o (the online softmax, Milakov & Gimelshein 2018):
 *
 *   s_j = q k_jᵀ · scale + mask_j,   m' = max(m, rowmax s_j),   p_j = exp(s_j − m')
 *   l ← l · exp(m − m') + rowsum p_j,   o ← o · exp(m − m') + dropout_j(p_j) v_j,   m ← m'
 *   out = o / l                              (m and l are kept for backward)
 *
 * Backward recomputes each block's probabilities from m and l instead of keeping them:
 *
 *   p_j = exp(s_j − m) / l,   D = rowsum(dout ∘ out)
 *   dv_j = dropout_j(p_j)ᵀ dout,   dp_j = dropout_j(dout v_jᵀ),   ds_j = p_j ∘ (dp_j − D)
 *   dq = Σ_j ds_j k_j · scale,   dk_j = ds_jᵀ q · scale
 *
 * (FlashAttention keeps lse = m + log l instead; with this project's finite mask, −1e9, a row whose
 * keys are all masked has m ≈ −1e9, and m + log l rounds to m in float32, so p would come out as 1
 * instead of 1/S there: m and l are kept separately.)
 *
 * It keeps q, k, v, out, m, l and the mask: O(T·D) per head instead of the O(T·S) scores, probabilities,
 * dropout mask and dropped probabilities plain attention keeps (./attention.ts), and holds one
 * block of scores at a time in either pass.
 *
 * Shapes as groupedQueryAttention: q [B, H, T, D], k and v [B, Hkv, S, D] (H a multiple of Hkv;
 * the rep = H / Hkv query heads of a group are stacked along the time axis), an additive mask
 * broadcastable to [B, 1, T, S] (a padding mask [B, 1, 1, S] or a causal one [B, 1, T, S]).
 * Rows whose keys are all masked come out as plain attention computes them (a uniform average,
 * since every score is the same large negative number).
 *
 * Dropout: the same operation as plain attention's (inverted dropout of the probabilities,
 * ./dropout.ts, keep probability 1 − rate), drawn per block with the seed `seed + j`, so each
 * block's mask is reproducible in backward; the masks are therefore not the ones plain attention
 * would draw from `seed` for the whole [T, S] matrix (same distribution, other realisation).
 */
import * as tf from '@tensorflow/tfjs-core';
import { backendCapabilities } from '../backend/capabilities.js';
import { fusedDropout } from './dropout.js';
import { customGrad } from './kernel-call.js';

export interface BlockedAttentionOptions {
  /** Multiplies q kᵀ; default 1/√D. */
  scale?: number;
  /** Keys per block (default 128). */
  blockSize?: number;
  /** Dropout on the probabilities: rate in [0, 1) and the seed of block 0 (block j uses seed + j). */
  dropout?: { rate: number; seed: number };
}

function check(q: tf.Tensor, k: tf.Tensor, v: tf.Tensor, mask: tf.Tensor): void {
  const [b, h, t, d] = q.shape;
  const [kb, hkv, , kd] = k.shape;
  if (q.rank !== 4 || k.rank !== 4 || v.rank !== 4 || kb !== b || kd !== d || v.shape.some((x, i) => x !== k.shape[i])) {
    throw new Error(`blockedAttention: q ${JSON.stringify(q.shape)}, k ${JSON.stringify(k.shape)}, v ${JSON.stringify(v.shape)} are not [B, H, T, D], [B, Hkv, S, D], [B, Hkv, S, D]`);
  }
  if (h % hkv !== 0) throw new Error(`blockedAttention: ${h} query heads are not a multiple of ${hkv} key/value heads`);
  const s = k.shape[2];
  const ms = mask.shape;
  if (mask.rank !== 4 || (ms[0] !== 1 && ms[0] !== b) || ms[1] !== 1 || (ms[2] !== 1 && ms[2] !== t) || ms[3] !== s) {
    throw new Error(`blockedAttention: mask ${JSON.stringify(ms)} does not broadcast to [${b}, 1, ${t}, ${s}]`);
  }
}

/** q kᵀ of a key block, [B, Hkv, rep·T, Sj] (transposed by matMul where that is free). */
function scoresOf(qg: tf.Tensor, kj: tf.Tensor): tf.Tensor {
  return backendCapabilities().matMulTransposeIsFree ? tf.matMul(qg, kj, false, true) : tf.matMul(qg, tf.transpose(kj, [0, 1, 3, 2]));
}

/** softmax(q kᵀ · scale + mask) v, computed in key blocks (see the top of the file). Returns [B, H, T, D]. */
export function blockedAttention(q: tf.Tensor, k: tf.Tensor, v: tf.Tensor, mask: tf.Tensor, opts: BlockedAttentionOptions = {}): tf.Tensor {
  check(q, k, v, mask);
  const [B, H, T, D] = q.shape;
  const [, Hkv, S] = k.shape;
  const rep = H / Hkv;
  const scale = opts.scale ?? 1 / Math.sqrt(D);
  const block = opts.blockSize ?? 128;
  if (!Number.isInteger(block) || block < 1) throw new Error(`blockedAttention: block size must be a positive integer, got ${block}`);
  const drop = opts.dropout && opts.dropout.rate > 0 ? opts.dropout : undefined;
  if (drop && !(drop.rate >= 0 && drop.rate < 1)) throw new Error(`blockedAttention: dropout rate ${drop.rate} outside [0, 1)`);
  const blocks: Array<[number, number]> = [];
  for (let j0 = 0; j0 < S; j0 += block) blocks.push([j0, Math.min(block, S - j0)]);
  const mB = mask.shape[0] as number;
  const mT = mask.shape[2] as number;
  // [B, Hkv, rep, T, Sj] scores of block j, masked.
  const blockScores = (qg: tf.Tensor, kj: tf.Tensor, am: tf.Tensor, j0: number, sj: number) =>
    tf.add(tf.mul(tf.reshape(scoresOf(qg, kj), [B, Hkv, rep, T, sj]), scale), tf.reshape(tf.slice(am, [0, 0, 0, j0], [mB, 1, mT, sj]), [mB, 1, 1, mT, sj]));
  const dropped = (p: tf.Tensor, j: number) => (drop ? fusedDropout(p, drop.rate, drop.seed + j) : p);
  const sliceKeys = (t: tf.Tensor, j0: number, sj: number) => tf.slice(t, [0, 0, j0, 0], [B, Hkv, sj, D]);

  const op = customGrad((qi: tf.Tensor, ki: tf.Tensor, vi: tf.Tensor, save: tf.GradSaveFunc) => {
    const qg = tf.reshape(qi, [B, Hkv, rep * T, D]);
    let m: tf.Tensor = tf.fill([B, Hkv, rep, T, 1], -Infinity);
    let l: tf.Tensor = tf.zeros([B, Hkv, rep, T, 1]);
    let o: tf.Tensor = tf.zeros([B, Hkv, rep * T, D]);
    blocks.forEach(([j0, sj], j) => {
      const next = tf.tidy(() => {
        const s = blockScores(qg, sliceKeys(ki, j0, sj), mask, j0, sj);
        const m2 = tf.maximum(m, tf.max(s, -1, true));
        const p = tf.exp(tf.sub(s, m2));
        const corr = tf.exp(tf.sub(m, m2));
        const l2 = tf.add(tf.mul(l, corr), tf.sum(p, -1, true));
        const pv = tf.matMul(tf.reshape(dropped(p, j), [B, Hkv, rep * T, sj]), sliceKeys(vi, j0, sj));
        const o2 = tf.add(tf.mul(o, tf.reshape(corr, [B, Hkv, rep * T, 1])), pv);
        return [m2, l2, o2];
      });
      tf.dispose([m, l, o]);
      [m, l, o] = next;
    });
    const out = tf.reshape(tf.div(o, tf.reshape(l, [B, Hkv, rep * T, 1])), [B, H, T, D]);
    // The mask is kept too: the forward pass that made it frees it before backward runs.
    save([qi, ki, vi, out, m, l, mask]);
    return {
      value: out,
      gradFunc: (dyIn: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
        const dOut = dyIn as tf.Tensor;
        const [qs, ks, vs, outs, ms, ls, masks] = saved;
        const qgs = tf.reshape(qs, [B, Hkv, rep * T, D]);
        const dO = tf.reshape(dOut, [B, Hkv, rep * T, D]);
        // D_i = rowsum(dout ∘ out), [B, Hkv, rep, T, 1].
        const Drow = tf.reshape(tf.sum(tf.mul(dOut, outs), -1, true), [B, Hkv, rep, T, 1]);
        let dq: tf.Tensor = tf.zeros([B, Hkv, rep * T, D]);
        const dks: tf.Tensor[] = [];
        const dvs: tf.Tensor[] = [];
        blocks.forEach(([j0, sj], j) => {
          const [dq2, dk, dv] = tf.tidy(() => {
            const kj = sliceKeys(ks, j0, sj);
            const vj = sliceKeys(vs, j0, sj);
            const p = tf.div(tf.exp(tf.sub(blockScores(qgs, kj, masks, j0, sj), ms)), ls);
            const pd = tf.reshape(dropped(p, j), [B, Hkv, rep * T, sj]);
            const dvj = tf.matMul(pd, dO, true, false);
            const dpd = tf.reshape(tf.matMul(dO, vj, false, true), [B, Hkv, rep, T, sj]);
            const dp = dropped(dpd, j);
            const ds = tf.reshape(tf.mul(tf.mul(p, tf.sub(dp, Drow)), scale), [B, Hkv, rep * T, sj]);
            return [tf.add(dq, tf.matMul(ds, kj)), tf.matMul(ds, qgs, true, false), dvj];
          });
          dq.dispose();
          dq = dq2;
          dks.push(dk);
          dvs.push(dv);
        });
        const dk = dks.length === 1 ? dks[0] : tf.concat(dks, 2);
        const dv = dvs.length === 1 ? dvs[0] : tf.concat(dvs, 2);
        return [tf.reshape(dq, [B, H, T, D]), dk, dv];
      },
    };
  });
  return op(q, k, v);
}
