/**
 * A toy objective, written the way a new loss is: one file with its formula, options schema and
 * entry (the registration line is `registerLoss(TOY_LOSS)` in the test that uses it).
 *
 *   L = scale · mean over rows of ‖x_r‖²   (pairs; labels unused)
 *
 * With `layerwise` it also records how many per-layer embeddings the trainer fed it.
 */
import { tf } from '../../lib/backend/index.js';
import { defineLoss, withoutParameters } from '../../lib/losses/registry.js';

export interface ToyOptions {
  scale?: number;
  nested?: { offset?: number };
}

/** How many pooled layers each call received (for the layer-wise entry). */
export const layerCounts: number[] = [];

export const TOY_LOSS = defineLoss({
  name: 'toy-squared-norm',
  summary: 'scale · mean squared norm of the rows (a test objective)',
  options: { scale: true, nested: { offset: true } } as const satisfies Record<keyof ToyOptions, unknown>,
  kinds: ['pairs'],
  bind: (config: ToyOptions) =>
    withoutParameters((emb) => ({ total: tf.add(tf.mul(tf.mean(tf.sum(tf.square(emb), 1)), config.scale ?? 1), config.nested?.offset ?? 0) as tf.Scalar, terms: {} })),
});

export const TOY_LAYERWISE_LOSS = defineLoss({
  name: 'toy-layerwise',
  summary: 'mean squared norm summed over every layer (a test objective)',
  options: {},
  kinds: ['pairs'],
  inputs: ['layers'],
  bind: () =>
    withoutParameters((emb, b) => {
      layerCounts.push(b.layers?.length ?? 0);
      let total = tf.mean(tf.sum(tf.square(emb), 1)) as tf.Scalar;
      for (const l of b.layers ?? []) total = tf.add(total, tf.mean(tf.sum(tf.square(l), 1)));
      return { total, terms: {} };
    }),
});
