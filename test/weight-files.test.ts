/**
 * lib/models/weight-files: which weight files a model directory has (safetensors first, then
 * PyTorch checkpoints, single or sharded), their indexes checked against the shards, lazy reading,
 * and a BERT that loads from `pytorch_model.bin` or two `.bin` shards exactly as from safetensors.
 * The tiny BERT in test/fixtures/torch/ was written by torch.save (make_fixtures.py), with the same
 * weights in bert-tiny.safetensors as the reference.
 */
import assert from 'node:assert/strict';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';

import { initBackend } from '../lib/backend/index.js';
import { loadModel } from '../lib/models/auto.js';
import { readSafetensors, writeSafetensors } from '../lib/models/safetensors.js';
import { openWeights, readTensors, readWeightIndex, weightFiles, PYTORCH_INDEX, SAFETENSORS_INDEX } from '../lib/models/weight-files.js';
import { InputError } from '../lib/util/errors.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'torch');
const BIN_DIR = join(FIXTURES, 'bert-tiny-bin');
const SHARDED_DIR = join(FIXTURES, 'bert-tiny-sharded');
const REFERENCE = join(FIXTURES, 'bert-tiny.safetensors');
const SHARDS = ['pytorch_model-00001-of-00002.bin', 'pytorch_model-00002-of-00002.bin'];

