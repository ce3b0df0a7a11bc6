/**
 * The tile-for-tile reference of the fused attention kernel (lib/ops/flash-attention-reference.ts)
 * equals plain attention (lib/ops/attention.ts on the cpu backend) in values and in the gradients
 * of q, k and v: BERT's padding mask, a decoder's causal mask with left padding (rows whose keys are
 * all masked), grouped-query heads, lengths that are and are not multiples of the tiles, and
 * dropout, where plain attention's probabilities are multiplied by the cuda backend's dropout mask
 * for the same seed (computed here by the JavaScript Philox, itself checked against Random123's
 * known answers). The kernel's tile sizes are read out of native/src/attention.cu and must be the
 * reference's.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { before, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { causalPaddingMask, groupedQueryAttention } from '../lib/ops/attention.js';
import { ATTENTION_TILES, flashAttentionBackwardReference, flashAttentionForwardReference, type AttentionDims, type AttentionMask } from '../lib/ops/flash-attention-reference.js';
import { deviceDropoutMultipliers, philox4x32 } from '../lib/ops/philox-dropout-mask.js';

before(async () => {
  await initBackend('cpu', { quiet: true });
});

test('the JavaScript Philox4x32-10 gives Random123\'s known answers', () => {
  const hex = (w: number[]) => w.map((x) => x.toString(16).padStart(8, '0'));
  assert.deepEqual(hex(philox4x32([0, 0, 0, 0], [0, 0])), ['6627e8d5', 'e169c58d', 'bc57ac4c', '9b00dbd8']);
  assert.deepEqual(hex(philox4x32([0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff], [0xffffffff, 0xffffffff])), ['408f276d', '41c83b0e', 'a20bc7c6', '6d5451fd']);
  assert.deepEqual(hex(philox4x32([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], [0xa4093822, 0x299f31d0])), ['d16cfe09', '94fdcceb', '5001e420', '24126ea1']);
});

test('the device dropout mask keeps about 1 − rate of the elements, scaled by 1/(1 − rate), and depends on the seed', () => {
  const a = deviceDropoutMultipliers(40_000, 0.25, 7);
  const kept = a.filter((x) => x !== 0);
  assert.ok(Math.abs(kept.length / a.length - 0.75) < 0.01, `kept ${kept.length} of ${a.length}`);
  assert.ok(kept.every((x) => x === Math.fround(1 / 0.75)));
  const b = deviceDropoutMultipliers(40_000, 0.25, 8);
  assert.ok(a.some((x, i) => x !== b[i]));
  assert.deepEqual(deviceDropoutMultipliers(4, 0, 1), new Float32Array([1, 1, 1, 1]));
});

test('the reference uses the tile sizes of native/src/attention.cu', () => {
  const cu = readFileSync(new URL('../native/src/attention.cu', import.meta.url), 'utf8');
  for (const [name, value] of Object.entries(ATTENTION_TILES)) {
    const m = new RegExp(`constexpr int ${name} = (\\d+);`).exec(cu);
    assert.ok(m, `attention.cu declares constexpr int ${name}`);
    assert.equal(Number(m[1]), value, `${name}`);
  }
});

interface Case {
  name: string;
  dims: AttentionDims;
  /** The additive mask as [mB, 1, mT, S]. */
  mask?: () => tf.Tensor4D;
}

function paddingMask(B: number, S: number, lengths: number[]): tf.Tensor4D {
  const m = new Float32Array(B * S);
  lengths.forEach((len, b) => m.fill(-1e9, b * S + len, (b + 1) * S));
  return tf.tensor4d(m, [B, 1, 1, S]);
}

const CASES: Case[] = [
  { name: 'no mask, one tile', dims: { B: 1, H: 2, Hkv: 2, T: 5, S: 5, D: 8 } },
  { name: 'BERT padding mask, T across tiles', dims: { B: 3, H: 2, Hkv: 2, T: 37, S: 37, D: 16 }, mask: () => paddingMask(3, 37, [37, 20, 3]) },
  {
    name: 'causal mask with left padding (fully masked rows), GQA 6/2, D = 40',
    dims: { B: 2, H: 6, Hkv: 2, T: 19, S: 19, D: 40 },
    mask: () => {
      const keys = new Int32Array(2 * 19).fill(1);
      keys.fill(0, 0, 4);
      return causalPaddingMask(keys, 2, 19, 19);
    },
  },
  {
    name: 'decoder step with a KV cache (T < S), MQA, D = 128',
    dims: { B: 1, H: 4, Hkv: 1, T: 3, S: 70, D: 128 },
    mask: () => causalPaddingMask(new Int32Array(70).fill(1), 1, 3, 70),
  },
];

