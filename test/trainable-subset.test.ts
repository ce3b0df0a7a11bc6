/**
 * Training a subset of a model's parameters (what adapters need): with every parameter but one
 * layer frozen, the frozen weights stay bit-identical, only the trainable ones get optimizer state
 * and go into checkpoints, and a run resumed from such a checkpoint logs exactly the losses of an
 * uninterrupted one (golden tiny BERT, cpu backend).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { loadModel } from '../lib/models/auto.js';
import type { LoadedModel } from '../lib/models/types.js';
import { readSafetensors } from '../lib/models/safetensors.js';
import { latestCheckpoint } from '../lib/train/checkpoint.js';
import { Trainer, type TrainResult } from '../lib/train/trainer.js';
import { InputError } from '../lib/util/errors.js';
import { GOLDEN_DIR } from './helpers/env.js';
import { smallPairs, SMALL_TRAIN_CONFIG } from './helpers/train-fixtures.js';

const MODEL_DIR = GOLDEN_DIR ? join(GOLDEN_DIR, 'model') : undefined;
const skip = MODEL_DIR && existsSync(MODEL_DIR) ? false : 'ANGLE_GOLDEN_DIR is not set to a golden set with model/ (e.g. ../shared/golden/bert-tiny-seed1234)';

/** Every parameter of the last encoder layer trains; everything else is frozen. */
const LAST_LAYER = (name: string, layers: number) => name.startsWith(`encoder.layer.${layers - 1}.`);

let tmp: string;
before(async () => {
  await initBackend('cpu', { quiet: true });
  tmp = mkdtempSync(join(tmpdir(), 'angle-subset-'));
});
after(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

async function frozenModel(): Promise<LoadedModel> {
  const m = await loadModel(MODEL_DIR!);
  const layers = m.model.numLayers;
  m.model.setTrainable((name) => LAST_LAYER(name, layers));
  return m;
}

function values(m: LoadedModel): Map<string, Float32Array> {
  return new Map([...m.model.params].map(([n, v]) => [n, v.dataSync() as Float32Array]));
}

const CONFIG = { ...SMALL_TRAIN_CONFIG, checkpointEvery: 1, keepCheckpoints: 2 };

describe('training a trainable subset', { skip }, () => {
  test('frozen weights are bit-identical after training; checkpoints hold only the trainable tensors; resume is exact', async () => {
    const m = await frozenModel();
    const trainable = [...m.model.trainableParameters().keys()];
    assert.equal(trainable.length, 16, 'a BERT layer has 16 parameter tensors');
    assert.ok(trainable.every((n) => n.startsWith(`encoder.layer.${m.model.numLayers - 1}.`)));
    const before = values(m);
    const whole = await new Trainer({ model: m, train: smallPairs(), progress: false, runDir: join(tmp, 'whole'), config: CONFIG }).run();
    assert.equal(whole.steps, 12);
    assert.equal(whole.identity.trainableParameters, 16);
    assert.equal(whole.identity.frozenParameters, m.model.params.size - 16);
    const afterTraining = values(m);
    let changed = 0;
    for (const [name, v] of afterTraining) {
      const b = before.get(name)!;
      const same = v.length === b.length && v.every((x, i) => Object.is(x, b[i]));
      if (trainable.includes(name)) changed += same ? 0 : 1;
      else assert.ok(same, `frozen parameter ${name} changed`);
    }
    assert.ok(changed >= 12, `only ${changed} of 16 trainable tensors changed`);
    m.model.dispose();

    const ckpt = latestCheckpoint(join(tmp, 'whole'))!;
    const saved = [...readSafetensors(join(ckpt, 'model.safetensors')).tensors.keys()].sort();
    assert.deepEqual(saved, [...trainable].sort(), 'the checkpoint holds exactly the trainable tensors');

    // Stop after 5 steps, then continue in a fresh model (frozen weights reloaded from the base).
    const runDir = join(tmp, 'stopped');
    const first = await frozenModel();
    const stopped = await new Trainer({ model: first, train: smallPairs(), progress: false, runDir, config: CONFIG }).run({ stopAfterSteps: 5 });
    assert.equal(stopped.complete, false);
    first.model.dispose();
    const second = await frozenModel();
    const resumed: TrainResult = await new Trainer({ model: second, train: smallPairs(), progress: false, runDir, config: CONFIG }).run({ resume: true });
    assert.match(resumed.resumedFrom ?? '', /step-000005$/);
    assert.equal(resumed.steps, 12);
    for (const s of resumed.log) assert.equal(s.loss, whole.log[s.step].loss, `step ${s.step}`);
    const final = values(second);
    for (const [name, v] of afterTraining) assert.deepEqual(final.get(name), v, `${name} after the resumed run`);
    second.model.dispose();
  });

  test('a model with every parameter frozen is refused before anything is written', async () => {
    const m = await loadModel(MODEL_DIR!);
    m.model.setTrainable(() => false);
    assert.throws(() => new Trainer({ model: m, train: smallPairs(), progress: false, config: SMALL_TRAIN_CONFIG }), (e: Error) => e instanceof InputError && /every parameter of the model is frozen/.test(e.message));
    m.model.dispose();
  });

  test("resume with nothing to resume is an error; 'if-possible' starts fresh", async () => {
    const m = await loadModel(MODEL_DIR!);
    const runDir = join(tmp, 'empty');
    const t = new Trainer({ model: m, train: smallPairs(), progress: false, runDir, config: { ...CONFIG, maxSteps: 1, warmupSteps: 0 } });
    await assert.rejects(t.run({ resume: true }), (e: Error) => e instanceof InputError && /nothing to resume: no complete checkpoint under .*empty[\\/]checkpoints/.test(e.message));
    const r = await t.run({ resume: 'if-possible' });
    assert.equal(r.resumedFrom, undefined);
    assert.equal(r.steps, 1);
    m.model.dispose();
  });
});
