/**
 * sentence-transformers model folders, in and out (lib/models/sentence-transformers,
 * lib/embed/sentence-transformer-{encoder,export}.ts), on the golden tiny BERT:
 *
 * - saveSentenceTransformer writes every file sentence-transformers writes, checked here against
 *   its schema as written out literally below (modules.json order/types/paths, Pooling keys, the
 *   Dense config and its [½I ½I] weights for cls_avg, WeightedLayerPooling for first_last_avg,
 *   sentence_bert_config.json, config_sentence_transformers.json, the HF files);
 * - loadModel reads the saved folder back and its embeddings equal ours within 1e-6, every pooling;
 * - a hand-written SBERT-style folder (transformer in 0_Transformer/, mean pooling, Dense with
 *   Tanh, Normalize; and one with a default prompt left out of the pooling) encodes as the
 *   computation done here from the model's token states;
 * - bad input: an unsupported module, a Dense of the wrong shape, pickled Dense weights, a
 *   Pooling key sentence-transformers would reject, export to a non-empty folder, a batch-dependent pooling;
 * - the Hub path: loadModel fetches an ST repo's files (modules.json first, then the module files)
 *   from a real HTTP server speaking the Hub's resolve protocol.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { test, type TestContext } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { PooledSentenceEncoder } from '../lib/embed/encoder.js';
import { saveSentenceTransformer } from '../lib/embed/sentence-transformer-export.js';
import { loadModel, type LoadedModel } from '../lib/models/auto.js';
import { readSafetensors, serializeSafetensors } from '../lib/models/safetensors.js';
import { InputError, UnknownNameError } from '../lib/util/errors.js';
import { goldenOrSkip } from './helpers/env.js';

const TEXTS = [
  'A man is playing a guitar on the stage tonight with his friends .',
  'Someone plays music .',
  'Dogs run',
  'A woman is slicing an onion into small pieces for the soup .',
  'x',
];
const D = 64; // golden tiny BERT: hidden 64, 2 layers
const LAYERS = 2;

let cached: { model: LoadedModel; dir: string } | undefined;
async function golden(t: TestContext): Promise<{ model: LoadedModel; dir: string } | undefined> {
  const g = goldenOrSkip(t);
  if (!g) return undefined;
  await initBackend('cpu', { quiet: true });
  const dir = join(g, 'model');
  cached ??= { model: await loadModel(dir), dir };
  return cached;
}

function tempDir(t: TestContext, prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? [`${e.name}/`, ...walk(join(dir, e.name)).map((f) => `${e.name}/${f}`)] : [e.name]))
    .sort();
}

const json = (file: string) => JSON.parse(readFileSync(file, 'utf8'));

function maxAbs(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length);
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
  return d;
}

/** The Pooling config sentence-transformers writes, with `on` the modes switched on. */
function poolingConfig(on: string[]): Record<string, unknown> {
  return {
    word_embedding_dimension: D,
    pooling_mode_cls_token: on.includes('cls'),
    pooling_mode_mean_tokens: on.includes('mean'),
    pooling_mode_max_tokens: on.includes('max'),
    pooling_mode_mean_sqrt_len_tokens: false,
    pooling_mode_weightedmean_tokens: false,
    pooling_mode_lasttoken: on.includes('lasttoken'),
    include_prompt: true,
  };
}

/** What each of our poolings must become: the modules after the Transformer, in order. */
const EXPECTED: Record<string, Array<{ path: string; type: string; config: Record<string, unknown> }>> = {
  cls: [{ path: '1_Pooling', type: 'sentence_transformers.models.Pooling', config: poolingConfig(['cls']) }],
  avg: [{ path: '1_Pooling', type: 'sentence_transformers.models.Pooling', config: poolingConfig(['mean']) }],
  max: [{ path: '1_Pooling', type: 'sentence_transformers.models.Pooling', config: poolingConfig(['max']) }],
  last: [{ path: '1_Pooling', type: 'sentence_transformers.models.Pooling', config: poolingConfig(['lasttoken']) }],
  cls_avg: [
    { path: '1_Pooling', type: 'sentence_transformers.models.Pooling', config: poolingConfig(['cls', 'mean']) },
    { path: '2_Dense', type: 'sentence_transformers.models.Dense', config: { in_features: 2 * D, out_features: D, bias: false, activation_function: 'torch.nn.modules.linear.Identity' } },
  ],
  first_last_avg: [
    { path: '1_WeightedLayerPooling', type: 'sentence_transformers.models.WeightedLayerPooling', config: { word_embedding_dimension: D, layer_start: 1, num_hidden_layers: LAYERS } },
    { path: '2_Pooling', type: 'sentence_transformers.models.Pooling', config: poolingConfig(['mean']) },
  ],
};

