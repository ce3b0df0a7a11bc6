/**
 * The golden parity suites exactly as `npm run parity` runs them (forward, losses, eval), so the
 * test command covers every number of a golden set. Forward and losses run on the cpu backend
 * (the reference backend); the eval suite embeds ~37k sentences with the golden model, which the
 * wasm backend does in about half a minute and the plain-JS cpu backend in many minutes (see
 * environment.md), so it runs on wasm here. The forward suite is also run on wasm, which is what
 * makes the wasm eval numbers stand for the cpu ones.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { goldenSuites } from '../lib/parity/suites.js';
import { DATA_DIR, GOLDEN_DIR } from './helpers/env.js';

const skip = GOLDEN_DIR && DATA_DIR ? false : 'needs ANGLE_GOLDEN_DIR and ANGLE_DATA_DIR (e.g. ../shared/golden/bert-tiny-seed1234 and ../shared/data)';

async function runSuites(backend: string, only: Array<'forward' | 'losses' | 'eval'>) {
  await initBackend(backend, { quiet: true });
  const checks = [];
  for (const s of goldenSuites({ goldenDir: GOLDEN_DIR!, dataDir: DATA_DIR!, only })) checks.push(...(await s.run()));
  return checks;
}

test('forward and losses parity on the cpu backend', { skip }, async (t) => {
  const checks = await runSuites('cpu', ['forward', 'losses']);
  for (const c of checks) t.diagnostic(`${c.ok ? 'ok' : 'FAIL'} ${c.name}: ${c.detail}`);
  assert.ok(checks.length >= 25, `only ${checks.length} checks`);
  assert.deepEqual(checks.filter((c) => !c.ok), []);
});

test('forward parity and every eval.json number on the wasm backend', { skip }, async (t) => {
  const checks = await runSuites('wasm', ['forward', 'eval']);
  for (const c of checks) t.diagnostic(`${c.ok ? 'ok' : 'FAIL'} ${c.name}: ${c.detail}`);
  assert.ok(checks.some((c) => c.name.startsWith('eval/senteval_sts/cls/STS12')), 'STS checks present');
  assert.ok(checks.some((c) => c.name === 'eval/flickr30k_retrieval/strict_accuracy_at5'), 'Flickr check present');
  assert.deepEqual(checks.filter((c) => !c.ok), []);
});
