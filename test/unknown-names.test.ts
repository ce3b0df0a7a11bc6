/**
 * Every "unknown name" — pooling, task, backend, objective, preset, data set, schedule, model
 * architecture, STS task — raises the one error class (UnknownNameError, an InputError) whose
 * message lists the names that would have been accepted.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { datasetEntry } from '../lib/data/registry.js';
import { parsePooling } from '../lib/embed/pooling.js';
import { task } from '../lib/experiments/tasks.js';
import { loadModel } from '../lib/models/auto.js';
import { presetByName } from '../lib/experiments/presets.js';
import { bindObjective } from '../lib/train/objective.js';
import { checkSchedule } from '../lib/train/schedule.js';
import { InputError, UnknownNameError } from '../lib/util/errors.js';

function unknown(kind: RegExp, given: string, someValid: string[]) {
  return (e: Error) => {
    assert.ok(e instanceof UnknownNameError, `${e.name}: ${e.message}`);
    assert.ok(e instanceof InputError, 'an UnknownNameError is an input error');
    assert.match(e.message, new RegExp(`unknown ${kind.source} '${given}': expected one of `));
    for (const v of someValid) assert.ok(e.valid.includes(v) && e.message.includes(v), `${v} is listed`);
    return true;
  };
}

test('unknown names of every kind raise UnknownNameError listing the valid names', async () => {
  assert.throws(() => parsePooling('mean-max'), unknown(/pooling/, 'mean-max', ['cls', 'cls_avg', 'avg', 'max', 'first_last_avg', 'last', 'cls-last-avg']));
  assert.throws(() => task('sts-b'), unknown(/task/, 'sts-b', ['stsb', 'sick', 'mrpc', 'qnli', 'qqp', 'gis', 'nli']));
  await assert.rejects(initBackend('gpu', { quiet: true }), unknown(/backend/, 'gpu', ['cpu', 'wasm', 'cuda', 'tensorflow']));
  assert.throws(() => bindObjective({ name: 'infonce' } as never, 'pairs'), unknown(/objective/, 'infonce', ['angle', 'simcse', 'simace', 'arccon']));
  assert.throws(() => presetByName('tiny'), unknown(/preset/, 'tiny', ['smoke', 'paper']));
  assert.throws(() => datasetEntry('STS99'), unknown(/data set/, 'STS99', ['STS12', 'STSBenchmark', 'MRPC']));
  assert.throws(() => checkSchedule({ name: 'step' as never, lr: 1, warmupSteps: 0, totalSteps: 4 }), unknown(/learning-rate schedule/, 'step', ['constant', 'linear', 'cosine']));

  const dir = mkdtempSync(join(tmpdir(), 'angle-arch-'));
  try {
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ model_type: 'gpt_neox', hidden_size: 8 }));
    await assert.rejects(loadModel(dir), unknown(/model architecture \(config\.json model_type\)/, 'gpt_neox', ['bert']));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