test('saveSentenceTransformer writes the sentence-transformers layout, and loadModel reads it back to the same embeddings (every pooling)', async (t) => {
  const g = await golden(t);
  if (!g) return;
  const root = tempDir(t, 'st-save-');
  const sourceTensors = readSafetensors(join(g.dir, 'model.safetensors')).tensors;
  const sourceConfig = json(join(g.dir, 'config.json'));
  for (const [pooling, modules] of Object.entries(EXPECTED)) {
    const dir = join(root, pooling);
    await saveSentenceTransformer(dir, g.model, { pooling, maxLength: 32 });
    const moduleFiles = modules.flatMap((m) => [`${m.path}/`, `${m.path}/config.json`, ...(/Dense|WeightedLayer/.test(m.type) ? [`${m.path}/model.safetensors`] : [])]);
    assert.deepEqual(
      walk(dir),
      [...moduleFiles, 'config.json', 'config_sentence_transformers.json', 'model.safetensors', 'modules.json', 'sentence_bert_config.json', 'special_tokens_map.json', 'tokenizer.json', 'tokenizer_config.json', 'vocab.txt'].sort(),
      pooling,
    );
    assert.deepEqual(json(join(dir, 'modules.json')), [
      { idx: 0, name: '0', path: '', type: 'sentence_transformers.models.Transformer' },
      ...modules.map((m, i) => ({ idx: i + 1, name: String(i + 1), path: m.path, type: m.type })),
    ]);
    for (const m of modules) {
      const cfg = json(join(dir, m.path, 'config.json'));
      assert.deepEqual(cfg, m.config, `${pooling} ${m.path}/config.json`);
      assert.deepEqual(Object.keys(cfg), Object.keys(m.config), `${pooling} ${m.path}: keys in sentence-transformers' order`);
    }
    assert.deepEqual(json(join(dir, 'sentence_bert_config.json')), { max_seq_length: 32, do_lower_case: false });
    assert.deepEqual(json(join(dir, 'config_sentence_transformers.json')), { model_type: 'SentenceTransformer', prompts: {}, default_prompt_name: null, similarity_fn_name: 'cosine' });
    // HF side: the source config with BertModel as the architecture (and every layer's states for WeightedLayerPooling).
    const expectedConfig = { ...sourceConfig, architectures: ['BertModel'], ...(pooling === 'first_last_avg' ? { output_hidden_states: true } : {}) };
    assert.deepEqual(json(join(dir, 'config.json')), expectedConfig);
    const saved = readSafetensors(join(dir, 'model.safetensors'));
    assert.equal(saved.metadata.format, 'pt');
    assert.deepEqual([...saved.tensors.keys()].sort(), [...sourceTensors.keys()].sort(), 'BertModel tensor names');
    for (const [name, tensor] of sourceTensors) assert.ok(Buffer.from(saved.tensors.get(name)!.data.buffer).equals(Buffer.from(tensor.data.buffer)), `${name} bytes`);
    for (const f of ['tokenizer.json', 'vocab.txt']) assert.ok(readFileSync(join(dir, f)).equals(readFileSync(join(g.dir, f))), f);
    // tokenizer_config.json: the source's keys, completed so every client can pad a batch (test/export.test.ts loads it in transformers.js).
    const tc = json(join(dir, 'tokenizer_config.json'));
    assert.deepEqual([tc.do_lower_case, tc.tokenizer_class, tc.pad_token, tc.model_max_length], [true, 'BertTokenizer', '[PAD]', 32]);

    // Module weights.
    if (pooling === 'cls_avg') {
      const w = readSafetensors(join(dir, '2_Dense', 'model.safetensors'));
      assert.equal(w.metadata.format, 'pt');
      assert.deepEqual([...w.tensors.keys()], ['linear.weight']);
      const lw = w.tensors.get('linear.weight')!;
      assert.deepEqual(lw.shape, [D, 2 * D]);
      for (let i = 0; i < D; i++) for (let j = 0; j < 2 * D; j++) assert.equal(lw.data[i * 2 * D + j], j === i || j === D + i ? 0.5 : 0, `W[${i}][${j}]`);
    }
    if (pooling === 'first_last_avg') {
      const w = readSafetensors(join(dir, '1_WeightedLayerPooling', 'model.safetensors')).tensors;
      assert.deepEqual([...w.keys()], ['layer_weights']);
      assert.deepEqual(w.get('layer_weights')!.shape, [LAYERS]);
      assert.deepEqual([...w.get('layer_weights')!.data], [1, 1]); // layers 1..2: the first and the last
    }

    // Read back: the folder's own pipeline gives our pooling's embeddings.
    const back = await loadModel(dir);
    try {
      assert.ok(back.sentenceEmbedding, 'sentenceEmbedding is set');
      assert.equal(back.sentenceEmbedding!.maxSeqLength, 32);
      const enc = new PooledSentenceEncoder(back);
      assert.equal(enc.pooling, 'sentence-transformers');
      assert.equal(enc.maxLength, 32);
      const got = await enc.encode(TEXTS);
      // AnglE's max counts padding as 0, sentence-transformers' ignores it: equal for texts embedded alone.
      const ours = await new PooledSentenceEncoder(g.model, { pooling, maxLength: 32, batchSize: pooling === 'max' ? 1 : 64 }).encode(TEXTS);
      assert.equal(got.dim, D);
      assert.ok(maxAbs(got.data, ours.data) <= 1e-6, `${pooling}: max difference ${maxAbs(got.data, ours.data)}`);
    } finally {
      back.model.dispose();
    }
  }
});

