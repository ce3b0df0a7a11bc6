/**
 * Frozen bases in 16 and 4 bits (lib/ops/half-float.ts, nf4.ts, frozen-linear.ts):
 *
 * - NF4 dequantisation of a known block equals the codebook arithmetic level[code] · absmax, on
 *   the host and as tfjs ops, with and without double quantisation; codes are the nearest level
 *   by bitsandbytes' float32 midpoints; the packing is bitsandbytes' byte layout;
 * - the round-trip error, stated: relative RMS error of NF4 on N(0, 1) weights (QLoRA's premise)
 *   and of fp16/bf16; fp16 and bf16 checkpoint values survive float32 and back bit for bit;
 * - frozenLinear gives the values and input gradients of a float32 linear layer over the decoded
 *   weight, and the weight gets no gradient;
 * - a LoRA replay over an NF4 base of the golden decoder (llama2c stories260K): bit for bit the
 *   replay over a float32 base holding the NF4-decoded weights (the QLoRA computation exactly),
 *   and against the float32 base a loss difference at every step no larger than the one the
 *   quantised base causes before training (step 0, LoRA B = 0): training over the 4-bit base
 *   follows training over the float32 one and does not amplify the quantisation error;
 * - a frozen 16- or 4-bit base allocates no gradient (the adapters do).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { leanVariableGrads } from '../lib/backend/lean-tape.js';
import { addLora } from '../lib/models/adapters/lora.js';
import { loadModel } from '../lib/models/auto.js';
import type { LlamaModel } from '../lib/models/llama/model.js';
import { decodeFrozenWeight, frozenLinear, frozenWeightBytes, makeFrozenWeight } from '../lib/ops/frozen-linear.js';
import { bf16ToFloat, encodeHalf, floatToBf16, floatToFp16, fp16ToFloat } from '../lib/ops/half-float.js';
import { dequantizeNf4Host, dynamicMap8, nf4AbsmaxHost, nf4Code, NF4_LEVELS, quantizeNf4 } from '../lib/ops/nf4.js';
import { AdamW } from '../lib/train/adamw.js';
import { bindObjective } from '../lib/train/objective.js';
import { optimizerStep, type StepContext } from '../lib/train/training-step.js';
import { mulberry32 } from '../lib/util/mulberry32.js';
import { SHARED_DIR } from './helpers/env.js';

before(async () => {
  await initBackend('cpu', { quiet: true });
});

/** N(0, 1) samples from a seed (Box–Muller). */
function normals(n: number, seed: number): Float32Array {
  const next = mulberry32(seed);
  const u = () => (next() + 0.5) / 4294967296;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i += 2) {
    const r = Math.sqrt(-2 * Math.log(u()));
    const a = 2 * Math.PI * u();
    out[i] = r * Math.cos(a);
    if (i + 1 < n) out[i + 1] = r * Math.sin(a);
  }
  return out;
}

function relRms(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let e = 0;
  let r = 0;
  for (let i = 0; i < a.length; i++) {
    e += (a[i] - b[i]) ** 2;
    r += b[i] ** 2;
  }
  return Math.sqrt(e / r);
}

