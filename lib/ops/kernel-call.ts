/**
 * Calling a fused kernel from lib/ops: tfjs's runKernel and customGrad with the argument types
 * written out.
 */
import * as tf from '@tensorflow/tfjs-core';

type Attrs = Record<string, number | boolean | string | number[]>;

/** tf.customGrad with the argument list written out (its declared type lumps inputs and save). */
export function customGrad(f: (...args: never[]) => { value: tf.Tensor; gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => tf.Tensor[] }) {
  return tf.customGrad(f as unknown as Parameters<typeof tf.customGrad>[0]);
}

export function runKernel(name: string, inputs: Record<string, tf.Tensor>, attrs: Attrs): tf.Tensor | tf.Tensor[] {
  return tf.engine().runKernel(name, inputs as unknown as tf.NamedTensorMap, attrs as unknown as tf.NamedAttrMap) as tf.Tensor | tf.Tensor[];
}