/** A deterministic pseudo-random float32 array in [-scale, scale). */
function lcg(n: number, seed: number, scale: number): Float32Array {
  let s = seed >>> 0;
  return Float32Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return ((s / 2 ** 32) * 2 - 1) * scale;
  });
}

interface HandFolder {
  dir: string;
  weight: Float32Array;
  bias: Float32Array;
}

/** An SBERT-style folder written by hand: 0_Transformer/, mean Pooling (an older config without the later keys), Dense 64→16 Tanh, Normalize. */
function writeSbertFolder(root: string, goldenModel: string, opts: { transformerPath?: string; pooling?: Record<string, unknown>; stConfig?: Record<string, unknown>; maxSeqLength?: number } = {}): HandFolder {
  const tp = opts.transformerPath ?? '0_Transformer';
  const tdir = join(root, tp);
  mkdirSync(tdir, { recursive: true });
  for (const f of ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'vocab.txt']) copyFileSync(join(goldenModel, f), join(tdir, f));
  writeFileSync(join(tdir, 'sentence_bert_config.json'), JSON.stringify({ max_seq_length: opts.maxSeqLength ?? 8, do_lower_case: true }));
  mkdirSync(join(root, '1_Pooling'));
  writeFileSync(
    join(root, '1_Pooling', 'config.json'),
    JSON.stringify(opts.pooling ?? { word_embedding_dimension: D, pooling_mode_cls_token: false, pooling_mode_mean_tokens: true, pooling_mode_max_tokens: false, pooling_mode_mean_sqrt_len_tokens: false }),
  );
  mkdirSync(join(root, '2_Dense'));
  writeFileSync(join(root, '2_Dense', 'config.json'), JSON.stringify({ in_features: D, out_features: 16, bias: true, activation_function: 'torch.nn.modules.activation.Tanh' }));
  const weight = lcg(16 * D, 7, 0.5);
  const bias = lcg(16, 11, 0.1);
  writeFileSync(join(root, '2_Dense', 'model.safetensors'), serializeSafetensors({ 'linear.weight': { shape: [16, D], data: weight }, 'linear.bias': { shape: [16], data: bias } }, { format: 'pt' }));
  if (opts.stConfig) writeFileSync(join(root, 'config_sentence_transformers.json'), JSON.stringify(opts.stConfig));
  writeFileSync(
    join(root, 'modules.json'),
    JSON.stringify([
      { idx: 0, name: '0', path: tp, type: 'sentence_transformers.models.Transformer' },
      { idx: 1, name: '1', path: '1_Pooling', type: 'sentence_transformers.models.Pooling' },
      { idx: 2, name: '2', path: '2_Dense', type: 'sentence_transformers.models.Dense' },
      { idx: 3, name: '3', path: '3_Normalize', type: 'sentence_transformers.models.Normalize' },
    ]),
  );
  return { dir: root, weight, bias };
}

