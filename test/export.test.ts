/**
 * `npm run export` (scripts/export.ts), run as a command, and its folders taken by a client nobody
 * here wrote:
 *
 * - the golden tiny BERT exported with --onnx loads in transformers.js (@huggingface/transformers,
 *   local files only) and embeds a batch of texts of different lengths (so padded) as our encoder
 *   does, for mean and cls pooling (≤ 1e-5), and each text alone as in the batch; the tokenizer
 *   files are complete (class, special tokens, model_max_length, special_tokens_map.json);
 * - a trained run (a few AnglE steps of the golden BERT, laid out as the notebooks leave it:
 *   results/<experiment>/runs/<key>/best and a record with details.runKey) exports its best
 *   checkpoint bit for bit, with a model card quoting its record and the evaluation record of those
 *   weights, and the MTEB file that evaluation wrote; an MTEB file rewritten since is left out;
 * - a LoRA run (adapters on the toy llama2.c decoder) exports in PEFT's layout, loadable by
 *   loadLoraAdapter to the same matrices.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { loadStsBenchmark } from '../lib/data/sts.js';
import { PooledSentenceEncoder } from '../lib/embed/encoder.js';
import { stsEvaluator } from '../lib/eval/pair-evaluators.js';
import { mtebStsTask, scoreMtebStsPairs, type MtebStsTaskResult } from '../lib/eval/mteb-sts.js';
import { addLora, isLoraParameter } from '../lib/models/adapters/lora.js';
import { ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE, loadLoraAdapter } from '../lib/models/adapters/peft.js';
import type { AdaptableModel } from '../lib/models/adapters/types.js';
import { loadModel } from '../lib/models/auto.js';
import { readSafetensors } from '../lib/models/safetensors.js';
import { writeMtebResults } from '../lib/report/mteb-results.js';
import { collectProvenance } from '../lib/report/provenance.js';
import { newRunId, writeRunRecord, type RunRecord } from '../lib/report/run-record.js';
import { portableModelIdentity, writeTrainingRecord } from '../lib/report/training-record.js';
import { bestModelDir, saveBestModel } from '../lib/train/best-model.js';
import { pairExamples } from '../lib/train/examples.js';
import { Trainer } from '../lib/train/trainer.js';
import { packageRoot } from '../lib/util/package-root.js';
import { ANGLE_BIBTEX } from '../lib/embed/model-card.js';
import { DATA_DIR, GOLDEN_DIR, SHARED_DIR } from './helpers/env.js';

const ROOT = packageRoot();
/** Different lengths, so a batch pads; punctuation, accents and an empty string too. */
const TEXTS = ['A man is playing a guitar on the stage tonight with his friends .', 'Someone plays music .', 'Dogs run', 'Ünïcödé, punctuation!? (yes)', ''];

function exportCommand(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ANGLE_') || k === 'ANGLE_ONNX_CACHE' || k === 'ANGLE_SHARED_DIR'));
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/export.ts', ...args], { cwd: ROOT, encoding: 'utf8', env });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function json(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
}

function maxAbs(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length);
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
  return d;
}

