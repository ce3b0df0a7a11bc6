/**
 * Activation checkpointing (Chen et al. 2016, "Training Deep Nets with Sublinear Memory Cost";
 * PyTorch's torch.utils.checkpoint): y = fn(x) recorded as one op that keeps only its input x. The
 * forward pass runs fn without recording anything inside it; the backward pass runs fn again from
 * x, recording this time, and takes the gradients of Σ y·dy with respect to x and `params` through
 * the lean tape (lib/backend/lean-tape.ts). A transformer layer wrapped this way keeps [batch,
 * seq, hidden] floats per layer instead of every activation it saves, for one more forward pass
 * of compute.
 *
 * Requirements on fn, which the caller must meet:
 *   - deterministic: the recomputation must see what the first pass saw. Dropout draws its masks
 *     from seeds: fn must draw the same seeds both times (the models pass it a seed counter that
 *     restarts where the first pass started);
 *   - `params` lists the trainable variables fn reads (their gradients flow through this op);
 *     frozen ones it may read directly: they get no gradient and cost nothing here;
 *   - one tensor in, one tensor out (a layer's hidden states).
 * When no gradient is being recorded it is fn(x).
 */
import * as tf from '@tensorflow/tfjs-core';
import { leanGradients } from '../backend/lean-tape.js';
import { customGrad } from './kernel-call.js';

/**
 * fn(x, ...consts), keeping only x and `consts` for the backward pass, which recomputes fn (see
 * the top of the file). `consts` are the tensors fn reads besides x that the forward pass creates
 * and frees (an attention mask, rotary tables): the recomputation is given the kept ones, so fn
 * must read them from its arguments, not from its closure.
 */
export function checkpoint(
  fn: (x: tf.Tensor, ...consts: tf.Tensor[]) => tf.Tensor,
  x: tf.Tensor,
  params: readonly tf.Variable[],
  consts: readonly tf.Tensor[] = [],
): tf.Tensor {
  if (!tf.engine().isTapeOn()) return fn(x, ...consts);
  const op = customGrad((...args: never[]) => {
    const save = args[args.length - 1] as unknown as tf.GradSaveFunc;
    const xi = args[0] as unknown as tf.Tensor;
    save([xi, ...consts]);
    return {
      value: fn(xi, ...consts),
      gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
        const [xs, ...kept] = saved;
        const { value, grads } = leanGradients(() => fn(xs, ...kept), [xs, ...params], dy as tf.Tensor);
        value.dispose();
        // A variable fn did not read (or an x without a path to y) has gradient 0.
        return grads.map((g, i) => g ?? tf.zerosLike(i === 0 ? xs : params[i - 1]));
      },
    };
  });
  return op(x, ...params);
}

/**
 * `fn` with `model.dropoutCounter` rewound, on every call after the first, to where the first call
 * started, and put back afterwards: a checkpointed layer's recomputation draws the dropout masks
 * (seeds from the counter) its first pass drew, and the model's counter moves on only once.
 */
export function replayingDropout<T>(model: { dropoutCounter: number }, fn: (x: tf.Tensor, ...consts: tf.Tensor[]) => T): (x: tf.Tensor, ...consts: tf.Tensor[]) => T {
  const start = model.dropoutCounter;
  let calls = 0;
  return (x, ...consts) => {
    const now = model.dropoutCounter;
    model.dropoutCounter = start;
    try {
      return fn(x, ...consts);
    } finally {
      if (calls++ > 0) model.dropoutCounter = now;
    }
  };
}

/** The trainable variables among `params` whose names start with `prefix` (a layer's, adapters included). */
export function trainableUnder(params: ReadonlyMap<string, tf.Variable>, prefix: string): tf.Variable[] {
  return [...params].filter(([name, v]) => name.startsWith(prefix) && v.trainable).map(([, v]) => v);
}
