/**
 * The rehearsal preset (lib/experiments/rehearsal) end to end, as CI runs it: notebooks 02 and 03
 * through the headless runner with `--preset rehearsal` — the paper's recipes at their real shapes
 * on bert-base-uncased's architecture (random weights), one full optimiser step each on the
 * shape-only backend — and the summary the checks read: one row per planned run with every
 * field, each row ok and fitting one 80 GB GPU, the recipe's batch and accumulation, the data
 * that was here marked real, and the rendered table beside it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { recipe } from '../lib/experiments/recipes/index.js';
import type { RehearsalSummary } from '../lib/experiments/rehearsal/summary.js';
import { packageRoot } from '../lib/util/package-root.js';
import { SHARED_DIR } from './helpers/env.js';

const ROOT = packageRoot();
const skip = SHARED_DIR && existsSync(join(ROOT, 'dist', 'index.js')) ? false : 'needs the shared folder and a build (dist/; npm test builds it first)';
const tmp = mkdtempSync(join(tmpdir(), 'angle-rehearsal-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const FIELDS = ['notebook', 'run', 'model', 'batch', 'length', 'accumulation', 'stepSeconds', 'peakBytes', 'projectedPeakBytesH100', 'projectedHoursH100', 'fits80GB', 'status', 'why'];

test('a short rehearsal of notebooks 02 and 03: every planned run has a row, at the recipe\'s shapes, ok and within one 80 GB GPU', { skip, timeout: 900_000 }, async () => {
  const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ANGLE_') || k === 'ANGLE_ONNX_CACHE'));
  // Only the numbers are checked here: no static figure images (each kernel would start Chromium for them).
  env.ANGLE_STATIC_FIGURES = 'off';
  Object.assign(env, { ANGLE_SHARED_DIR: SHARED_DIR!, ANGLE_RESULTS_DIR: join(tmp, 'results'), HF_HUB_OFFLINE: '1' });
  const r = await new Promise<{ code: number | null; out: string }>((res, rej) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/notebooks/cli.ts', '02', '03', '--preset', 'rehearsal', '--out', join(tmp, 'out')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b) => (out += b));
    child.stderr.on('data', (b) => (out += b));
    child.on('error', rej);
    child.on('close', (code) => res({ code, out }));
  });
  assert.equal(r.code, 0, r.out);
  const summary = JSON.parse(readFileSync(join(tmp, 'results', 'summary.json'), 'utf8')) as RehearsalSummary;
  assert.ok(existsSync(join(tmp, 'results', 'summary.md')));
  const byNotebook = (n: string) => summary.rows.filter((x) => x.notebook === n);
  // 02: AnglE Table 3's rows that train (SimCSE, SBERT, AnglE on each of its data sets); 03: Table 4's objectives and poolings.
  assert.ok(byNotebook('02-non-transfer-sts').length >= 3, JSON.stringify(summary.rows.map((x) => x.run)));
  assert.ok(byNotebook('03-objectives').length >= 6);
  assert.ok(byNotebook('02-non-transfer-sts').some((x) => x.run.startsWith('AnglE-RAN')), 'the AnglE-RAN row is rehearsed');
  for (const row of summary.rows) {
    for (const f of FIELDS) assert.ok(f in row, `${row.run}: field ${f}`);
    assert.equal(row.status, 'ok', `${row.run}: ${row.why}`);
    assert.equal(row.fits80GB, true);
    // AnglE-RAN's row trains RanNet (RAN_base's shapes); every other row BERT-base.
    assert.equal(row.model, row.run.startsWith('AnglE-RAN') ? 'RAN_base' : 'google-bert/bert-base-uncased', row.run);
    assert.ok(row.projectedPeakBytesH100 > 1.76e9, `${row.run}: at least BERT-base's weights, gradients and AdamW state`);
    assert.ok(row.projectedPeakBytesH100 < 72e9);
    assert.ok(row.projectedHoursH100 > 0);
  }
  // The STS-B recipe at its real shape: AnglE's batch and max length, every text of the longest batch from the real data.
  const stsb = recipe('angle-stsb').config;
  const angleRow = byNotebook('03-objectives').find((x) => x.run.includes('AnglE-BERT-all'))!;
  assert.equal(angleRow.batch, stsb.batchSize);
  assert.equal(angleRow.accumulation, stsb.gradAccumulation ?? 1);
  assert.ok(angleRow.length > 32 && angleRow.length <= stsb.maxLength!, `longest STS-B batch: ${angleRow.length} tokens`);
  assert.match(angleRow.data, /^real/);
});