function tempDir(t: TestContext, prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

/** A copy of the sharded BERT whose index the test may then break. */
function shardedCopy(t: TestContext): { dir: string; index: { metadata: unknown; weight_map: Record<string, string> } } {
  const dir = join(tempDir(t, 'wf-sharded-'), 'model');
  cpSync(SHARDED_DIR, dir, { recursive: true });
  return { dir, index: JSON.parse(readFileSync(join(dir, PYTORCH_INDEX), 'utf8')) };
}

test('weightFiles: safetensors before PyTorch, single before sharded, and a clear error when there is none', (t) => {
  assert.deepEqual(weightFiles(BIN_DIR), [join(BIN_DIR, 'pytorch_model.bin')]);
  assert.deepEqual(weightFiles(SHARDED_DIR), SHARDS.map((s) => join(SHARDED_DIR, s)));
  const dir = tempDir(t, 'wf-order-');
  copyFileSync(join(BIN_DIR, 'pytorch_model.bin'), join(dir, 'pytorch_model.bin'));
  copyFileSync(REFERENCE, join(dir, 'model.safetensors'));
  assert.deepEqual(weightFiles(dir), [join(dir, 'model.safetensors')], 'a repo with both: safetensors, as transformers prefers');
  const none = tempDir(t, 'wf-none-');
  assert.throws(() => weightFiles(none), new RegExp(`${none}: model directory has none of model\\.safetensors, model\\.safetensors\\.index\\.json, pytorch_model\\.bin, pytorch_model\\.bin\\.index\\.json$`));
  writeFileSync(join(none, 'tf_model.h5'), '');
  assert.throws(() => weightFiles(none), /\(it has tf_model\.h5: TensorFlow weights, which are not read; convert them to safetensors\)/);
});

test('pytorch_model.bin and its two shards hold exactly the reference weights (and the position_ids buffer)', () => {
  const reference = readSafetensors(REFERENCE).tensors;
  for (const dir of [BIN_DIR, SHARDED_DIR]) {
    const got = readTensors(weightFiles(dir));
    assert.deepEqual([...got.keys()].sort(), [...reference.keys(), 'embeddings.position_ids'].sort(), dir);
    for (const [name, ref] of reference) {
      assert.deepEqual(got.get(name)!.shape, ref.shape, name);
      assert.deepEqual(got.get(name)!.data, ref.data, name);
    }
    assert.deepEqual(Array.from(got.get('embeddings.position_ids')!.data), Array.from({ length: 16 }, (_, i) => i));
  }
});

test('loadModel from a directory with only pytorch_model.bin, or only its shards, equals the safetensors model', async (t) => {
  await initBackend('cpu', { quiet: true });
  const st = join(tempDir(t, 'wf-st-'), 'model');
  mkdirSync(st);
  for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json']) copyFileSync(join(BIN_DIR, f), join(st, f));
  copyFileSync(REFERENCE, join(st, 'model.safetensors'));
  const models = await Promise.all([st, BIN_DIR, SHARDED_DIR].map((d) => loadModel(d)));
  t.after(() => models.forEach((m) => m.model.dispose()));
  const [ref, bin, sharded] = models;
  assert.deepEqual(bin.weightFiles, [join(BIN_DIR, 'pytorch_model.bin')]);
  assert.deepEqual(sharded.weightFiles, SHARDS.map((s) => join(SHARDED_DIR, s)));
  const sentences = ['a girl is playing guitar .', 'the dogs run in the park , the cat sits on a mat'];
  const batch = ref.tokenizer.encodeBatch(sentences);
  assert.ok(batch.inputIds.some((id) => id === 1), 'an unknown word maps to [UNK]');
  const want = ref.model.forward(batch).lastHiddenState.dataSync();
  for (const m of [bin, sharded]) {
    assert.deepEqual(m.tokenizer.encodeBatch(sentences), batch);
    assert.deepEqual(m.model.forward(batch).lastHiddenState.dataSync(), want);
  }
});

test('a sharded index that does not match its shards is an error naming the tensor and the shard', (t) => {
  // Listed in the index, missing from its shard.
  let c = shardedCopy(t);
  writeFileSync(join(c.dir, PYTORCH_INDEX), JSON.stringify({ ...c.index, weight_map: { ...c.index.weight_map, 'encoder.layer.1.output.dense.weight': SHARDS[1] } }));
  assert.throws(
    () => readTensors(weightFiles(c.dir)),
    (e: Error) => e instanceof InputError && e.message.startsWith(`${join(c.dir, PYTORCH_INDEX)}: index does not match its shards: tensor 'encoder.layer.1.output.dense.weight' is listed for ${SHARDS[1]} but ${SHARDS[1]} does not contain it`),
  );
  // In a shard, not in the index.
  c = shardedCopy(t);
  const { 'pooler.dense.bias': _dropped, ...fewer } = c.index.weight_map;
  writeFileSync(join(c.dir, PYTORCH_INDEX), JSON.stringify({ ...c.index, weight_map: fewer }));
  assert.throws(() => readTensors(weightFiles(c.dir)), new RegExp(`tensor 'pooler\\.dense\\.bias' is in ${SHARDS[1]} but the index does not list it`));
  // Listed for the other shard.
  c = shardedCopy(t);
  writeFileSync(join(c.dir, PYTORCH_INDEX), JSON.stringify({ ...c.index, weight_map: { ...c.index.weight_map, 'pooler.dense.bias': SHARDS[0] } }));
  assert.throws(() => readTensors(weightFiles(c.dir)), new RegExp(`tensor 'pooler\\.dense\\.bias' is listed for ${SHARDS[0]} but is in ${SHARDS[1]}`));
  // A shard missing, a shard outside the directory, an index that is not one.
  c = shardedCopy(t);
  rmSync(join(c.dir, SHARDS[1]));
  assert.throws(() => readTensors(weightFiles(c.dir)), new RegExp(`pytorch_model\\.bin\\.index\\.json: shard ${SHARDS[1]} \\(listed for \\d+ tensors, e\\.g\\. '[^']+'\\) is missing`));
  writeFileSync(join(c.dir, PYTORCH_INDEX), JSON.stringify({ weight_map: { w: '../elsewhere.bin' } }));
  assert.throws(() => weightFiles(c.dir), /weight_map\['w'\] = "\.\.\/elsewhere\.bin" points outside the model directory/);
  writeFileSync(join(c.dir, PYTORCH_INDEX), JSON.stringify({ metadata: {} }));
  assert.throws(() => readWeightIndex(join(c.dir, PYTORCH_INDEX)), /has no 'weight_map' object/);
  writeFileSync(join(c.dir, PYTORCH_INDEX), '{"weight_map": ');
  assert.throws(() => weightFiles(c.dir), /pytorch_model\.bin\.index\.json: not a readable JSON index/);
});

test('the same tensor in two weight files is an error; safetensors shards are checked against their index too', (t) => {
  const dir = tempDir(t, 'wf-dup-');
  copyFileSync(join(BIN_DIR, 'pytorch_model.bin'), join(dir, 'a.bin'));
  copyFileSync(join(BIN_DIR, 'pytorch_model.bin'), join(dir, 'b.bin'));
  assert.throws(() => readTensors([join(dir, 'a.bin'), join(dir, 'b.bin')]), /b\.bin: tensor '[^']+' appears in more than one weight file \(also in a\.bin\)/);

  const st = tempDir(t, 'wf-st-index-');
  writeSafetensors(join(st, 'model-00001-of-00002.safetensors'), { a: { shape: [2], data: [1, 2] } });
  writeSafetensors(join(st, 'model-00002-of-00002.safetensors'), { b: { shape: [1], data: [3] } });
  const map = { a: 'model-00001-of-00002.safetensors', b: 'model-00002-of-00002.safetensors' };
  writeFileSync(join(st, SAFETENSORS_INDEX), JSON.stringify({ metadata: { total_size: 12 }, weight_map: map }));
  assert.deepEqual(Object.fromEntries([...readTensors(weightFiles(st))].map(([k, v]) => [k, Array.from(v.data)])), { a: [1, 2], b: [3] });
  writeFileSync(join(st, SAFETENSORS_INDEX), JSON.stringify({ weight_map: { ...map, c: 'model-00002-of-00002.safetensors' } }));
  assert.throws(() => readTensors(weightFiles(st)), /tensor 'c' is listed for model-00002-of-00002\.safetensors but model-00002-of-00002\.safetensors does not contain it/);
});

test('openWeights: names, dtypes and shapes without reading data; raw 16-bit tensors; one tensor at a time', () => {
  const r = openWeights([join(FIXTURES, 'tensors.pt')]);
  try {
    assert.equal(r.names().length, 20);
    assert.deepEqual(r.info('bf16'), { name: 'bf16', dtype: 'BF16', shape: [4], file: join(FIXTURES, 'tensors.pt') });
    const raw = r.readRaw('bf16');
    assert.deepEqual([raw.dtype, raw.bytes.byteLength], ['BF16', 8]);
    // bf16 keeps 8 bits of mantissa: 1e10 is stored as 9999220736.
    assert.deepEqual(Array.from(r.read('bf16').data), [1, -0.5, 3.140625, 9999220736]);
    assert.equal(r.has('nope'), false);
    assert.throws(() => r.read('nope'), /no tensor 'nope' in tensors\.pt/);
  } finally {
    r.close();
  }
});
