/**
 * The golden tiny BERT loaded once for a test file (on the cpu backend), the few sentences the
 * truncation and Espresso tests encode, and the largest absolute difference between two vectors:
 * what test/truncation and test/espresso-onnx-layer-cut each wrote out before.
 */
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { initBackend } from '../../lib/backend/index.js';
import { loadModel, type LoadedModel } from '../../lib/models/auto.js';
import { GOLDEN_MODEL_DIR, NO_GOLDEN_MODEL } from './env.js';

export const SAMPLE_TEXTS = ['A man is playing a guitar.', 'Two dogs run across a snowy field while children watch.', 'ok', 'The cat sat on the mat.'];

/**
 * Registers before/after hooks that load the golden model on cpu (handing it to `loaded`, when the
 * golden set is there) and dispose it after the file's tests.
 */
export function useGoldenModel(loaded: (m: LoadedModel) => void): void {
  let m: LoadedModel | undefined;
  before(async () => {
    await initBackend('cpu', { quiet: true });
    if (NO_GOLDEN_MODEL) return;
    m = await loadModel(GOLDEN_MODEL_DIR!);
    loaded(m);
  });
  after(() => m?.model.dispose());
}

/** max |a[i] − b[i]| (the lengths must agree). */
export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length);
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
  return d;
}
