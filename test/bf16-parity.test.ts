/**
 * The golden BERT training run (bert-tiny-seed1234, stsb_cosine_angle) replayed through the trainer
 * with `precision: 'bf16'` on the cpu backend, i.e. every matmul on bf16-rounded inputs (the CPU
 * emulation of the cuda path), passes the 16-bit tolerance (lib/parity/train.ts,
 * TRAIN_GOLDEN_TOLERANCE_16BIT) and stays within the deviation measured when it was set.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { MEASURED_16BIT, readGoldenTrainRuns, replayGoldenTrainRun, TRAIN_GOLDEN_TOLERANCE_16BIT } from '../lib/parity/train.js';
import { DATA_DIR, GOLDEN_DIR } from './helpers/env.js';

before(async () => {
  await initBackend('cpu', { quiet: true });
});

test('the golden training run replays in bf16 (emulated) within the 16-bit tolerance', async (t) => {
  if (!GOLDEN_DIR || !DATA_DIR) return t.skip('needs a golden set with train.json and the STS-B data (ANGLE_GOLDEN_DIR, ANGLE_DATA_DIR or ../shared)');
  const runs = readGoldenTrainRuns(GOLDEN_DIR);
  const name = 'stsb_cosine_angle';
  const run = runs.get(name);
  if (!run) return t.skip(`the golden set has no run ${name}`);
  const r = await replayGoldenTrainRun(GOLDEN_DIR, DATA_DIR, name, run, { precision: 'bf16' });
  const worstTerm = Math.max(r.worst.loss, ...Object.values(r.worst.terms));
  t.diagnostic(`${name} bf16: worst loss/term rel diff ${worstTerm.toExponential(2)}, dev Spearman |diff| ${r.devDiff.toExponential(2)} (tolerance ${TRAIN_GOLDEN_TOLERANCE_16BIT.lossRelative}, ${TRAIN_GOLDEN_TOLERANCE_16BIT.devSpearman})`);
  assert.deepEqual(r.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`), []);
  // The deviation the tolerance was set from, with room for other machines' float rounding.
  const measured = MEASURED_16BIT.bf16[name];
  assert.ok(worstTerm <= 10 * measured.term, `loss deviation ${worstTerm} vs measured ${measured.term}`);
});