/**
 * The SBERT pipeline computed here: each text alone (no padding) through the model, the mean of
 * its token states from position `skip` on, tanh(W x + b), then x / ‖x‖.
 */
function sbertByHand(m: LoadedModel, f: HandFolder, inputs: string[], maxLength: number, skip = 0): Float64Array[] {
  return inputs.map((text) => {
    const enc = m.tokenizer.encode(text.trim().toLowerCase(), null, maxLength);
    const h = tf.tidy(() => m.model.forward(m.tokenizer.pad([enc])).lastHiddenState.arraySync()[0]);
    const mean = new Float64Array(D);
    for (let s = skip; s < h.length; s++) for (let j = 0; j < D; j++) mean[j] += h[s][j] / (h.length - skip);
    const y = new Float64Array(16);
    for (let i = 0; i < 16; i++) {
      let acc = f.bias[i];
      for (let j = 0; j < D; j++) acc += f.weight[i * D + j] * mean[j];
      y[i] = Math.tanh(acc);
    }
    const norm = Math.hypot(...y);
    return y.map((v) => v / norm);
  });
}

test('a hand-written SBERT-style folder (0_Transformer, mean, Dense+Tanh, Normalize) encodes as computed by hand', async (t) => {
  const g = await golden(t);
  if (!g) return;
  const f = writeSbertFolder(tempDir(t, 'st-sbert-'), g.dir, { stConfig: { __version__: { sentence_transformers: '2.2.2' }, prompts: {}, default_prompt_name: null, similarity_fn_name: 'cosine' } });
  const m = await loadModel(f.dir);
  try {
    assert.equal(m.dir, join(f.dir, '0_Transformer'), 'dir is the transformer module');
    assert.deepEqual(m.weightFiles, [join(f.dir, '0_Transformer', 'model.safetensors'), join(f.dir, '2_Dense', 'model.safetensors')]);
    const spec = m.sentenceEmbedding!;
    assert.deepEqual(
      { maxSeqLength: spec.maxSeqLength, lowerCase: spec.lowerCase, similarity: spec.similarity, modules: spec.steps.map((s) => s.module) },
      { maxSeqLength: 8, lowerCase: true, similarity: 'cosine', modules: ['Pooling', 'Dense', 'Normalize'] },
    );
    const inputs = ['  A MAN is playing a guitar on the stage tonight .', 'Dogs run', 'Someone plays MUSIC .'];
    const got = await new PooledSentenceEncoder(m).encode(inputs);
    assert.equal(got.dim, 16);
    const want = sbertByHand(m, f, inputs, 8);
    want.forEach((w, i) => assert.ok(maxAbs(got.data.subarray(i * 16, (i + 1) * 16), w) < 1e-5, `text ${i}`));
    // An explicit pooling overrides the folder's pipeline.
    assert.equal((await new PooledSentenceEncoder(m, { pooling: 'cls' }).encode(inputs)).dim, D);
  } finally {
    m.model.dispose();
  }
});

