/**
 * Training parity on the cpu backend: every run of the golden set's train.json replayed from the
 * golden weights — each logged step's learning rate (exact), loss and objective terms (1e-3
 * relative), and the final dev Spearman (5e-3) — the check `npm run parity -- --only train` runs.
 * About two minutes per run on a 2-core machine (most of it the tfjs cpu backend's matmul).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { checkTrainGolden } from '../lib/parity/train.js';
import { DATA_DIR, GOLDEN_DIR } from './helpers/env.js';

const skip =
  GOLDEN_DIR && existsSync(join(GOLDEN_DIR, 'train.json')) && DATA_DIR
    ? false
    : 'needs ANGLE_GOLDEN_DIR (a golden set with train.json) and ANGLE_DATA_DIR (STS-B and MRPC files)';

before(async () => {
  await initBackend('cpu', { quiet: true });
});

test('golden training runs replay step for step on cpu', { skip, timeout: 1_800_000 }, async () => {
  const checks = await checkTrainGolden(GOLDEN_DIR!, DATA_DIR!, { log: (l) => console.log(l) });
  for (const c of checks) console.log(`${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}`);
  assert.ok(checks.length > 0);
  const failed = checks.filter((c) => !c.ok);
  assert.deepEqual(failed, [], failed.map((c) => `${c.name}: ${c.detail}`).join('\n'));
});
