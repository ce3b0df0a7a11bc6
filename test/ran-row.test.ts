/**
 * AnglE Table 3's AnglE-RAN row (issue 37 item 5): its recipes (AnglE-BERT's but for the pooling),
 * its model by preset (a tiny random stand-in under smoke, RAN_base's assumed shapes in the
 * rehearsal, the released folder or a line saying where to get it under paper), the rehearsal of
 * RAN_base and its long-text memory beside BERT-base's (shape-only projections).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { ranRowModel } from '../lib/experiments/ran-row-model.js';
import { angleBert, angleRan } from '../lib/experiments/recipes/angle.js';
import { recipe } from '../lib/experiments/recipes/index.js';
import { longTextMemoryTable, rehearseLongTextMemory } from '../lib/experiments/rehearsal/long-text-memory.js';
import { rehearsalModel } from '../lib/experiments/rehearsal/models.js';
import { table3Rows, TABLE3_COLUMNS } from '../lib/experiments/tables/angle.js';
import { RAN_BASE_ID } from '../lib/models/ran/ran-base.js';
import { SHARED_DIR } from './helpers/env.js';

const skip = SHARED_DIR ? false : 'needs the shared folder (golden/ran-tiny-seed11, models/bert-base-uncased-tokenizer)';

test('angle-ran-<task>: AnglE-BERT recipe with RanNet sentence vector (the pooler output), for the five Table 3 columns', () => {
  for (const { task } of TABLE3_COLUMNS) {
    const r = recipe(`angle-ran-${task}`);
    const b = angleBert(task);
    assert.equal(r.config.pooling, 'cls_pooler');
    assert.deepEqual({ ...r.config, pooling: b.config.pooling }, b.config, `${task}: every other value is AnglE-BERT's`);
    assert.match(r.sources.pooling, /mean of the top layer's window cells/);
    assert.match(r.sources.lr, /AnglE-BERT row's value/);
  }
  assert.throws(() => recipe('angle-ran-sick'), /unknown recipe/);
  assert.equal(angleRan('gis').config.maxLength, 512);
});

test('the AnglE-RAN row by preset: smoke stand-in, rehearsal RAN_base, paper without the checkpoint says where to get it', { skip }, () => {
  const env = { ANGLE_SHARED_DIR: SHARED_DIR! };
  const smoke = ranRowModel('smoke', env);
  assert.ok('model' in smoke && smoke.model.endsWith(join('ran-tiny-seed11', 'model')));
  const rows = table3Rows(['mrpc', 'gis'], smoke).filter((r) => r.row === 'AnglE-RAN');
  assert.equal(rows.length, 2);
  assert.equal(rows[0].recipe!.name, 'angle-ran-mrpc');
  assert.equal(rows[0].model, (smoke as { model: string }).model);
  assert.match(rows[0].recipe!.title, /STAND-IN: .*reproduces nothing/);
  assert.equal(rows[1].cells[0].paper?.value, 71.25, "the paper's GitHub Issues cell");

  assert.deepEqual(ranRowModel('rehearsal', env), { model: RAN_BASE_ID });
  const paper = ranRowModel('paper', { ANGLE_SHARED_DIR: mkdtempSync(join(tmpdir(), 'no-ran-')) });
  assert.ok('unavailable' in paper && /drive\.google\.com.*ANGLE_RAN_MODEL/.test(paper.unavailable), JSON.stringify(paper));
  const unavailable = table3Rows(['stsb'], paper).find((r) => r.row === 'AnglE-RAN')!;
  assert.equal(unavailable.recipe, undefined);
  assert.match(unavailable.unavailable!, /RAN_base is not on this machine/);
  // A released folder under <shared>/models/RAN_base, or ANGLE_RAN_MODEL, is the paper row's model.
  const shared = mkdtempSync(join(tmpdir(), 'ran-shared-'));
  try {
    mkdirSync(join(shared, 'models', 'RAN_base'), { recursive: true });
    writeFileSync(join(shared, 'models', 'RAN_base', 'config.json'), '{}');
    assert.deepEqual(ranRowModel('paper', { ANGLE_SHARED_DIR: shared }), { model: join(shared, 'models', 'RAN_base') });
    assert.deepEqual(ranRowModel('paper', { ANGLE_SHARED_DIR: shared, ANGLE_RAN_MODEL: '/x/ran' }), { model: '/x/ran' });
  } finally {
    rmSync(shared, { recursive: true, force: true });
  }
});

test('rehearsal: RAN_base from its assumed config (85.5M parameters, labelled ASSUMED), and its memory at 512 tokens beside BERT-base', { skip }, async () => {
  await initBackend('cpu', { quiet: true });
  const spec = await rehearsalModel(RAN_BASE_ID);
  assert.equal(spec.parameters, 85_502_976);
  assert.equal(spec.config?.model_type, 'rannet');
  assert.match(spec.instantiated, /ASSUMED shapes/);
  assert.deepEqual(spec.tokenizer.encode('a man', 'a dog').ids.length, 6, 'RanNet pairs: A [SEP] B [SEP]');
  const rows = await rehearseLongTextMemory({ backend: 'cpu', lengths: [512] });
  assert.deepEqual(rows.map((r) => [r.model, r.length, r.status]), [
    [RAN_BASE_ID, 512, 'ok'],
    ['google-bert/bert-base-uncased', 512, 'ok'],
  ]);
  for (const r of rows) assert.ok(r.projectedPeakBytesH100 > 1e9, `${r.model}: ${r.projectedPeakBytesH100} B`);
  const table = longTextMemoryTable(rows);
  assert.equal(table.rows.length, 1);
  assert.equal(table.rows[0][0], '512');
});