test('NF4: a known block dequantises to level[code] · absmax; codes are the nearest level; bitsandbytes byte layout', () => {
  // One block of 64: absmax 2 (at index 5), and values placed at known fractions of it.
  const block = new Float32Array(64);
  const fractions = [-1, -0.7, -0.5, -0.39, -0.3, 1, -0.1, 0, 0.04, 0.0398, 0.2, 0.33, 0.45, 0.56, 0.72, 0.9];
  fractions.forEach((f, i) => (block[i] = 2 * f));
  const q = quantizeNf4(block);
  assert.deepEqual(Array.from(q.absmax!), [2]);
  const expectCodes = fractions.map((f) => {
    // The nearest level (ties to the lower one), computed directly from the codebook.
    let best = 0;
    for (let k = 1; k < 16; k++) if (Math.abs(f - NF4_LEVELS[k]) < Math.abs(f - NF4_LEVELS[best])) best = k;
    return best;
  });
  const codes = fractions.map((_, i) => nf4Code(Math.fround(Math.fround(block[i]) * Math.fround(1 / 2))));
  assert.deepEqual(codes, expectCodes);
  // Byte layout: element 2j in the high nibble of byte j (little-endian bytes in the int32).
  const bytes = new Uint8Array(q.codes.buffer);
  for (let i = 0; i < fractions.length; i += 2) assert.equal(bytes[i / 2], (codes[i] << 4) | codes[i + 1], `byte ${i / 2}`);
  const host = dequantizeNf4Host(q);
  fractions.forEach((_, i) => assert.equal(host[i], Math.fround(NF4_LEVELS[codes[i]] * 2), `value ${i}`));
  // The rest of the block is 0 → code 7 → 0.
  for (let i = fractions.length; i < 64; i++) assert.equal(host[i], 0);
  // The same on the device (tfjs ops), with and without double quantisation of the absmax.
  const w = makeFrozenWeight(block, [8, 8], 'nf4');
  assert.deepEqual(Array.from(decodeFrozenWeight(w).dataSync()), Array.from(host));
  const wide = normals(64 * 600, 3);
  for (const dq of [false, true]) {
    const qq = quantizeNf4(wide, dq);
    const fw = makeFrozenWeight(wide, [600, 64], 'nf4', { doubleQuant: dq });
    assert.deepEqual(Array.from(decodeFrozenWeight(fw).dataSync()), Array.from(dequantizeNf4Host(qq)), `double quantisation ${dq}: device equals host`);
    // Every value is level[code] · absmax of its block.
    const absmax = nf4AbsmaxHost(qq);
    const deq = dequantizeNf4Host(qq);
    for (let i = 0; i < wide.length; i += 997) {
      const level = deq[i] / absmax[Math.floor(i / 64)];
      assert.ok(NF4_LEVELS.some((l) => Math.abs(l - level) < 1e-6), `value ${i}: ${deq[i]} / ${absmax[Math.floor(i / 64)]} is not a level`);
    }
  }
});

test('round-trip errors, stated: NF4 on N(0, 1) weights, double quantisation, fp16, bf16', (t) => {
  const w = normals(64 * 4096, 11);
  const nf4 = relRms(dequantizeNf4Host(quantizeNf4(w)), w);
  const nf4dq = relRms(dequantizeNf4Host(quantizeNf4(w, true)), w);
  const half = (fmt: 'fp16' | 'bf16') => relRms(decodeFrozenWeight(makeFrozenWeight(w, [4096, 64], fmt)).dataSync(), w);
  const fp16 = half('fp16');
  const bf16 = half('bf16');
  t.diagnostic(`relative RMS error: NF4 ${nf4.toFixed(4)}, NF4 + double quantisation ${nf4dq.toFixed(4)}, fp16 ${fp16.toExponential(2)}, bf16 ${bf16.toExponential(2)}`);
  // NF4's 16 levels on blocks of 64 normal values: about 9-10 % RMS (QLoRA's premise is that this
  // error costs no accuracy once adapters train); double quantisation adds almost nothing.
  assert.ok(nf4 > 0.05 && nf4 < 0.11, `NF4 relative RMS error ${nf4}`);
  assert.ok(Math.abs(nf4dq - nf4) < 0.002, `double quantisation changed the error from ${nf4} to ${nf4dq}`);
  // fp16: 11 significant bits (2^-11 relative rounding, ~3e-4 RMS for uniform errors); bf16: 8 bits.
  assert.ok(fp16 < 3e-4, `fp16 ${fp16}`);
  assert.ok(bf16 > 1e-3 && bf16 < 3e-3, `bf16 ${bf16}`);
});