test('a default prompt is put before every text and, with include_prompt false, left out of the pooling', async (t) => {
  const g = await golden(t);
  if (!g) return;
  const f = writeSbertFolder(tempDir(t, 'st-prompt-'), g.dir, {
    transformerPath: '',
    maxSeqLength: 32,
    pooling: { word_embedding_dimension: D, pooling_mode_mean_tokens: true, include_prompt: false },
    stConfig: { model_type: 'SentenceTransformer', prompts: { query: 'query: ', passage: 'passage: ' }, default_prompt_name: 'query', similarity_fn_name: 'cosine' },
  });
  const m = await loadModel(f.dir);
  try {
    assert.equal(m.sentenceEmbedding!.prompt, 'query: ');
    const inputs = ['A man is playing a guitar .', 'Dogs run'];
    // sentence-transformers' prompt_length: the prompt's ids without the trailing [SEP] ([CLS] query :).
    const promptLength = m.tokenizer.encode('query:').ids.length - 1;
    assert.equal(promptLength, 3);
    const got = await new PooledSentenceEncoder(m).encode(inputs);
    const want = sbertByHand(m, f, inputs.map((s) => `query: ${s}`), 32, promptLength);
    want.forEach((w, i) => assert.ok(maxAbs(got.data.subarray(i * 16, (i + 1) * 16), w) < 1e-5, `text ${i}`));
  } finally {
    m.model.dispose();
  }
});

test('bad sentence-transformers folders are input errors naming the file and what was expected', async (t) => {
  const g = await golden(t);
  if (!g) return;
  const root = tempDir(t, 'st-bad-');
  let n = 0;
  const variant = (edit: (f: HandFolder) => void): string => {
    const f = writeSbertFolder(join(root, String(n++)), g.dir);
    edit(f);
    return f.dir;
  };

  // A module type we do not implement: named, with the supported ones.
  const cnn = variant((f) => {
    const modules = json(join(f.dir, 'modules.json'));
    modules[1].type = 'sentence_transformers.models.CNN';
    writeFileSync(join(f.dir, 'modules.json'), JSON.stringify(modules));
  });
  await assert.rejects(loadModel(cnn), (e: Error) => {
    assert.ok(e instanceof UnknownNameError, e.message);
    assert.match(e.message, /modules\.json: unknown sentence-transformers module type \(modules\.json entry 1\) 'sentence_transformers\.models\.CNN': expected one of /);
    for (const ok of ['Transformer', 'WeightedLayerPooling', 'Pooling', 'Dense', 'Normalize']) assert.ok(e.message.includes(`sentence_transformers.models.${ok}`), ok);
    return true;
  });

  // Dense weights of the wrong shape.
  const shape = variant((f) => {
    writeFileSync(join(f.dir, '2_Dense', 'model.safetensors'), serializeSafetensors({ 'linear.weight': { shape: [16, 60], data: new Float32Array(960) }, 'linear.bias': { shape: [16], data: f.bias } }));
  });
  await assert.rejects(loadModel(shape), (e: Error) => e instanceof InputError && /2_Dense\/model\.safetensors: .*'linear\.weight' has shape \[16,60\], its config says \[16,64\]/.test(e.message));

  // Dense config whose in_features does not chain to the pooling's width.
  const chain = variant((f) => writeFileSync(join(f.dir, '2_Dense', 'config.json'), JSON.stringify({ in_features: 128, out_features: 16, bias: true, activation_function: 'torch.nn.modules.activation.Tanh' })));
  await assert.rejects(loadModel(chain), /2_Dense\/config\.json: Dense in_features 128 does not match the 64-wide embedding/);

  // An activation we do not implement.
  const act = variant((f) => writeFileSync(join(f.dir, '2_Dense', 'config.json'), JSON.stringify({ in_features: D, out_features: 16, bias: true, activation_function: 'torch.nn.modules.activation.ReLU' })));
  await assert.rejects(loadModel(act), (e: Error) => e instanceof UnknownNameError && /ReLU/.test(e.message) && /torch\.nn\.modules\.activation\.Tanh/.test(e.message));

  // Weights only as a PyTorch pickle.
  const pickle = variant((f) => {
    rmSync(join(f.dir, '2_Dense', 'model.safetensors'));
    writeFileSync(join(f.dir, '2_Dense', 'pytorch_model.bin'), 'not readable here');
  });
  await assert.rejects(loadModel(pickle), (e: Error) => e instanceof InputError && /2_Dense: .*only in pytorch_model\.bin, a PyTorch pickle/.test(e.message));

  // A Pooling key sentence-transformers' constructor would reject.
  const key = variant((f) => writeFileSync(join(f.dir, '1_Pooling', 'config.json'), JSON.stringify({ word_embedding_dimension: D, pooling_mode_mean_tokens: true, pooling_mode_median: true })));
  await assert.rejects(loadModel(key), /1_Pooling\/config\.json: Pooling config has unexpected key\(s\) pooling_mode_median/);

  // Dense before Pooling; a module path escaping the folder.
  const order = variant((f) => {
    const modules = json(join(f.dir, 'modules.json'));
    [modules[1], modules[2]] = [modules[2], modules[1]];
    writeFileSync(join(f.dir, 'modules.json'), JSON.stringify(modules));
  });
  await assert.rejects(loadModel(order), /modules\.json: modules Transformer, Dense, Pooling, Normalize: Dense before Pooling/);
  const escape = variant((f) => {
    const modules = json(join(f.dir, 'modules.json'));
    modules[1].path = '../1_Pooling';
    writeFileSync(join(f.dir, 'modules.json'), JSON.stringify(modules));
  });
  await assert.rejects(loadModel(escape), /entry 1: module path "\.\.\/1_Pooling" must be a relative path inside the model folder/);
});

