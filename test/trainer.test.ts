/**
 * The trainer end to end on the golden tiny BERT (cpu backend): resume after a SIGKILL gives the
 * same per-step losses as an uninterrupted run; no tensor leaks over 200 steps; dev evaluation,
 * best model and a results file with provenance; and bad input failing before anything is written.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { initBackend, tf } from '../lib/backend/index.js';
import { BertModel } from '../lib/models/bert/model.js';
import { bertParameterShapes } from '../lib/models/bert/weights.js';
import { loadModel, type LoadedModel } from '../lib/models/auto.js';
import { checkpointsDir, latestCheckpoint } from '../lib/train/checkpoint.js';
import { stsEvaluator } from '../lib/eval/pair-evaluators.js';
import { collectProvenance } from '../lib/report/provenance.js';
import { portableModelIdentity, writeTrainingRecord } from '../lib/report/training-record.js';
import { Trainer } from '../lib/train/trainer.js';
import { InputError } from '../lib/util/errors.js';
import { GOLDEN_DIR } from './helpers/env.js';
import { smallPairs, SMALL_TRAIN_CONFIG } from './helpers/train-fixtures.js';

const MODEL_DIR = GOLDEN_DIR ? join(GOLDEN_DIR, 'model') : undefined;
const skip = MODEL_DIR && existsSync(MODEL_DIR) ? false : 'ANGLE_GOLDEN_DIR is not set to a golden set with model/ (e.g. ../shared/golden/bert-tiny-seed1234)';
const CHILD = fileURLToPath(new URL('./helpers/train-child.ts', import.meta.url));

let tmp: string;
let loaded: LoadedModel;

before(async () => {
  await initBackend('cpu', { quiet: true });
  tmp = mkdtempSync(join(tmpdir(), 'angle-trainer-'));
  if (!skip) loaded = await loadModel(MODEL_DIR!);
});
after(() => {
  loaded?.model.dispose();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** Fresh weights for each test: the trainer updates the model in place. */
async function freshModel(): Promise<LoadedModel> {
  return loadModel(MODEL_DIR!);
}

function child(runDir: string, extra: string[]): { steps: { step: number; loss: number }[]; done?: number; resumedFrom?: string | null; status: number | null; signal: NodeJS.Signals | null } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', CHILD, MODEL_DIR!, runDir, ...extra], { encoding: 'utf8', timeout: 300_000 });
  const lines = r.stdout.split('\n').filter((l) => l.trim().startsWith('{')).map((l) => JSON.parse(l));
  const end = lines.find((l) => 'done' in l);
  if (r.status !== 0 && r.signal === null) throw new Error(`child failed (${r.status}): ${r.stderr}`);
  return { steps: lines.filter((l) => 'loss' in l), done: end?.done, resumedFrom: end?.resumedFrom, status: r.status, signal: r.signal };
}