test('fp16 and bf16: known bit patterns, and checkpoint values survive float32 and back bit for bit', () => {
  assert.equal(floatToFp16(1), 0x3c00);
  assert.equal(floatToFp16(-2), 0xc000);
  assert.equal(floatToFp16(65504), 0x7bff);
  assert.equal(floatToFp16(1e6), 0x7c00);
  assert.equal(floatToFp16(2 ** -24), 0x0001);
  assert.equal(fp16ToFloat(0x3555), Math.fround(0.333251953125));
  assert.equal(floatToBf16(1), 0x3f80);
  assert.equal(bf16ToFloat(0x3f80), 1);
  assert.equal(floatToBf16(Math.fround(1 + 2 ** -8)), 0x3f80, 'ties round to even');
  assert.equal(floatToBf16(Math.fround(1 + 3 * 2 ** -8)), 0x3f82);
  for (let h = 0; h < 65536; h += 7) {
    const f = fp16ToFloat(h);
    if (!Number.isNaN(f)) assert.equal(floatToFp16(f), h, `fp16 pattern ${h.toString(16)}`);
    const b = bf16ToFloat(h);
    if (!Number.isNaN(b)) assert.equal(floatToBf16(b), h, `bf16 pattern ${h.toString(16)}`);
  }
  // Packed two per int32, low half first.
  const packed = encodeHalf([1, -2, 65504], 'fp16');
  assert.deepEqual(Array.from(new Uint16Array(packed.buffer)), [0x3c00, 0xc000, 0x7bff, 0]);
});

test('frozenLinear: the values and input gradients of a float32 linear over the decoded weight; no weight gradient', () => {
  const W = normals(24 * 40, 5).map((v) => v * 0.1);
  const x = tf.tensor2d(normals(7 * 40, 6), [7, 40]);
  const dyw = tf.tensor2d(normals(7 * 24, 7), [7, 24]);
  for (const format of ['fp16', 'bf16', 'nf4'] as const) {
    const fw = makeFrozenWeight(W, [24, 40], format);
    const dense = decodeFrozenWeight(fw);
    const ref = tf.matMul(x, tf.transpose(dense));
    const out = frozenLinear(x, fw);
    assert.deepEqual(Array.from(out.dataSync()), Array.from(ref.dataSync()), `${format}: values`);
    const gRef = tf.grad((xi: tf.Tensor) => tf.sum(tf.mul(tf.matMul(xi, tf.transpose(dense)), dyw)))(x);
    const g = tf.grad((xi: tf.Tensor) => tf.sum(tf.mul(frozenLinear(xi, fw), dyw)))(x);
    assert.deepEqual(Array.from(g.dataSync()), Array.from(gRef.dataSync()), `${format}: input gradient`);
    assert.ok(frozenWeightBytes(fw) < 4 * W.length / (format === 'nf4' ? 7 : 1.9), `${format}: ${frozenWeightBytes(fw)} bytes`);
  }
});

const LLAMA = SHARED_DIR ? join(SHARED_DIR, 'golden', 'llama2c-stories260K', 'model') : undefined;
const TEXTS = ['Lily played with the ball.', 'The girl played with a ball.', 'Tom ran to the park.', 'A boy ran to the park.', 'The cat sat on the mat.', 'The dog barked at the moon.', 'She was very happy.', 'She was very sad.'];

