/**
 * One registry entry per architecture (lib/models/architecture.ts, lib/models/architectures.ts)
 * and the pooling module of a model (lib/models/pooling.ts, lib/embed/pooling-module.ts):
 *
 * - a toy architecture (./helpers/toy-architecture.ts: one new file plus its registration line)
 *   is built from its config, saved and loaded back by loadModel, pooled with its entry's default
 *   pooling, and rehearsed (one real optimiser step through the rehearsal's training code);
 * - the library's own entries answer for their configs (model_type, default pooling, widths);
 * - a model saved with a pooling as sentence-transformers modules loads back with that pooling
 *   as its module, and the encoder without a pooling option embeds with it;
 * - one alias table: AnglE Table 4's row names parse to the poolings its recipes train, and the
 *   recipe names keep their spelling.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { PooledSentenceEncoder } from '../lib/embed/encoder.js';
import { poolingModuleOf } from '../lib/embed/pooling-module.js';
import { saveSentenceTransformer } from '../lib/embed/sentence-transformer-export.js';
import { TABLE4_POOLINGS, angleBert, angleStsbWithPooling } from '../lib/experiments/recipes/index.js';
import { rehearsalTokenizer } from '../lib/experiments/rehearsal/models.js';
import { rehearseTraining } from '../lib/experiments/rehearsal/train.js';
import { architectureOfConfig, defaultPoolingOf, embeddingWidthOfConfig, onnxExporterFor, registerArchitecture } from '../lib/models/architectures.js';
import { loadModel } from '../lib/models/auto.js';
import { KNOWN_CONFIGS, modelFromConfig, parameterCountOfConfig } from '../lib/models/model-from-config.js';
import { parsePooling, type Pooling } from '../lib/models/pooling.js';
import { RAN_BASE_ASSUMED_CONFIG } from '../lib/models/ran/ran-base.js';
import { writeSafetensors } from '../lib/models/safetensors.js';
import { InputError } from '../lib/util/errors.js';
import { GOLDEN_DIR } from './helpers/env.js';
import { TOY_ARCHITECTURE, TOY_CONFIG, TOY_MODEL_TYPE, ToyTokenizer } from './helpers/toy-architecture.js';

const work = mkdtempSync(join(tmpdir(), 'architecture-registry-'));
const TEXTS = ['a dog runs in the park', 'two cats sleep', 'the weather is nice today'];

before(async () => {
  await initBackend('cpu', { quiet: true });
  registerArchitecture(TOY_ARCHITECTURE);
});
after(() => rmSync(work, { recursive: true, force: true }));

function maxAbs(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

test('a toy architecture registered by one line is built from its config, loaded from a folder, pooled with its default and rehearsed', async () => {
  assert.throws(() => registerArchitecture(TOY_ARCHITECTURE), /registered with that name or model_type already/);
  // Build: from its config alone, with its parameter count and width from the entry.
  const built = modelFromConfig(TOY_CONFIG, { init: 'normal', seed: 3 });
  assert.equal(built.architecture, TOY_MODEL_TYPE);
  assert.equal(built.numParameters(), parameterCountOfConfig(TOY_CONFIG));
  assert.equal(built.numParameters(), 64 * 8 + 8 * 8 + 8);
  assert.equal(embeddingWidthOfConfig(TOY_CONFIG), 8);
  assert.equal(onnxExporterFor(TOY_MODEL_TYPE), undefined);
  assert.throws(() => modelFromConfig({ ...TOY_CONFIG, activation: 'relu' }), (e: unknown) => e instanceof InputError && /activation 'relu'/.test((e as Error).message));
  assert.throws(() => modelFromConfig(TOY_CONFIG, { frozenBase: { format: 'bf16' } }), /frozen base is for a decoder's linear layers \(.*llama.*\), not toy-bag/);

  // Load: config.json + model.safetensors, through loadModel's dispatch on model_type.
  const dir = join(work, 'toy');
  mkdirSync(dir);
  writeFileSync(join(dir, 'config.json'), JSON.stringify(TOY_CONFIG));
  const tensors: Record<string, { shape: number[]; data: Float32Array }> = {};
  for (const [name, v] of built.params) tensors[name] = { shape: v.shape.slice(), data: (await v.data()) as Float32Array };
  writeSafetensors(join(dir, 'model.safetensors'), tensors);
  const loaded = await loadModel(dir);
  assert.equal(loaded.model.architecture, TOY_MODEL_TYPE);
  assert.ok(loaded.tokenizer instanceof ToyTokenizer);
  for (const [name, v] of built.params) assert.equal(maxAbs((await loaded.model.params.get(name)!.data()) as Float32Array, (await v.data()) as Float32Array), 0, name);

  // Pool: no pooling named -> the entry's default (avg), the same vectors as asking for avg, not cls.
  assert.deepEqual(poolingModuleOf(loaded), { pooling: 'avg', applies: 'avg', from: 'architecture default' });
  const byDefault = new PooledSentenceEncoder(loaded, { engine: 'tfjs' });
  assert.equal(byDefault.pooling, 'avg');
  const own = await byDefault.encode(TEXTS);
  assert.equal(maxAbs(own.data, (await new PooledSentenceEncoder(loaded, { pooling: 'avg', engine: 'tfjs' }).encode(TEXTS)).data), 0);
  assert.ok(maxAbs(own.data, (await new PooledSentenceEncoder(loaded, { pooling: 'cls', engine: 'tfjs' }).encode(TEXTS)).data) > 1e-3);

  // Rehearse: the rehearsal's tokenizer and model come from the entry; one real optimiser step runs.
  const { tokenizer, note } = rehearsalTokenizer(TOY_CONFIG);
  assert.match(note, /toy/);
  const base = angleBert('stsb');
  const recipe = { ...base, config: { ...base.config, pooling: defaultPoolingOf(TOY_MODEL_TYPE), batchSize: 2, maxLength: 8 } };
  const spec = { id: 'toy', config: TOY_CONFIG, tokenizer, parameters: parameterCountOfConfig(TOY_CONFIG), shapeOnly: false, instantiated: 'random toy-bag config' };
  const row = await rehearseTraining({ notebook: 'test', run: 'toy: angle-stsb', recipe, spec, calibration: 1, backend: 'cpu', realSteps: 1 });
  assert.equal(row.status, 'ok', row.why);
  assert.ok(row.projectedStepPeakBytesH100! > 0);
  built.dispose();
  loaded.model.dispose();
});

test("the library's entries: each known config's architecture, default pooling and embedding width", () => {
  const expect: Record<string, { pooling: Pooling; width: number }> = {
    'google-bert/bert-base-uncased': { pooling: 'cls', width: 768 },
    'NousResearch/Llama-2-7b-hf': { pooling: 'last', width: 4096 },
    'facebook/opt-125m': { pooling: 'last', width: 768 },
    'facebook/opt-350m': { pooling: 'last', width: 512 },
  };
  for (const [id, want] of Object.entries(expect)) {
    const config = KNOWN_CONFIGS[id as keyof typeof KNOWN_CONFIGS];
    const arch = architectureOfConfig(config);
    assert.equal(arch.name, config.model_type, id);
    assert.equal(arch.defaultPooling, want.pooling, id);
    assert.equal(embeddingWidthOfConfig(config), want.width, id);
  }
  assert.equal(architectureOfConfig(RAN_BASE_ASSUMED_CONFIG).defaultPooling, 'cls_pooler');
  assert.equal(embeddingWidthOfConfig(RAN_BASE_ASSUMED_CONFIG), 768);
  // An old BERT config without model_type is claimed by BERT's entry; an unknown type lists the known ones.
  const { model_type: _t, ...noType } = KNOWN_CONFIGS['google-bert/bert-base-uncased'];
  assert.equal(architectureOfConfig({ ...noType, architectures: ['BertModel'] }).name, 'bert');
  assert.throws(() => architectureOfConfig({ model_type: 'gpt-neo' }), /gpt-neo.*bert, llama, opt, rannet, ran/s);
  assert.ok(onnxExporterFor('bert'));
});

test('one alias table: AnglE Table 4 row names parse to the poolings its recipes train; recipe names keep their spelling', () => {
  assert.deepEqual(
    TABLE4_POOLINGS.map((p) => [p.row, p.pooling]),
    [['cls', 'cls'], ['cls-last-avg', 'cls_avg'], ['last-avg', 'avg'], ['last-max', 'max'], ['first-last-avg', 'first_last_avg']],
  );
  assert.deepEqual(TABLE4_POOLINGS.map((p) => angleStsbWithPooling(p.row, p.pooling).name), ['angle-stsb-cls', 'angle-stsb-cls-avg', 'angle-stsb-avg', 'angle-stsb-max', 'angle-stsb-first-last-avg']);
  // A recipe name's spelling reads back as the same pooling.
  for (const p of TABLE4_POOLINGS) assert.equal(parsePooling(angleStsbWithPooling(p.row, p.pooling).name.replace('angle-stsb-', '')), p.pooling);
  assert.equal(angleStsbWithPooling('cls-last-avg', 'cls-last-avg').config.pooling, 'cls_avg');
});

test('a model saved with a pooling as sentence-transformers modules loads back with it as its pooling module', { skip: GOLDEN_DIR ? false : 'needs the encoder golden set (../shared/golden)' }, async () => {
  const golden = await loadModel(join(GOLDEN_DIR!, 'model'));
  assert.deepEqual(poolingModuleOf(golden), { pooling: 'cls', applies: 'cls', from: 'architecture default' });
  for (const pooling of ['cls', 'avg', 'max', 'cls_avg', 'first_last_avg'] as const) {
    const dir = await saveSentenceTransformer(join(work, `st-${pooling}`), golden, { pooling, maxLength: 32, normalize: pooling === 'max' });
    const back = await loadModel(dir);
    assert.deepEqual(poolingModuleOf(back), { pooling, applies: 'sentence-transformers', from: 'sentence-transformers folder' }, pooling);
    // The folder's pipeline (what an encoder without a pooling applies) gives our pooling's vectors.
    if (pooling !== 'max') {
      const folder = await new PooledSentenceEncoder(back, { engine: 'tfjs' }).encode(TEXTS);
      const ours = await new PooledSentenceEncoder(golden, { pooling, maxLength: 32, engine: 'tfjs' }).encode(TEXTS);
      assert.ok(maxAbs(folder.data, ours.data) < 1e-5, `${pooling}: ${maxAbs(folder.data, ours.data)}`);
    }
    back.model.dispose();
  }
  golden.model.dispose();
});
