/**
 * Blocked attention (lib/ops/blocked-attention.ts) equals plain attention — values and gradients
 * of q, k and v — with BERT's padding mask, a decoder's causal mask with left padding (rows whose
 * keys are all masked included), grouped-query heads, and block sizes from 1 to beyond the
 * sequence; with dropout it equals plain attention given the same per-block masks; and the golden
 * BERT gives the golden outputs and replays a golden training run with it on (and checkpointing).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { causalPaddingMask, groupedQueryAttention } from '../lib/ops/attention.js';
import { blockedAttention } from '../lib/ops/blocked-attention.js';
import { fusedDropout } from '../lib/ops/dropout.js';
import { loadModel } from '../lib/models/auto.js';
import { readSafetensors } from '../lib/models/safetensors.js';
import { readGoldenTrainRuns, replayGoldenTrainRun } from '../lib/parity/train.js';
import { DATA_DIR, GOLDEN_DIR } from './helpers/env.js';

before(async () => {
  await initBackend('cpu', { quiet: true });
});

function maxAbsDiff(a: tf.Tensor, b: tf.Tensor): number {
  return tf.tidy(() => tf.max(tf.abs(tf.sub(a, b))).dataSync()[0]);
}

/** Plain attention with probabilities multiplied by `probMask` (a full [B, H, T, S] dropout mask) when given. */
function plain(q: tf.Tensor, k: tf.Tensor, v: tf.Tensor, mask: tf.Tensor, probMask?: tf.Tensor): tf.Tensor {
  const T = q.shape[2] as number;
  const S = k.shape[2] as number;
  // groupedQueryAttention reads the mask as [mB, 1, T, S].
  const full = tf.broadcastTo(mask, [mask.shape[0] as number, 1, T, S]);
  const dropout = probMask ? (p: tf.Tensor) => tf.mul(p, tf.reshape(probMask, p.shape)) : undefined;
  return groupedQueryAttention(q, k, v, full, { dropout });
}

interface Case {
  name: string;
  B: number;
  H: number;
  Hkv: number;
  T: number;
  D: number;
  mask: () => tf.Tensor;
}

const CASES: Case[] = [
  {
    name: 'BERT padding mask [B, 1, 1, S]',
    B: 3, H: 4, Hkv: 4, T: 9, D: 8,
    mask: () => {
      const m = new Float32Array(3 * 9);
      for (const [b, from] of [[0, 9], [1, 5], [2, 2]]) for (let s = from; s < 9; s++) m[b * 9 + s] = -1e9;
      return tf.tensor4d(m, [3, 1, 1, 9]);
    },
  },
  {
    name: 'causal mask with left padding (fully masked rows), grouped-query heads',
    B: 2, H: 6, Hkv: 2, T: 8, D: 4,
    mask: () => {
      const keyMask = new Int32Array(2 * 8).fill(1);
      keyMask[0] = 0;
      keyMask[1] = 0;
      keyMask[2] = 0;
      return causalPaddingMask(keyMask, 2, 8, 8);
    },
  },
];

test('blocked attention equals plain attention in values and gradients (padding, causal, GQA, every block size)', () => {
  for (const c of CASES) {
    const q = tf.randomNormal([c.B, c.H, c.T, c.D], 0, 1, 'float32', 1);
    const k = tf.randomNormal([c.B, c.Hkv, c.T, c.D], 0, 1, 'float32', 2);
    const v = tf.randomNormal([c.B, c.Hkv, c.T, c.D], 0, 1, 'float32', 3);
    const w = tf.randomNormal([c.B, c.H, c.T, c.D], 0, 1, 'float32', 4);
    const mask = c.mask();
    const ref = plain(q, k, v, mask);
    const refGrads = tf.grads((a: tf.Tensor, b: tf.Tensor, d: tf.Tensor) => tf.sum(tf.mul(plain(a, b, d, mask), w)))([q, k, v]);
    for (const blockSize of [1, 3, c.T, 64]) {
      const out = blockedAttention(q, k, v, mask, { blockSize });
      const grads = tf.grads((a: tf.Tensor, b: tf.Tensor, d: tf.Tensor) => tf.sum(tf.mul(blockedAttention(a, b, d, mask, { blockSize }), w)))([q, k, v]);
      assert.ok(maxAbsDiff(out, ref) < 1e-6, `${c.name}, block ${blockSize}: values differ by ${maxAbsDiff(out, ref)}`);
      grads.forEach((g, i) => assert.ok(maxAbsDiff(g, refGrads[i]) < 2e-6, `${c.name}, block ${blockSize}: gradient of ${'qkv'[i]} differs by ${maxAbsDiff(g, refGrads[i])}`));
      tf.dispose([out, ...grads]);
    }
    tf.dispose([q, k, v, w, mask, ref, ...refGrads]);
  }
});