/** Six LoRA steps (all linear layers, r 8) on the golden decoder over a base stored as asked. */
async function loraReplay(base: 'fp32' | 'nf4' | 'nf4-decoded-fp32'): Promise<{ losses: number[]; baseGrads: number }> {
  const m = await loadModel(LLAMA!);
  const model = m.model as LlamaModel;
  try {
    addLora(model, { r: 8, alpha: 16, dropout: 0, targetModules: 'all-linear' }, 3);
    if (base === 'nf4') assert.ok(model.storeFrozenBase('nf4', { doubleQuant: true }).length > 0);
    if (base === 'nf4-decoded-fp32') {
      for (const [module] of model.linearModules()) {
        const v = model.params.get(`${module}.weight`)!;
        tf.tidy(() => v.assign(tf.tensor(dequantizeNf4Host(quantizeNf4(v.dataSync(), true)), v.shape)));
      }
    }
    const tokens = m.tokenizer.encodeBatch(TEXTS, { maxLength: 16 });
    const batch = { epoch: 0, index: 0, examples: new Uint32Array(4), tokens, labels: [1, 1, 0, 0], keys: TEXTS, realTokens: tokens.batch * tokens.seqLen };
    const trainable = model.trainableParameters();
    const optimizer = new AdamW(trainable, { weightDecay: 0 });
    const objective = bindObjective({ name: 'angle' }, 'pairs');
    const ctx: StepContext = { model, trainable, pooling: 'last', padSide: m.tokenizer.padSide, objective: objective.loss, optimizer };
    const losses: number[] = [];
    for (let s = 0; s < 6; s++) losses.push((await optimizerStep(ctx, [batch], 5e-3)).loss);
    // Which parameters get a gradient: only the adapters.
    const { value, grads } = leanVariableGrads(() => {
      const out = model.forward(tokens, { training: true });
      return tf.sum(out.lastHiddenState) as tf.Scalar;
    }, [...model.params.values()]);
    const trainableNames = new Set([...trainable.values()].map((v) => v.name));
    const baseGrads = Object.keys(grads).filter((n) => !trainableNames.has(n) && /_proj/.test(n)).length;
    tf.dispose([value, ...Object.values(grads)]);
    optimizer.dispose();
    objective.dispose();
    return { losses, baseGrads };
  } finally {
    model.dispose();
  }
}

test('LoRA over an NF4 base of the golden decoder: exactly QLoRA, and within the quantisation offset of the float32 base', async (t) => {
  if (!LLAMA || !existsSync(LLAMA)) return t.skip('no decoder golden set (../shared/golden/llama2c-stories260K)');
  const fp32 = await loraReplay('fp32');
  const nf4 = await loraReplay('nf4');
  const decoded = await loraReplay('nf4-decoded-fp32');
  t.diagnostic(`losses fp32 ${fp32.losses.map((l) => l.toFixed(4)).join(' ')}`);
  t.diagnostic(`losses nf4  ${nf4.losses.map((l) => l.toFixed(4)).join(' ')}`);
  assert.deepEqual(nf4.losses, decoded.losses, 'the 4-bit storage computes what a float32 base holding the decoded weights computes');
  const offset = Math.abs(nf4.losses[0] - fp32.losses[0]);
  assert.ok(offset > 0, 'the quantised base changes the loss');
  nf4.losses.forEach((l, s) => assert.ok(Math.abs(l - fp32.losses[s]) <= offset * (1 + 1e-6), `step ${s}: |${l} − ${fp32.losses[s]}| exceeds the step-0 offset ${offset}`));
  assert.ok(nf4.losses[5] < nf4.losses[0], 'the loss falls');
  assert.equal(nf4.baseGrads, 0, 'a stored frozen base gets no gradient');
});

test('on the shape-only backend a stored base takes its bytes, not 4 per weight', async () => {
  const { measurePeakBytes } = await import('../lib/backend/shape-only/index.js');
  const { KNOWN_CONFIGS, modelFromConfig } = await import('../lib/models/model-from-config.js');
  const cfg = { ...KNOWN_CONFIGS['NousResearch/Llama-2-7b-hf'], num_hidden_layers: 2 };
  const r = await measurePeakBytes(() => {
    const model = modelFromConfig(cfg) as LlamaModel;
    const fp32 = model.numParameters() * 4;
    addLora(model, { r: 32, alpha: 32, dropout: 0, targetModules: 'all-linear' });
    const stored = model.storeFrozenBase('nf4', { doubleQuant: true });
    const bytes = model.storedBaseBytes();
    model.dispose();
    return { fp32, stored: stored.length, bytes };
  });
  assert.equal(r.result.stored, 14);
  const linearWeights = 2 * (4 * 4096 * 4096 + 3 * 4096 * 11008);
  // 4 bits a value, an 8-bit absmax per 64 values and a float32 per 256 absmax (+ padding to int32).
  assert.ok(Math.abs(r.result.bytes - linearWeights * (0.5 + 1 / 64 + 4 / (64 * 256))) < 64, `${r.result.bytes} bytes`);
  assert.equal(dynamicMap8().length, 256);
});
