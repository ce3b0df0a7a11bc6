/**
 * Rehearsal rows carry their provenance (commit, package versions, date, machine) and, for training,
 * the peak while the model is built and prepared apart from the peak of the optimiser step after it
 * (lib/experiments/rehearsal/summary.ts, ./train.ts, ./provenance.ts); `realSteps` runs whole
 * optimiser steps on the active backend (what scripts/gpu-check/ does on a GPU).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { recipe } from '../lib/experiments/recipes/index.js';
import { rehearsalTokenizer } from '../lib/experiments/rehearsal/models.js';
import { provenanceLines, rehearsalProvenance } from '../lib/experiments/rehearsal/provenance.js';
import { readRehearsalSummary, writeRehearsalRows, type RehearsalRow } from '../lib/experiments/rehearsal/summary.js';
import { rehearseTraining } from '../lib/experiments/rehearsal/train.js';
import { KNOWN_CONFIGS, parameterCountOfConfig } from '../lib/models/model-from-config.js';
import { SHARED_DIR } from './helpers/env.js';

const dir = mkdtempSync(join(tmpdir(), 'rehearsal-provenance-'));
before(async () => {
  await initBackend('cpu', { quiet: true });
});
after(() => rmSync(dir, { recursive: true, force: true }));

function row(run: string, extra: Partial<RehearsalRow> = {}): RehearsalRow {
  return {
    notebook: '02-non-transfer-sts', run, kind: 'train', model: 'google-bert/bert-base-uncased', instantiated: 'random bert config', batch: 32, length: 70, accumulation: 1,
    data: 'synthetic', stepSeconds: null, backend: 'meta (shape-only)', peakBytes: 1e9, projectedPeakBytesH100: 4e9, projectedLoadPeakBytesH100: 1e9, projectedStepPeakBytesH100: 4e9,
    projectedHoursH100: 0.1, timeBasis: 'FLOPs', fits80GB: true, status: 'ok', why: '', ...extra,
  };
}

test('provenance: the commit, node and tfjs versions, the date and the machine', () => {
  const p = rehearsalProvenance(new Date('2026-11-28T01:00:00Z'));
  assert.match(p.commit, /^([0-9a-f]{40}|unknown \(not a git checkout\))$/);
  assert.equal(p.date, '2026-11-28T01:00:00.000Z');
  assert.match(p.machine, / x \d+, [\d.]+ GiB, /);
  assert.equal(p.packages.node, process.version);
  assert.match(p.packages['@tensorflow/tfjs-core'], /^\d+\.\d+\.\d+/);
  assert.match(p.backend, /^cpu /);
});

test('writeRehearsalRows stamps each row without provenance, keeps a row\'s own, and summary.md lists them with the load / step peaks', () => {
  const own = { ...rehearsalProvenance(new Date('2026-11-01T00:00:00Z')), commit: 'f'.repeat(40), dirty: false, machine: 'an older machine' };
  writeRehearsalRows(dir, '02-non-transfer-sts', [row('AnglE-BERT: angle-stsb'), row('SBERT: sbert-stsb', { provenance: own })]);
  const rows = readRehearsalSummary(dir).rows;
  const stamped = rows.find((r) => r.run === 'AnglE-BERT: angle-stsb')!;
  assert.ok(stamped.provenance, 'stamped');
  assert.ok(Date.now() - Date.parse(stamped.provenance.date) < 3600_000);
  assert.deepEqual(rows.find((r) => r.run === 'SBERT: sbert-stsb')!.provenance, own);
  const md = readFileSync(join(dir, 'summary.md'), 'utf8');
  assert.match(md, /\| of it: loading \/ step \|/);
  assert.match(md, /\| 1\.0 GB \/ 4\.0 GB \|/);
  assert.match(md, /Provenance/);
  assert.match(md, /1 row\(s\): commit ffffffffffff on an older machine/);
  assert.deepEqual(provenanceLines([{}]), ['1 row(s) without provenance (written before rows recorded it)']);
});

test('a LoRA row over an NF4 base: the load peak and the step peak apart, the run\'s peak the larger; realSteps runs whole optimiser steps here', { skip: SHARED_DIR ? false : 'needs the shared folder (models/gpt2-tokenizer)', timeout: 600_000 }, async () => {
  // PromptEOL+CSE's recipe (LoRA r 64 over an NF4 base, checkpointing) on an OPT shrunk to 2 layers of width 64.
  const config = { ...KNOWN_CONFIGS['facebook/opt-125m'], hidden_size: 64, num_attention_heads: 4, num_hidden_layers: 2, ffn_dim: 128, word_embed_proj_dim: 64, vocab_size: 512 };
  const full = recipe('prompteol-cse-nli');
  const small = { ...full, config: { ...full.config, batchSize: 2, maxLength: 12, gradAccumulation: 2 } };
  const spec = { id: 'facebook/opt-125m', config, tokenizer: rehearsalTokenizer(config).tokenizer, parameters: parameterCountOfConfig(config), shapeOnly: false, instantiated: 'test' };
  const r = await rehearseTraining({ notebook: '09-prompteol', run: 'test: prompteol-cse-nli', recipe: small, spec, calibration: 1, backend: 'cpu', realSteps: 2 });
  assert.equal(r.status, 'ok', r.why);
  assert.ok(r.projectedLoadPeakBytesH100! > 0 && r.projectedStepPeakBytesH100! > 0);
  assert.equal(r.projectedPeakBytesH100, Math.max(r.projectedLoadPeakBytesH100!, r.projectedStepPeakBytesH100!));
  assert.ok(r.stepSeconds! > 0);
  assert.match(r.backend, /^cpu \(2 optimiser step\(s\), 2 micro-batch\(es\) each\)$/);
});