describe('Trainer', { skip }, () => {
  test('a run killed (SIGKILL) mid-way and resumed from its last checkpoint logs the same losses as an uninterrupted run', () => {
    const whole = child(join(tmp, 'whole'), []);
    assert.equal(whole.done, 12);
    assert.equal(whole.steps.length, 12);

    const runDir = join(tmp, 'killed');
    const killed = child(runDir, ['--kill-at', '7']);
    assert.equal(killed.signal, 'SIGKILL');
    assert.deepEqual(killed.steps.map((s) => s.step), [0, 1, 2, 3, 4, 5, 6, 7]);
    // Step 7's checkpoint was never written: the newest is the one after 7 completed steps.
    assert.match(latestCheckpoint(runDir) ?? '', /step-000007$/);

    const resumed = child(runDir, ['--resume']);
    assert.match(resumed.resumedFrom ?? '', /step-000007$/);
    assert.equal(resumed.done, 12);
    assert.deepEqual(resumed.steps.map((s) => s.step), [7, 8, 9, 10, 11]);
    // Same data order (second epoch, shuffled), same dropout masks, same optimiser state: same numbers.
    for (const s of resumed.steps) assert.equal(s.loss, whole.steps[s.step].loss, `step ${s.step}`);
    for (const s of killed.steps) assert.equal(s.loss, whole.steps[s.step].loss, `step ${s.step}`);
    // Old checkpoints are pruned to keepCheckpoints (3).
    assert.deepEqual(readdirSync(checkpointsDir(runDir)).sort(), ['step-000010', 'step-000011', 'step-000012']);
  });

  test('tensor count and bytes after 200 steps equal those after 10 steps (and with accumulation + clipping)', async () => {
    const m = await freshModel();
    const measure = async (maxSteps: number, extra: object) => {
      const seen = new Map<number, { tensors: number; bytes: number }>();
      const trainer = new Trainer({
        model: m,
        train: smallPairs(),
        progress: false,
        config: { ...SMALL_TRAIN_CONFIG, batchSize: 2, maxLength: 8, epochs: undefined, maxSteps, ...extra },
        onStep: (log) => {
          if (log.step === 9 || log.step === maxSteps - 1) seen.set(log.step + 1, { tensors: tf.memory().numTensors, bytes: tf.memory().numBytes });
        },
      });
      assert.equal((await trainer.run()).steps, maxSteps);
      assert.ok(seen.get(10)!.tensors > 0);
      assert.deepEqual(seen.get(maxSteps), seen.get(10), `after ${maxSteps} steps vs after 10`);
    };
    await measure(200, {});
    await measure(30, { gradAccumulation: 2, maxGradNorm: 1 });
    m.model.dispose();
  });

  test('dev evaluation keeps the best model (loadable) and writes a results file with provenance', async () => {
    const m = await freshModel();
    const runDir = join(tmp, 'with-dev');
    const resultsDir = join(tmp, 'results');
    const devPairs = smallPairs(12).items.map((p, i) => ({ a: p.a, b: p.b, score: p.label, source: { file: 'dev', line: i + 1 } }));
    const evals: number[] = [];
    const trainer = new Trainer({
      model: m,
      train: smallPairs(),
      dev: stsEvaluator({ name: 'small dev', pairs: devPairs }),
      test: stsEvaluator({ name: 'small test', pairs: devPairs.slice(0, 10) }),
      runDir,
      progress: false,
      config: { ...SMALL_TRAIN_CONFIG, evalEvery: 4, evalMaxLength: 16 },
      onEval: (e) => evals.push(e.step),
    });
    const provenance = collectProvenance();
    const r = await trainer.run();
    const resultsFile = writeTrainingRecord(r, { experiment: 'trainer-test', resultsDir, provenance, model: portableModelIdentity(m) });
    assert.deepEqual(evals, [4, 8, 12, 12]);
    assert.ok(r.best && [4, 8, 12].includes(r.best.step));
    assert.equal(r.best!.value, Math.max(...r.evals.map((e) => e.metrics.spearman)));
    const best = JSON.parse(readFileSync(join(runDir, 'best', 'best.json'), 'utf8'));
    assert.equal(best.step, r.best!.step);
    assert.equal(best.value, r.best!.value);
    const reloaded = await loadModel(join(runDir, 'best'));
    assert.equal(reloaded.model.hiddenSize, m.model.hiddenSize);
    reloaded.model.dispose();

    const files = readdirSync(join(resultsDir, 'trainer-test')).sort();
    assert.equal(files.length, 2, files.join(', '));
    assert.match(files[1], /\.predictions\.json$/);
    const side = JSON.parse(readFileSync(join(resultsDir, 'trainer-test', files[1]), 'utf8'));
    assert.equal(side.predictions.length, 10);
    assert.deepEqual(side.gold, devPairs.slice(0, 10).map((p) => p.score));
    const rec = JSON.parse(readFileSync(join(resultsDir, 'trainer-test', files[0]), 'utf8'));
    assert.equal(rec.experiment, 'trainer-test');
    assert.equal(rec.provenance.backend, 'cpu');
    assert.match(rec.provenance.gitCommit, /^[0-9a-f]{40}$|^unknown/);
    assert.equal(rec.provenance.packages['@tensorflow/tfjs-core'], tf.version_core);
    assert.equal(rec.seed, 11);
    assert.equal(rec.config.lr, 1e-3);
    assert.equal(rec.model.weightsSha256, m.weightsSha256);
    assert.match(rec.data[0].sha256, /^[0-9a-f]{64}$/);
    assert.ok(Math.abs(rec.metrics.dev_spearman - r.final!.spearman * 100) < 1e-9);
    assert.equal(rec.details.log.length, 12);
    assert.equal(rec.details.predictionsFile, files[1]);
    // No path of this machine in a record that may go into git.
    assert.match(rec.model.id, /^(shared|project|local):/);
    assert.ok(!JSON.stringify(rec).includes(tmp), 'the record holds a temporary path');
    assert.equal(resultsFile, join(resultsDir, 'trainer-test', files[0]));
    m.model.dispose();
  });

  test('bad input fails clearly and leaves no checkpoint or results file behind', async () => {
    const runDir = join(tmp, 'bad');
    const resultsDir = join(tmp, 'bad-results');
    const base = { model: loaded, runDir, progress: false };
    assert.throws(
      () => new Trainer({ ...base, train: smallPairs(3), config: { ...SMALL_TRAIN_CONFIG, checkpointEvery: 1 } }),
      (e: Error) => e instanceof InputError && /'small pairs' has 3 pairs, fewer than one batch of 4/.test(e.message),
    );
    const wrongLabel = smallPairs();
    (wrongLabel.items[5] as { label: unknown }).label = 'high';
    assert.throws(() => new Trainer({ ...base, train: wrongLabel, config: SMALL_TRAIN_CONFIG }), /small pairs \(example 5\): label is string "high", expected a finite number/);
    assert.throws(() => new Trainer({ ...base, train: smallPairs(), config: { ...SMALL_TRAIN_CONFIG, evalEvery: 5 } }), /evalEvery is 5 but no dev set was given/);
    assert.throws(
      () => new Trainer({ ...base, train: { kind: 'unsupervised', name: 'wiki', items: [{ text: 'x' }, { text: 'y' }, { text: 'z' }, { text: 'w' }] }, config: SMALL_TRAIN_CONFIG }),
      /objective 'angle' cannot train on unsupervised data/,
    );
    assert.equal(existsSync(runDir), false);
    assert.equal(existsSync(resultsDir), false);

    // A checkpoint written for the golden shape, resumed into a BERT of another shape.
    const m = await freshModel();
    await new Trainer({ ...base, model: m, train: smallPairs(), config: { ...SMALL_TRAIN_CONFIG, maxSteps: 1, warmupSteps: 0, checkpointEvery: 1 } }).run();
    m.model.dispose();
    const before = readdirSync(checkpointsDir(runDir)).sort();
    const cfg = { ...(loaded.model as BertModel).config, hiddenSize: 32, intermediateSize: 64 };
    const weights = new Map([...bertParameterShapes(cfg)].map(([n, s]) => [n, { shape: s, data: new Float32Array(s.reduce((a, b) => a * b, 1)).fill(0.01) }]));
    const other = new BertModel(cfg, weights);
    const t = new Trainer({ ...base, model: { model: other, tokenizer: loaded.tokenizer }, train: smallPairs(), config: { ...SMALL_TRAIN_CONFIG, checkpointEvery: 1 } });
    await assert.rejects(
      t.run({ resume: true }),
      (e: Error) => e instanceof InputError && /step-000001\/model\.safetensors: checkpoint was written for another model shape: 'embeddings\.word_embeddings\.weight' is \[30522,64\] in the checkpoint, \[30522,32\] in the model/.test(e.message),
    );
    other.dispose();
    assert.deepEqual(readdirSync(checkpointsDir(runDir)).sort(), before);
    assert.equal(existsSync(resultsDir), false);
  });
});