test('with dropout, blocked attention equals plain attention under the same per-block masks', () => {
  const c = CASES[1];
  const [B, H, T, D, Hkv] = [c.B, c.H, c.T, c.D, c.Hkv];
  const q = tf.randomNormal([B, H, T, D], 0, 1, 'float32', 5);
  const k = tf.randomNormal([B, Hkv, T, D], 0, 1, 'float32', 6);
  const v = tf.randomNormal([B, Hkv, T, D], 0, 1, 'float32', 7);
  const w = tf.randomNormal([B, H, T, D], 0, 1, 'float32', 8);
  const mask = c.mask();
  const rate = 0.3;
  const seed = 1234;
  const blockSize = 3;
  // Block j's mask is what the dropout op draws for a block of that shape with seed + j; its
  // probabilities are laid out [B, Hkv, rep·T, keys of the block].
  const rep = H / Hkv;
  const blocks: tf.Tensor[] = [];
  for (let j0 = 0, j = 0; j0 < T; j0 += blockSize, j++) {
    const sj = Math.min(blockSize, T - j0);
    blocks.push(fusedDropout(tf.ones([B, Hkv, rep, T, sj]), rate, seed + j));
  }
  const probMask = tf.reshape(tf.concat(blocks, 4), [B, H, T, T]);
  const f = (att: (a: tf.Tensor, b: tf.Tensor, d: tf.Tensor) => tf.Tensor) => (a: tf.Tensor, b: tf.Tensor, d: tf.Tensor) => tf.sum(tf.mul(att(a, b, d), w));
  const dropped = (a: tf.Tensor, b: tf.Tensor, d: tf.Tensor) => blockedAttention(a, b, d, mask, { blockSize, dropout: { rate, seed } });
  const reference = (a: tf.Tensor, b: tf.Tensor, d: tf.Tensor) => plain(a, b, d, mask, probMask);
  assert.ok(maxAbsDiff(dropped(q, k, v), reference(q, k, v)) < 1e-6);
  const g1 = tf.grads(f(dropped))([q, k, v]);
  const g2 = tf.grads(f(reference))([q, k, v]);
  g1.forEach((g, i) => assert.ok(maxAbsDiff(g, g2[i]) < 2e-6, `gradient of ${'qkv'[i]} differs by ${maxAbsDiff(g, g2[i])}`));
  // And the dropout did something: without it the output differs.
  assert.ok(maxAbsDiff(dropped(q, k, v), blockedAttention(q, k, v, mask, { blockSize })) > 1e-3);
});

test('golden BERT with blocked attention: forward outputs within the golden tolerance (training path, dropout 0)', async (t) => {
  if (!GOLDEN_DIR) return t.skip('no encoder golden set (ANGLE_GOLDEN_DIR or ../shared/golden)');
  const fj = JSON.parse((await import('node:fs')).readFileSync(join(GOLDEN_DIR, 'forward.json'), 'utf8')) as { sentences: string[]; max_length: number };
  const golden = readSafetensors(join(GOLDEN_DIR, 'forward.safetensors')).tensors;
  const m = await loadModel(join(GOLDEN_DIR, 'model'));
  try {
    m.model.setDropout(0);
    const batch = m.tokenizer.encodeBatch(fj.sentences, { maxLength: fj.max_length });
    for (const attention of ['plain', 'blocked'] as const) {
      // Under a gradient tape, so the training path (and blocked attention) runs.
      let diff = 0;
      const { value, grads } = tf.variableGrads(() => {
        const out = m.model.forward(batch, { training: true, attention });
        const ref = golden.get('last_hidden_state')!;
        diff = maxAbsDiff(out.lastHiddenState, tf.tensor(ref.data, ref.shape));
        return tf.sum(out.lastHiddenState) as tf.Scalar;
      });
      tf.dispose([value, ...Object.values(grads)]);
      t.diagnostic(`${attention}: last_hidden_state max |diff| ${diff.toExponential(2)}`);
      assert.ok(diff < 1e-5, `${attention}: last hidden state differs from the golden one by ${diff}`);
    }
  } finally {
    m.model.dispose();
  }
});

test('a golden training run replays with blocked attention and checkpointing on', async (t) => {
  if (!GOLDEN_DIR || !DATA_DIR) return t.skip('needs a golden set with train.json and the STS-B data (ANGLE_GOLDEN_DIR, ANGLE_DATA_DIR or ../shared)');
  const runs = readGoldenTrainRuns(GOLDEN_DIR);
  const name = [...runs.keys()].find((k) => k.startsWith('stsb')) ?? [...runs.keys()][0];
  const r = await replayGoldenTrainRun(GOLDEN_DIR, DATA_DIR, name, runs.get(name)!, { memory: { attention: 'blocked', checkpointing: true } });
  t.diagnostic(`${name}: ${r.steps} steps; worst loss rel diff ${r.worst.loss.toExponential(2)}; dev Spearman ${r.devSpearman.toFixed(5)} (ref ${r.devReference.toFixed(5)})`);
  assert.deepEqual(r.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`), []);
});
