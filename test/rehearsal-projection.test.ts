/**
 * The rehearsal's H100 projection (lib/experiments/rehearsal/projection.ts) against the record it
 * reads: the BERT-base speeds of bench/results/cuda-train-step-2026-11-22T16-20-29Z.json at its
 * shapes, the MFU they imply, FLOPs per token for training, LoRA, encoding and checkpointing.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { BERT_BASE_PARAMETERS, bertBaseH100TokensPerSecond, flopsPerToken, H100_RECORD, H100_TF32_PEAK_FLOPS, h100Mfu, projectH100Seconds } from '../lib/experiments/rehearsal/projection.js';
import { packageRoot } from '../lib/util/package-root.js';

test("BERT-base speeds are the H100 record's, interpolated between its shapes and flat beyond", () => {
  const record = readFileSync(join(packageRoot(), H100_RECORD), 'utf8');
  for (const tps of [116988.43854472865]) assert.ok(record.includes(String(Math.round(tps)).slice(0, 5)), `${tps} in ${H100_RECORD}`);
  assert.equal(bertBaseH100TokensPerSecond(1000), bertBaseH100TokensPerSecond(4096));
  assert.equal(bertBaseH100TokensPerSecond(65536), bertBaseH100TokensPerSecond(16384));
  const mid = bertBaseH100TokensPerSecond(8192);
  assert.ok(mid > bertBaseH100TokensPerSecond(4096) && mid < bertBaseH100TokensPerSecond(16384));
  assert.ok(Math.abs(h100Mfu() - (6 * BERT_BASE_PARAMETERS * 197548.07) / H100_TF32_PEAK_FLOPS) < 1e-12);
});

test('FLOPs per token: 6·P training, 4·P LoRA, 2·P encoding, 2·P more with checkpointing; the hours follow', () => {
  assert.equal(flopsPerToken(10, 'train'), 60);
  assert.equal(flopsPerToken(10, 'lora'), 40);
  assert.equal(flopsPerToken(10, 'encode'), 20);
  assert.equal(flopsPerToken(10, 'lora', true), 60);
  assert.equal(flopsPerToken(10, 'encode', true), 20);
  const p = 6.74e9;
  const lora = projectH100Seconds({ tokens: 1e6, tokensPerMicroBatch: 1e4, parameters: p, kind: 'lora' });
  const ckpt = projectH100Seconds({ tokens: 1e6, tokensPerMicroBatch: 1e4, parameters: p, kind: 'lora', recompute: true });
  assert.ok(Math.abs(ckpt.seconds / lora.seconds - 1.5) < 1e-12);
  assert.match(ckpt.basis, /6·P per token, checkpointing included/);
  const bert = projectH100Seconds({ tokens: 16384 * 100, tokensPerMicroBatch: 16384, parameters: BERT_BASE_PARAMETERS, kind: 'train' });
  assert.ok(Math.abs(bert.seconds - 100 * 16384 / 197548.07) < 1e-9);
  assert.match(bert.basis, /measured/);
});