describe('npm run export', () => {
  let work: string;
  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'angle-export-'));
    await initBackend('cpu', { quiet: true });
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  test('the golden BERT with --onnx: complete tokenizer files, and transformers.js embeds a padded batch as we do (mean and cls)', { timeout: 300_000 }, async (t) => {
    if (!GOLDEN_DIR) return t.skip('no encoder golden set (ANGLE_GOLDEN_DIR or ../shared/golden)');
    const modelDir = join(GOLDEN_DIR, 'model');
    const models = join(work, 'models');
    for (const [name, pooling] of [['tiny-mean', 'avg'], ['tiny-cls', 'cls']]) {
      const r = exportCommand(['--model', modelDir, '--pooling', pooling, '--out', join(models, name), '--onnx']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /export: wrote .* \(sentence-transformers folder; 12 files;/);
    }
    const dir = join(models, 'tiny-mean');
    for (const f of ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'vocab.txt', 'modules.json', 'config_sentence_transformers.json', 'sentence_bert_config.json', '1_Pooling/config.json', 'onnx/model.onnx', 'README.md']) {
      assert.ok(existsSync(join(dir, f)), f);
    }
    const tc = json(join(dir, 'tokenizer_config.json'));
    assert.equal(tc.tokenizer_class, 'BertTokenizer');
    assert.equal(tc.do_lower_case, true);
    assert.equal(tc.model_max_length, 512);
    assert.deepEqual([tc.pad_token, tc.unk_token, tc.cls_token, tc.sep_token, tc.mask_token], ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']);
    assert.deepEqual(json(join(dir, 'special_tokens_map.json')), { cls_token: '[CLS]', mask_token: '[MASK]', pad_token: '[PAD]', sep_token: '[SEP]', unk_token: '[UNK]' });
    assert.deepEqual(json(join(dir, 'modules.json')), [
      { idx: 0, name: '0', path: '', type: 'sentence_transformers.models.Transformer' },
      { idx: 1, name: '1', path: '1_Pooling', type: 'sentence_transformers.models.Pooling' },
    ]);
    assert.equal(json(join(dir, '1_Pooling', 'config.json')).pooling_mode_mean_tokens, true);
    const card = readFileSync(join(dir, 'README.md'), 'utf8');
    assert.match(card, /^---\nlibrary_name: sentence-transformers\npipeline_tag: sentence-similarity\n/);
    assert.ok(card.includes(ANGLE_BIBTEX), 'the card cites AnglE');
    assert.match(card, /npm run export -- --model shared:golden\/bert-tiny-seed1234\/model --pooling avg --out tiny-mean --onnx/);

    const { env, pipeline } = await import('@huggingface/transformers');
    env.allowRemoteModels = false;
    env.localModelPath = `${models}/`;
    const golden = await loadModel(modelDir);
    try {
      for (const [name, jsPooling, ours] of [['tiny-mean', 'mean', 'avg'], ['tiny-cls', 'cls', 'cls']] as const) {
        const extractor = await pipeline('feature-extraction', name, { local_files_only: true, dtype: 'fp32' });
        const batch = await extractor(TEXTS, { pooling: jsPooling, normalize: false });
        assert.deepEqual(batch.dims, [TEXTS.length, 64]);
        const expected = await new PooledSentenceEncoder(golden, { pooling: ours, engine: 'tfjs' }).encode(TEXTS);
        const d = maxAbs(batch.data as Float32Array, expected.data);
        t.diagnostic(`${name}: transformers.js batch vs our ${ours}: max |Δ| ${d.toExponential(2)}`);
        assert.ok(d <= 1e-5, `${name}: max difference ${d}`);
        // Padding changes nothing: each text alone gives its row of the batch.
        for (const [i, text] of TEXTS.entries()) {
          const alone = await extractor([text], { pooling: jsPooling, normalize: false });
          assert.ok(maxAbs(alone.data as Float32Array, (batch.data as Float32Array).subarray(i * 64, (i + 1) * 64)) <= 1e-5, `${name}: text ${i} alone`);
        }
        await extractor.dispose();
      }
    } finally {
      golden.model.dispose();
    }
  });

  test('a trained run: its best checkpoint, a card quoting its records, and the MTEB files its evaluation wrote', { timeout: 300_000 }, async (t) => {
    if (!GOLDEN_DIR || !DATA_DIR) return t.skip('needs the golden set and the data folder');
    const results = join(work, 'results');
    const key = '0123456789abcdef';
    const runDir = join(results, 'exp', 'runs', key);
    const golden = await loadModel(join(GOLDEN_DIR, 'model'));
    const dev = loadStsBenchmark('dev', { dataDir: DATA_DIR });
    const test_ = loadStsBenchmark('test', { dataDir: DATA_DIR });
    const trainPairs = dev.pairs.slice(100, 148);
    const trainer = new Trainer({
      model: golden,
      train: pairExamples('STS-B dev pairs 100-147 (test stand-in)', trainPairs),
      dev: stsEvaluator({ name: 'STSBenchmark dev (first 64 pairs)', pairs: dev.pairs.slice(0, 64) }),
      test: stsEvaluator({ name: 'STSBenchmark test (first 64 pairs)', pairs: test_.pairs.slice(0, 64) }),
      runDir,
      config: { objective: { name: 'angle', loss: { ibnPositives: { threshold: 4 } } }, pooling: 'cls', maxLength: 32, batchSize: 16, maxSteps: 3, lr: 1e-3, evalEvery: 1, shuffle: false },
      progress: false,
    });
    const result = await trainer.run();
    const recordFile = writeTrainingRecord(result, { experiment: 'exp', resultsDir: results, provenance: collectProvenance(), model: portableModelIdentity(golden), details: { runKey: key, recipe: 'test-recipe' } });
    golden.model.dispose();
    const record = json(recordFile) as unknown as RunRecord;

    // An evaluation of the best weights, as lib/experiments/sts-suite-run.ts records one: MTEB's
    // protocol on 40 STS-B test pairs, its file in MTEB's layout, the weights named by sha256.
    const best = await loadModel(bestModelDir(runDir));
    const scores = await scoreMtebStsPairs(new PooledSentenceEncoder(best, { pooling: 'cls', maxLength: 32, engine: 'tfjs' }), test_.pairs.slice(0, 40));
    best.model.dispose();
    const evaluate = (name: string): string => {
      const taskResult: MtebStsTaskResult = { task: mtebStsTask('STSBenchmark'), scores, pairs: 40, textSource: 'first 40 pairs (test)', seconds: 0.1 };
      const mtebDir = writeMtebResults(join(results, 'eval', 'mteb'), { name }, [taskResult]);
      const now = new Date();
      writeRunRecord(
        {
          experiment: 'eval',
          runId: newRunId(now),
          startedAt: now.toISOString(),
          finishedAt: now.toISOString(),
          wallSeconds: 0.1,
          seed: 0,
          config: { protocol: 'MTEB STS (test stand-in)', pooling: 'cls' },
          data: [{ id: 'STSBenchmark (first 40 pairs)', split: 'test', rows: 40 }],
          model: record.model,
          provenance: collectProvenance(),
          metrics: { mteb_stsb: scores.cosine_spearman * 100 },
          paperNote: 'a test stand-in',
          details: { runKey: `eval-${name}`, evaluatedWeightsSha256: best.weightsSha256, mteb: [{ task: 'STSBenchmark', pairs: 40, textSource: 'x', scores }], mtebDir: mtebDir.slice(results.length + 1) },
        },
        results,
      );
      return mtebDir;
    };
    evaluate('good-model');
    const rewritten = evaluate('rewritten-model');
    const stale = json(join(rewritten, 'STSBenchmark.json')) as { scores: { test: Array<{ main_score: number }> } };
    stale.scores.test[0]!.main_score = 0.123456;
    writeFileSync(join(rewritten, 'STSBenchmark.json'), JSON.stringify(stale, null, 2) + '\n');

    const out = join(work, 'from-run');
    const r = exportCommand(['--run', runDir, '--out', out]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /export: left out eval\/mteb\/rewritten-model\/no_revision_available\/STSBenchmark\.json: main_score 0\.123456 is not the/);
    // The best checkpoint, bit for bit.
    const saved = readSafetensors(join(out, 'model.safetensors')).tensors;
    for (const [n, tensor] of readSafetensors(join(bestModelDir(runDir), 'model.safetensors')).tensors) {
      assert.ok(Buffer.from(saved.get(n)!.data.buffer).equals(Buffer.from(tensor.data.buffer)), n);
    }
    // The pooling best/ was saved with (its module) and the recorded max length.
    assert.match(r.stdout, /export: pooling cls \(the model's pooling module \(its modules\.json\)\)/);
    assert.deepEqual(json(join(out, 'sentence_bert_config.json')), { max_seq_length: 32, do_lower_case: false });
    assert.equal(json(join(out, '1_Pooling', 'config.json')).pooling_mode_cls_token, true);
    const card = readFileSync(join(out, 'README.md'), 'utf8');
    assert.ok(card.includes(`Run \`${record.runId}\` of experiment \`exp\`, recipe \`test-recipe\``), card);
    assert.ok(card.includes(`\`exp/${record.runId}.json\``));
    assert.ok(card.includes(`| test_spearman | ${record.metrics.test_spearman!.toFixed(4)} | STSBenchmark test (first 64 pairs) | \`exp/${record.runId}.json\``), 'the test metric with its record');
    assert.ok(card.includes(`| mteb_stsb | ${(scores.cosine_spearman * 100).toFixed(4)} |`), 'the evaluation record');
    assert.ok(card.includes('| `mteb/good-model/no_revision_available/STSBenchmark.json` | STSBenchmark |'), 'the MTEB file');
    assert.ok(!card.includes('rewritten-model/no_revision_available/STSBenchmark.json`'), 'not the rewritten one');
    assert.ok(card.includes(record.provenance.gitCommit.slice(0, 12)), 'provenance');
    assert.ok(!card.includes(work), 'no path of this machine in the card');
    assert.deepEqual(readFileSync(join(out, 'mteb', 'good-model', 'no_revision_available', 'STSBenchmark.json')), readFileSync(join(results, 'eval', 'mteb', 'good-model', 'no_revision_available', 'STSBenchmark.json')));
    assert.ok(!existsSync(join(out, 'mteb', 'rewritten-model')));
  });

  test('a LoRA run exports in PEFT layout, and loadLoraAdapter reads back the best matrices', { timeout: 300_000 }, async (t) => {
    const decoder = SHARED_DIR ? join(SHARED_DIR, 'models', 'llama2c-stories260K') : undefined;
    if (!decoder || !existsSync(decoder)) return t.skip('needs the toy llama2.c model of the shared folder');
    const results = join(work, 'lora-results');
    const key = 'fedcba9876543210';
    const runDir = join(results, 'lora', 'runs', key);
    mkdirSync(runDir, { recursive: true });
    const lora = { r: 4, alpha: 8, dropout: 0, targetModules: ['q_proj', 'v_proj'] };
    const m = await loadModel(decoder);
    addLora(m.model as AdaptableModel, lora, 3);
    // "Trained" adapters: B away from its zero initialisation, as a few steps would leave it.
    const adapterParams = new Map([...m.model.params].filter(([n]) => isLoraParameter(n)));
    let k = 0;
    for (const v of adapterParams.values()) tf.tidy(() => v.assign(tf.randomNormal(v.shape, 0, 0.05, 'float32', 100 + k++)));
    await saveBestModel(runDir, adapterParams, { step: 2, metric: 'spearman', value: 0.25, dev: 'stand-in', trainable: 'subset' });
    const now = new Date();
    writeRunRecord(
      {
        experiment: 'lora',
        runId: newRunId(now),
        startedAt: now.toISOString(),
        finishedAt: now.toISOString(),
        wallSeconds: 1,
        seed: 3,
        config: { objective: { name: 'angle' }, pooling: 'last' },
        data: [{ id: 'stand-in', split: 'train', rows: 8 }],
        model: portableModelIdentity(m),
        provenance: collectProvenance(),
        metrics: { best_dev_spearman: 25 },
        paperNote: 'a test stand-in',
        details: { runKey: key, recipe: 'lora-test', lora: { ...lora, seed: 3, modules: adapterParams.size / 2 }, log: [] },
      },
      results,
    );
    const bestTensors = readSafetensors(join(bestModelDir(runDir), 'model.safetensors')).tensors;
    m.model.dispose();

    const out = join(work, 'adapter');
    assert.equal(exportCommand(['--run', runDir, '--out', out, '--onnx']).status, 2, '--onnx does not apply to an adapter');
    const r = exportCommand(['--run', runDir, '--out', out]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /export: wrote .* \(PEFT adapter; 3 files;/);
    const cfg = json(join(out, ADAPTER_CONFIG_FILE));
    assert.deepEqual([cfg.peft_type, cfg.r, cfg.lora_alpha, cfg.target_modules], ['LORA', 4, 8, ['q_proj', 'v_proj']]);
    const peft = readSafetensors(join(out, ADAPTER_WEIGHTS_FILE)).tensors;
    assert.equal(peft.size, bestTensors.size);
    const fresh = await loadModel(decoder);
    try {
      const modules = loadLoraAdapter(out, fresh.model as AdaptableModel);
      assert.equal(modules.length, bestTensors.size / 2);
      for (const [name, tensor] of bestTensors) {
        const mine = [...fresh.model.params].find(([n]) => n === name)?.[1];
        assert.ok(mine, `${name} is attached`);
        assert.equal(maxAbs(mine!.dataSync() as Float32Array, tensor.data as Float32Array), 0, name);
      }
    } finally {
      fresh.model.dispose();
    }
    const card = readFileSync(join(out, 'README.md'), 'utf8');
    assert.match(card, /^---\nlibrary_name: peft\n/);
    assert.ok(card.includes('LoRA r 4, α 8, dropout 0, on q_proj, v_proj'));
    assert.ok(card.includes(ANGLE_BIBTEX));
  });

  test('arguments are checked before any model loads: what to export, --out, the pooling', () => {
    const cases: Array<[string[], RegExp]> = [
      [['--out', join(work, 'x')], /export: give what to export: --run <run dir\|record\.json> or --model <dir\|hub id> \(one of them\) \(see --help\)/],
      [['--model', 'some/model', '--out', join(work, 'x'), '--pooling', 'nope'], /unknown pooling/],
      [['--model', 'some/model', '--out', join(work, 'x'), '--pooling', 'cls_avg_legacy'], /depends on the batch a text is embedded with/],
      [['--run', join(work, 'no-such-run'), '--out', join(work, 'x')], /no such run directory or record file/],
      [['--model', 'some/model', '--pooling', 'cls'], /--out <dir> is required/],
    ];
    for (const [args, message] of cases) {
      const r = exportCommand(args);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
      assert.match(r.stderr, /\(see --help\)\n$/);
    }
  });
});