test('export refuses a non-empty folder unless told to overwrite, and a batch-dependent pooling; nothing half-written', async (t) => {
  const g = await golden(t);
  if (!g) return;
  const parent = tempDir(t, 'st-export-');
  const dir = join(parent, 'out');
  mkdirSync(dir);
  writeFileSync(join(dir, 'keep.txt'), 'mine');
  await assert.rejects(saveSentenceTransformer(dir, g.model, { pooling: 'cls' }), (e: Error) => e instanceof InputError && /non-empty directory; pass overwrite: true/.test(e.message));
  assert.deepEqual(readdirSync(dir), ['keep.txt'], 'left as it was');
  await assert.rejects(saveSentenceTransformer(dir, g.model, { pooling: 'cls_avg_legacy', overwrite: true }), /depends on the batch/);
  assert.deepEqual(readdirSync(dir), ['keep.txt']);
  writeFileSync(join(parent, 'a-file'), 'x');
  await assert.rejects(saveSentenceTransformer(join(parent, 'a-file'), g.model, { pooling: 'cls', overwrite: true }), /exists and is not a directory/);

  await saveSentenceTransformer(dir, g.model, { pooling: 'cls', overwrite: true });
  assert.ok(!existsSync(join(dir, 'keep.txt')) && existsSync(join(dir, 'modules.json')), 'replaced whole');
  // An empty target folder is fine without overwrite; no temporary siblings are left behind.
  const empty = join(parent, 'empty');
  mkdirSync(empty);
  await saveSentenceTransformer(empty, g.model, { pooling: 'avg', normalize: true });
  assert.deepEqual(json(join(empty, 'modules.json')).map((m: { path: string }) => m.path), ['', '1_Pooling', '2_Normalize']);
  assert.ok(statSync(join(empty, '2_Normalize')).isDirectory());
  assert.deepEqual(readdirSync(parent).filter((e) => e.includes('.tmp')), []);
});

/** A minimal Hub: GET /<org>/<name>/resolve/<rev>/<file> with X-Repo-Commit and a git-blob-sha1 ETag; 404 EntryNotFound otherwise. */
async function fakeHub(t: TestContext, repos: Record<string, Record<string, Buffer>>): Promise<{ endpoint: string; requests: string[] }> {
  const commit = 'c'.repeat(40);
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const m = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(req.url ?? '');
    const files = m ? repos[m[1]] : undefined;
    if (!m || !files) return void res.writeHead(404, { 'x-error-code': 'RepoNotFound' }).end();
    const data = files[m[3].split('/').map(decodeURIComponent).join('/')];
    if (!data) return void res.writeHead(404, { 'x-error-code': 'EntryNotFound', 'x-repo-commit': commit }).end();
    const etag = createHash('sha1').update(`blob ${data.length}\0`).update(data).digest('hex');
    res.writeHead(200, { 'x-repo-commit': commit, etag: `"${etag}"`, 'content-length': data.length }).end(data);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => (server.close(() => r()), server.closeAllConnections())));
  return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

