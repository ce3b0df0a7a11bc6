/**
 * Gradient clipping by global L2 norm, as `torch.nn.utils.clip_grad_norm_`: the norm over all
 * gradients together; every gradient is scaled by min(1, maxNorm / (norm + 1e-6)). The scaling is
 * computed on the device, so clipping costs no read-back; the norm is returned for the log.
 */
import { tf } from '../backend/index.js';

export function clipByGlobalNorm(grads: ReadonlyMap<string, tf.Tensor>, maxNorm: number): { grads: Map<string, tf.Tensor>; norm: tf.Scalar } {
  const names = [...grads.keys()];
  // tidy sees tensors inside arrays and plain objects (not Maps), so the result travels as a list.
  const { list, norm } = tf.tidy(() => {
    const squares = [...grads.values()].map((g) => tf.sum(tf.square(g)));
    const n = tf.sqrt(squares.length === 1 ? squares[0] : tf.addN(squares)) as tf.Scalar;
    const coef = tf.minimum(tf.div(tf.scalar(maxNorm), tf.add(n, 1e-6)), 1);
    return { list: [...grads.values()].map((g) => tf.mul(g, coef)), norm: n };
  });
  return { grads: new Map(names.map((k, i) => [k, list[i]])), norm };
}
