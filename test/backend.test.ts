import assert from 'node:assert/strict';
import { test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { gradientsRegistered } from '../lib/backend/gradients.js';
import { UnknownNameError } from '../lib/util/errors.js';

test('cpu backend starts, registers gradients and says what it runs on', async () => {
  const lines: string[] = [];
  const info = await initBackend('cpu', { log: (l) => lines.push(l) });
  assert.equal(info.name, 'cpu');
  assert.equal(tf.getBackend(), 'cpu');
  assert.ok(gradientsRegistered());
  assert.match(lines.join('\n'), /^backend: cpu on .+ \(tfjs-core \d+\.\d+\.\d+\)$/);
  // d/dx sum(erf(x) * x) = erf(x) + x * 2/sqrt(pi) * exp(-x^2): exercises the Erf and Mul gradients
  const x = tf.tensor1d([0.3, -1.2]);
  const g = tf.grad((v: tf.Tensor) => tf.sum(tf.mul(tf.erf(v), v)))(x).arraySync() as number[];
  const want = [0.3, -1.2].map((v) => erf(v) + (v * 2 * Math.exp(-v * v)) / Math.sqrt(Math.PI));
  g.forEach((v, i) => assert.ok(Math.abs(v - want[i]) < 1e-5, `grad ${i}: ${v} vs ${want[i]}`));
});

/** erf by its Maclaurin series: accurate to 1e-12 for |x| < 2. */
function erf(x: number): number {
  let sum = 0;
  let term = x;
  for (let n = 0; n < 60; n++) {
    sum += term / (2 * n + 1);
    term *= (-x * x) / (n + 1);
  }
  return (2 / Math.sqrt(Math.PI)) * sum;
}

test('wasm backend computes the same matmul', async () => {
  await initBackend('wasm', { quiet: true });
  try {
    assert.equal(tf.getBackend(), 'wasm');
    const a = tf.tensor2d([[1, 2], [3, 4]]);
    assert.deepEqual(tf.matMul(a, a).arraySync(), [[7, 10], [15, 22]]);
  } finally {
    await initBackend('cpu', { quiet: true });
  }
});

test('unavailable or unknown backends fail with a clear error', async () => {
  await assert.rejects(initBackend('gpu', { quiet: true }), (e: Error) => e instanceof UnknownNameError && /unknown backend 'gpu': expected one of cpu, wasm, cuda, tensorflow/.test(e.message));
  await assert.rejects(initBackend('tensorflow', { quiet: true }), /backend 'tensorflow' is unavailable: neither @tensorflow\/tfjs-node-gpu nor @tensorflow\/tfjs-node is installed/);
  await assert.rejects(initBackend('cuda', { quiet: true }), /backend 'cuda' is unavailable/);
  // the previous backend is still usable
  assert.equal(tf.getBackend(), 'cpu');
});

test('ANGLE_BACKEND chooses the backend when no argument is given', async () => {
  const before = process.env.ANGLE_BACKEND;
  process.env.ANGLE_BACKEND = 'nope';
  try {
    await assert.rejects(initBackend(undefined, { quiet: true }), /unknown backend 'nope'/);
  } finally {
    if (before === undefined) delete process.env.ANGLE_BACKEND;
    else process.env.ANGLE_BACKEND = before;
  }
});