function repoFiles(dir: string): Record<string, Buffer> {
  return Object.fromEntries(walk(dir).filter((f) => !f.endsWith('/')).map((f) => [f, readFileSync(join(dir, f))]));
}

test('loadModel(hub id) of a sentence-transformers repo fetches modules.json, then the module files', async (t) => {
  const g = await golden(t);
  if (!g) return;
  const work = tempDir(t, 'st-hub-');
  const saved = join(work, 'saved');
  await saveSentenceTransformer(saved, g.model, { pooling: 'cls_avg', maxLength: 32 });
  const hand = writeSbertFolder(join(work, 'hand'), g.dir);
  const hub = await fakeHub(t, { 'test-org/st-tiny': repoFiles(saved), 'test-org/sbert-sub': repoFiles(hand.dir) });
  const hubOpts = { endpoint: hub.endpoint, cacheDir: join(work, 'cache'), offline: false, token: '' };

  const fromHub = await loadModel('test-org/st-tiny', { hub: hubOpts });
  const local = await loadModel(saved);
  try {
    assert.equal(fromHub.source, 'hub');
    assert.equal(fromHub.weightsSha256, local.weightsSha256);
    const paths = hub.requests.map((p) => p.replace(/^\/test-org\/st-tiny\/resolve\/[^/]+\//, ''));
    assert.equal(paths[0], 'modules.json', 'modules.json is asked for first');
    for (const f of ['config.json', 'tokenizer.json', 'model.safetensors', 'sentence_bert_config.json', 'config_sentence_transformers.json', '1_Pooling/config.json', '2_Dense/config.json', '2_Dense/model.safetensors']) {
      assert.ok(paths.includes(f), `${f} fetched (${paths.join(', ')})`);
    }
    const a = await new PooledSentenceEncoder(fromHub).encode(TEXTS);
    const b = await new PooledSentenceEncoder(local).encode(TEXTS);
    assert.deepEqual(a.data, b.data);
  } finally {
    fromHub.model.dispose();
    local.model.dispose();
  }
  // Everything is cached now: an offline load makes no request.
  hub.requests.length = 0;
  const offline = await loadModel('test-org/st-tiny', { hub: { ...hubOpts, offline: true } });
  assert.equal(offline.weightsSha256, fromHub.weightsSha256);
  offline.model.dispose();
  assert.equal(hub.requests.length, 0, hub.requests.join(', '));

  // The transformer in a subfolder: its files are fetched under that path.
  hub.requests.length = 0;
  const sub = await loadModel('test-org/sbert-sub', { hub: hubOpts });
  try {
    assert.equal(relative(join(work, 'cache'), sub.dir).split('/').slice(-1)[0], '0_Transformer');
    assert.ok(hub.requests.some((p) => p.endsWith('/0_Transformer/model.safetensors')));
    assert.equal(sub.sentenceEmbedding!.steps.map((s) => s.module).join(','), 'Pooling,Dense,Normalize');
    const want = sbertByHand(sub, hand, ['Dogs run'], 8);
    assert.ok(maxAbs((await new PooledSentenceEncoder(sub).encode(['Dogs run'])).data, want[0]) < 1e-5);
  } finally {
    sub.model.dispose();
  }

  // A plain (non-ST) repo still loads: the modules.json probe finds nothing.
  const plain = await fakeHub(t, { 'test-org/plain': repoFiles(g.dir) });
  const p = await loadModel('test-org/plain', { hub: { ...hubOpts, endpoint: plain.endpoint } });
  assert.equal(p.sentenceEmbedding, undefined);
  p.model.dispose();
  await assert.rejects(loadModel('test-org/not-there', { hub: hubOpts }), /test-org\/not-there does not exist/);
});
