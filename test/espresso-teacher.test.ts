/**
 * Teacher alignment (issue 41 item 2; lib/losses/teacher-alignment.ts), angle_emb 0.6.1's
 * teacher_name_or_path:
 *
 * - the `angle` objective with a teacher adds distillationLoss(student, teacher, mse 0, T 1) to its
 *   total, with its gradient; `ese` adds the same value without a gradient (AngleESETrainer's no_grad);
 * - a recipe names the teacher in its objective, and OVERRIDES reach it like any objective option;
 * - the trainer embeds the training texts with the teacher once and looks rows up by text: with the
 *   student's own weights as the teacher, dropout off and lr 0, the term is 0 at every step (below
 *   5e-7, float32 round-off; the same term between different texts of the tiny random BERT is 1.8e-5, so a row
 *   looked up under the wrong text would show).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { PooledSentenceEncoder } from '../lib/embed/encoder.js';
import { applyOverrides } from '../lib/experiments/overrides.js';
import { espressoNli } from '../lib/experiments/recipes/espresso.js';
import { distillationLoss } from '../lib/losses/distillation.js';
import { teacherLookup } from '../lib/losses/teacher-alignment.js';
import { loadModel, type LoadedModel } from '../lib/models/auto.js';
import { bindObjective } from '../lib/train/objective.js';
import { Trainer } from '../lib/train/trainer.js';
import { GOLDEN_DIR } from './helpers/env.js';
import { smallPairs, SMALL_TRAIN_CONFIG } from './helpers/train-fixtures.js';

const MODEL_DIR = GOLDEN_DIR ? join(GOLDEN_DIR, 'model') : undefined;
const noModel = MODEL_DIR && existsSync(MODEL_DIR) ? false : 'no encoder golden set with model/ (ANGLE_GOLDEN_DIR)';

let m: LoadedModel;
before(async () => {
  await initBackend('cpu', { quiet: true });
  if (!noModel) m = await loadModel(MODEL_DIR!);
});
after(() => m?.model.dispose());

const KEYS = ['a one', 'b one', 'a two', 'b two'];
const rand = (seed: number) => tf.randomNormal([4, 8], 0, 1, 'float32', seed) as tf.Tensor2D;

test('angle: the teacher term joins the total with its gradient; ese: its value only', () => {
  const teacherData = rand(7);
  const vectors = teacherLookup([...KEYS].reverse(), Float32Array.from(tf.reverse(teacherData, 0).dataSync()), 8, 'toy teacher');
  const emb = rand(3);
  const batch = { labels: [1, 0], keys: KEYS };
  const loss = { preset: 'paper' as const, weights: { ibn: 0 } };
  const plain = bindObjective({ name: 'angle', loss }, 'pairs');
  const taught = bindObjective({ name: 'angle', loss, teacher: { model: 'toy' } }, 'pairs', { teacher: vectors });
  const want = distillationLoss(emb, teacherData, { mseWeight: 0, klTemperature: 1 }).dataSync()[0]!;
  const r = taught.loss(emb, batch);
  assert.ok(Math.abs(r.terms.teacher!.dataSync()[0]! - want) < 1e-6, 'the term is the distillation of the rows looked up by text');
  assert.ok(Math.abs(r.total.dataSync()[0]! - (plain.loss(emb, batch).total.dataSync()[0]! + want)) < 1e-5);
  const grad = (o: typeof plain) => tf.grad((x: tf.Tensor) => o.loss(x as tf.Tensor2D, batch).total)(emb).dataSync();
  const gTeacher = tf.grad((x: tf.Tensor) => distillationLoss(x, teacherData, { mseWeight: 0, klTemperature: 1 }))(emb).dataSync();
  const gPlain = grad(plain);
  const gTaught = grad(taught);
  let d = 0;
  for (let i = 0; i < gPlain.length; i++) d = Math.max(d, Math.abs(gTaught[i]! - gPlain[i]! - gTeacher[i]!));
  assert.ok(d < 1e-5, `angle gradient = plain + teacher's (max |diff| ${d})`);

  // ESE: the same term, as a value (AngleESETrainer computes it under no_grad).
  const layers = [rand(11), rand(12), rand(13), emb];
  const eseBatch = { ...batch, layers };
  const ese = { name: 'ese' as const, loss, compressionSize: 4, pca: false };
  const esePlain = bindObjective(ese, 'pairs');
  const eseTaught = bindObjective({ ...ese, teacher: { model: 'toy' } }, 'pairs', { teacher: vectors });
  const a = esePlain.loss(emb, eseBatch).total.dataSync()[0]!;
  const b = eseTaught.loss(emb, eseBatch);
  assert.ok(Math.abs(b.total.dataSync()[0]! - (a + want)) < 1e-5);
  const gEse = (o: typeof esePlain) => tf.grad((x: tf.Tensor) => o.loss(x as tf.Tensor2D, { ...batch, layers: [...layers.slice(0, 3), x as tf.Tensor2D] }).total)(emb).dataSync();
  assert.deepEqual([...gEse(eseTaught)], [...gEse(esePlain)], 'no gradient from the teacher term in ESE');

  // Without prepared vectors the objective says so; a text the teacher never embedded is named.
  assert.throws(() => bindObjective({ name: 'angle', loss, teacher: { model: 'toy' } }, 'pairs').loss(emb, batch), /teacher's vectors were not prepared/);
  assert.throws(() => vectors(['never seen']), /no vector for the text "never seen"/);
  assert.throws(() => bindObjective({ name: 'angle', loss, teacher: { model: '' } } as never, 'pairs'), /teacher must be \{ model/);
});

test('a recipe names the teacher in its objective; OVERRIDES set it like any objective option', () => {
  const r = applyOverrides(espressoNli(), { objective: { teacher: { model: 'WhereIsAI/UAE-Large-V1', pooling: 'cls' } } } as never);
  assert.deepEqual((r.config.objective as { teacher?: unknown }).teacher, { model: 'WhereIsAI/UAE-Large-V1', pooling: 'cls' });
  assert.equal((r.config.objective as { compressionSize: number }).compressionSize, 128, 'the other objective settings stay');
  assert.match(r.sources['objective.teacher.model'] ?? r.sources['objective.teacher'] ?? '', /override \(parameter cell\)/);
});

test('the trainer embeds the training texts with the teacher: the student as its own teacher scores 0 at every step', { skip: noModel, timeout: 300_000 }, async () => {
  const terms: number[] = [];
  const trainer = new Trainer({
    model: m,
    train: smallPairs(8),
    progress: false,
    config: { ...SMALL_TRAIN_CONFIG, objective: { name: 'angle', loss: { preset: 'paper', weights: { ibn: 0 } }, teacher: { model: MODEL_DIR!, pooling: 'cls' } }, lr: 0, dropout: 0, epochs: undefined, maxSteps: 3 },
    onStep: (log) => terms.push(log.terms.teacher!),
  });
  await trainer.run();
  assert.equal(terms.length, 3);
  for (const t of terms) assert.ok(Math.abs(t) < 5e-7, `teacher term ${t} (all: ${terms.join(", ")})`);
  // The check can tell rows apart: the same term between the first and second texts of the pairs is far from 0.
  const pairs = smallPairs(8).items;
  const enc = new PooledSentenceEncoder(m, { pooling: 'cls', maxLength: SMALL_TRAIN_CONFIG.maxLength });
  const [a, b] = await Promise.all([enc.encode(pairs.map((p) => p.a)), enc.encode(pairs.map((p) => p.b))]);
  const apart = distillationLoss(tf.tensor2d(a.data, [a.rows, a.dim]), tf.tensor2d(b.data, [b.rows, b.dim]), { mseWeight: 0, klTemperature: 1 }).dataSync()[0]!;
  assert.ok(apart > 5e-6, `rows of other texts: ${apart}`);
});
