/**
 * Gradient functions of tfjs-core 4.22 replaced by ones that compute the same numbers without a
 * full-size tensor of ones.
 *
 * The gradients of Sum and Mean broadcast dy back to the input's shape as `dy · ones(x.shape)`
 * (tfjs-core src/gradients/Sum_grad.ts, Mean_grad.ts). `ones` fills a host array of that size and
 * uploads it, on every backend: for RMSNorm's mean over a LLaMA-7B batch of 14,400 tokens that is
 * 236 MB made, uploaded and multiplied per call, and on the shape-only backend it was 90 % of a
 * training step's time. Here dy is broadcast with tf.broadcastTo (one Tile kernel) instead:
 * x · 1 = x exactly in floating point, so every gradient is bit for bit what it was.
 */
import * as tf from '@tensorflow/tfjs-core';

function expandedDy(dy: tf.Tensor, x: tf.Tensor, axis: number | number[] | undefined): tf.Tensor {
  const axes = tf.util.parseAxisParam(axis ?? x.shape.map((_, k) => k), x.shape);
  const shape = x.shape.slice();
  for (const a of axes) shape[a] = 1;
  return tf.reshape(dy, shape);
}

const overrides: tf.GradConfig[] = [
  {
    kernelName: tf.Sum,
    inputsToSave: ['x'],
    gradFunc: (dy, saved, attrs) => {
      const [x] = saved;
      const { axis } = attrs as unknown as { axis: number | number[] };
      return { x: () => tf.broadcastTo(expandedDy(dy as tf.Tensor, x, axis), x.shape) };
    },
  },
  {
    kernelName: tf.Mean,
    inputsToSave: ['x'],
    gradFunc: (dy, saved, attrs) => {
      const [x] = saved;
      const { axis } = attrs as unknown as { axis: number | number[] };
      const axes = tf.util.parseAxisParam(axis ?? x.shape.map((_, k) => k), x.shape);
      const reduceSize = tf.util.sizeFromShape(tf.backend_util.computeOutAndReduceShapes(x.shape, axes)[1]);
      return { x: () => tf.div(tf.broadcastTo(expandedDy(dy as tf.Tensor, x, axis), x.shape), reduceSize) };
    },
  },
];

/** Replaces the gradients above (after tfjs's own are registered; idempotent). */
export function registerGradientOverrides(): void {
  for (const g of overrides) tf.registerGradient(g);
}