function plainAttention(c: Case, q: tf.Tensor, k: tf.Tensor, v: tf.Tensor, mask: tf.Tensor | undefined, dropMask: Float32Array | undefined): tf.Tensor {
  const { B, T, S } = c.dims;
  const full = mask ? tf.broadcastTo(mask, [mask.shape[0] as number, 1, T, S]) : tf.zeros([1, 1, T, S]);
  // The probabilities are [B, Hkv, rep, T, S]: the flat order of [B, H, T, S], which the mask indexes.
  const dropout = dropMask ? (p: tf.Tensor) => tf.mul(p, tf.tensor(dropMask, p.shape)) : undefined;
  void B;
  return groupedQueryAttention(q, k, v, full, { dropout });
}

function maskOf(t: tf.Tensor4D | undefined): AttentionMask | undefined {
  return t ? { data: t.dataSync() as Float32Array, mB: t.shape[0], mT: t.shape[2] } : undefined;
}

function maxAbsDiff(a: Float32Array, b: Float32Array | Int32Array | Uint8Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

for (const dropout of [undefined, { rate: 0.2, seed: 991 }]) {
  test(`the reference equals plain attention in values and gradients${dropout ? ' under the device dropout mask' : ''}`, () => {
    for (const c of CASES) {
      const { B, H, Hkv, T, S, D } = c.dims;
      const q = tf.randomNormal([B, H, T, D], 0, 1, 'float32', 11);
      const k = tf.randomNormal([B, Hkv, S, D], 0, 1, 'float32', 12);
      const v = tf.randomNormal([B, Hkv, S, D], 0, 1, 'float32', 13);
      const w = tf.randomNormal([B, H, T, D], 0, 1, 'float32', 14);
      const mask = c.mask?.();
      const dropMask = dropout ? deviceDropoutMultipliers(B * H * T * S, dropout.rate, dropout.seed) : undefined;
      const ref = plainAttention(c, q, k, v, mask, dropMask);
      const refGrads = tf.grads((a: tf.Tensor, b: tf.Tensor, d: tf.Tensor) => tf.sum(tf.mul(plainAttention(c, a, b, d, mask, dropMask), w)))([q, k, v]);
      const [qa, ka, va, wa] = [q, k, v, w].map((x) => x.dataSync() as Float32Array);
      const fwd = flashAttentionForwardReference(c.dims, qa, ka, va, maskOf(mask), { dropout });
      const grads = flashAttentionBackwardReference(c.dims, qa, ka, va, maskOf(mask), fwd, wa, { dropout });
      const scaleOf = (x: tf.Tensor) => Math.max(1, tf.max(tf.abs(x)).dataSync()[0]);
      const dOut = maxAbsDiff(fwd.out, ref.dataSync() as Float32Array);
      assert.ok(dOut < 2e-6 * scaleOf(ref), `${c.name}: values differ by ${dOut}`);
      [grads.dq, grads.dk, grads.dv].forEach((g, i) => {
        const diff = maxAbsDiff(g, refGrads[i].dataSync() as Float32Array);
        assert.ok(diff < 1e-5 * scaleOf(refGrads[i]), `${c.name}: gradient of ${'qkv'[i]} differs by ${diff}`);
      });
      tf.dispose([q, k, v, w, ref, ...refGrads, ...(mask ? [mask] : [])]);
    }
  });
}

test('with dropout the reference differs from no dropout, and a row whose keys are all masked is a uniform average', () => {
  const dims = { B: 1, H: 1, Hkv: 1, T: 2, S: 4, D: 2 };
  const q = new Float32Array([1, 2, 3, 4]);
  const k = new Float32Array([1, 0, 0, 1, 1, 1, -1, 0]);
  const v = new Float32Array([1, 2, 3, 4, 5, 6, 7, 8]);
  const mask: AttentionMask = { data: new Float32Array([-1e9, -1e9, -1e9, -1e9, 0, 0, 0, 0]), mB: 1, mT: 2 };
  const plain = flashAttentionForwardReference(dims, q, k, v, mask);
  assert.deepEqual(Array.from(plain.out.slice(0, 2)), [4, 5]);
  const dropped = flashAttentionForwardReference(dims, q, k, v, mask, { dropout: { rate: 0.5, seed: 3 } });
  assert.ok(maxAbsDiff(plain.out, dropped.out) > 1e-3);
  assert.throws(() => flashAttentionForwardReference({ ...dims, D: 3 }, q, k, v, mask), /q has 4 values, expected B·H·T·D = 6/);
  assert.throws(() => flashAttentionForwardReference({ ...dims, H: 3, Hkv: 2 }, q, k, v, mask), /3 query heads are not a multiple of 2/);
});
